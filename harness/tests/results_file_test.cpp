#include "results_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/temp_path.hpp"

namespace lobench {
namespace {

TEST(ResultsFile, AppendsFlushesAndResumes) {
  const std::string path = testing::temp_path("results_file_test.h5");
  Provenance prov = collect_provenance("test argv");
  {
    ResultsFile f(path, prov, false);
    ResultRow r;
    r.set_variant("chunked");
    r.set_backend("cpu");
    r.V = 100;
    r.set_status("ok");
    r.time_samples_s[0] = 0.5;
    f.append(r);
    r.V = 200;
    r.set_status("skipped");
    r.set_reason("OOM predicted: 3 GiB > 2 GiB");
    f.append(r);
    // Flushed per row: a reader sees both rows before the writer closes.
    const auto rows = ResultsFile::read_all(path);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_STREQ(rows[1].reason, "OOM predicted: 3 GiB > 2 GiB");
    EXPECT_EQ(rows[1].row_id, 1);
    EXPECT_DOUBLE_EQ(rows[0].time_samples_s[0], 0.5);
  }
  {
    ResultsFile f(path, prov, true);
    EXPECT_EQ(f.rows(), 2);
    ResultRow r;
    r.set_variant("chunked");
    r.set_backend("cpu");
    r.V = 100;
    EXPECT_TRUE(f.has(r.key()));
    r.V = 300;
    EXPECT_FALSE(f.has(r.key()));
    f.append(r);
  }
  const auto rows = ResultsFile::read_all(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].row_id, 2);
  auto file = h5::open_file_read(path);
  EXPECT_EQ(h5::read_attr_string(file, "argv").value(), "test argv");
  EXPECT_DOUBLE_EQ(h5::read_attr_double(file, "resume_count").value(), 1.0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lobench
