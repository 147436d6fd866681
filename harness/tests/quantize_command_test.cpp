// `lobench quantize` end to end through the executable: codes equal to ml_dtypes' cast for the
// documented e4m3fn corner cases, and clear failures that leave no OUT behind.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "harness/io/h5_io.hpp"
#include "harness/io/tests/h5_content.hpp"
#include "variants/tests/temp_path.hpp"

namespace lobench {
namespace {

namespace fs = std::filesystem;

int quantize(const std::string& args, std::string* err = nullptr) {
  const std::string log = testing::temp_path("quantize.log");
  const int rc = std::system((std::string(LOBENCH_EXE) + " quantize " + args + " > /dev/null 2> " + log).c_str());
  if (err) {
    std::ifstream f(log);
    err->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  fs::remove(log);
  return rc;
}

TEST(QuantizeCommand, WritesValuesAndCodesLikeMlDtypes) {
  const std::string in = testing::temp_path("q_in.h5"), out = testing::temp_path("q_out.h5");
  const std::vector<float> x = {448.0f, 464.0f, 465.0f, INFINITY, -2.5f, 1e-3f};
  {
    auto f = h5::create_file(in);
    h5::write(f, "x", {2, 3}, x.data());
  }
  ASSERT_EQ(quantize("--to e4m3fn --rounding nearest_even --in " + in + " --out " + out), 0);
  auto f = h5::open_file_read(out);
  const auto codes = h5::read<uint8_t>(f, "codes");
  EXPECT_EQ(codes.shape, (std::vector<int64_t>{2, 3}));
  // 448 and the tie 464 -> 0x7E (448); above 464 and +inf -> 0x7F (NaN); -2.5 -> 0xC2; 1e-3 -> 0x01.
  EXPECT_EQ(codes.data, (std::vector<uint8_t>{0x7E, 0x7E, 0x7F, 0x7F, 0xC2, 0x01}));
  const auto values = h5::read<float>(f, "values");
  EXPECT_EQ(values.data[0], 448.0f);
  EXPECT_TRUE(std::isnan(values.data[2]));
  EXPECT_EQ(values.data[4], -2.5f);
  fs::remove(in);
  fs::remove(out);
}

// The file is what lobench wrote before its writer moved to io::RunFileWriter (issue 42): the files in
// data/, written by lobench 5f272d9 from data/quantize_in.h5 with these options, hold the same values,
// codes and attributes, of the same types, but for the input's path.
TEST(QuantizeCommand, WritesTheFileEarlierLobenchWrote) {
  const std::string data = std::string(LOBENCH_SOURCE_DIR) + "/harness/tests/data/";
  const std::string out = testing::temp_path("q_same.h5");
  for (const auto& [options, kept] : {std::pair{"--to e4m3fn --rounding stochastic --seed 7", "quantize_e4m3fn_sr.h5"},
                                      std::pair{"--to bf16 --rounding nearest_even", "quantize_bf16.h5"}}) {
    ASSERT_EQ(quantize(std::string(options) + " --overwrite --in " + data + "quantize_in.h5 --out " + out), 0) << options;
    EXPECT_EQ(testing::content_differences(testing::h5_content(out, {"source"}),
                                               testing::h5_content(data + kept, {"source"})),
            "") << options;
  }
  fs::remove(out);
}

TEST(QuantizeCommand, BadInputFailsClearlyAndLeavesNoOutput) {
  const std::string in = testing::temp_path("q_bad_in.h5"), out = testing::temp_path("q_bad_out.h5");
  const std::vector<double> xd = {1.0, 2.0};
  {
    auto f = h5::create_file(in);
    h5::write(f, "x", {2}, xd.data());
  }
  std::string err;
  EXPECT_NE(quantize("--to e4m3fn --rounding nearest_even --in " + in + " --out " + out, &err), 0);
  EXPECT_NE(err.find("'x'"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(quantize("--to no_such --rounding nearest_even --in " + in + " --out " + out, &err), 0);
  EXPECT_NE(err.find("no_such"), std::string::npos) << err;
  EXPECT_NE(quantize("--to tf32 --rounding nearest_even --in " + in + " --out " + out, &err), 0);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  fs::remove(in);
}

// --format was quantize's number format while every other command's --format is what stdout gets: it is
// now --to, and the old spelling works for one release with a note on stderr.
TEST(QuantizeCommand, TheOldFormatSpellingStillWorksWithANote) {
  const std::string in = testing::temp_path("q_old_in.h5"), out = testing::temp_path("q_old_out.h5");
  const std::vector<float> x = {1.0f, 2.5f};
  {
    auto f = h5::create_file(in);
    h5::write(f, "x", {2}, x.data());
  }
  std::string err;
  ASSERT_EQ(quantize("--format e4m3fn --in " + in + " --out " + out, &err), 0) << err;
  EXPECT_NE(err.find("--format is deprecated"), std::string::npos) << err;
  EXPECT_NE(err.find("--to"), std::string::npos) << err;
  {
    auto f = h5::open_file_read(out);
    EXPECT_NE(h5::read_attr_string(f, "format").value().find("e4m3fn"), std::string::npos);
  }
  EXPECT_NE(quantize("--in " + in + " --out " + out + ".2", &err), 0);
  EXPECT_NE(err.find("--to FORMAT is required"), std::string::npos) << err;
  fs::remove(in);
  fs::remove(out);
}

}  // namespace
}  // namespace lobench
