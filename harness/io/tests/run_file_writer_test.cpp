// The one writer of HDF5 files (harness/io/run_file_writer.hpp): when OUT appears, what a reader sees while
// the run goes on, what an unfinished run leaves, tables and records declared by column lists, and files
// written whole (a check's output, a quantized array, a checkpoint): OUT replaced only by a complete file,
// never on an error, a full disk or an OUT that is an input.
#include "harness/io/run_file_writer.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "variants/tests/temp_path.hpp"

namespace lobench::io {
namespace {

namespace fs = std::filesystem;

#define TEST_ROW_COLUMNS(X)                      \
  X(int64_t, step, 0, "", "the step")            \
  X(double, loss, 0, "", "its loss")             \
  X(FixedText<8>, tag, {}, "", "a label")

struct TestRow {
  LOBENCH_ROW_MEMBERS(TEST_ROW_COLUMNS)
  static const std::vector<Column>& columns() {
    static const std::vector<Column> c = LOBENCH_ROW_COLUMNS(TestRow, TEST_ROW_COLUMNS);
    return c;
  }
};

TestRow row(int64_t step, double loss, const char* tag) {
  TestRow r;
  r.step = step;
  r.loss = loss;
  r.tag.set(tag);
  return r;
}

std::vector<TestRow> read_rows(const std::string& path, const std::string& table = "rows") {
  h5::Handle f = h5::open_file_read(path);
  return h5::read_table<TestRow>(f, table, compound_type(sizeof(TestRow), TestRow::columns()), path);
}

// The folder's entries other than `keep` (leftover temporary or lock files).
std::vector<std::string> others(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

std::string contents(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

std::string fresh_dir(const std::string& name) {
  const std::string d = testing::temp_path(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A row's notes join with "; " (the sweep adds the CPU-wait, drift, memory and fp8-scale notes to `reason`).
TEST(FixedText, AddJoinsNotesAfterOrBeforeTheText) {
  FixedText<64> t;
  t.add("first");
  EXPECT_EQ(t.str(), "first");
  t.add("second");
  EXPECT_EQ(t.str(), "first; second");
  t.add("zeroth", /*first=*/true);
  EXPECT_EQ(t.str(), "zeroth; first; second");
  FixedText<8> small;
  small.add("abcdef");
  small.add("gh");
  EXPECT_EQ(small.str(), "abcdef;");  // (cut at the capacity, as set() cuts)
}

TEST(RunFileWriter, AtFinishWritesBesideOutAndReplacesItOnlyWhenComplete) {
  const std::string dir = fresh_dir("writer_at_finish");
  const std::string out = dir + "/run.h5";
  std::ofstream(out) << "an earlier run";  // replaced only by a complete file
  const Provenance prov = collect_provenance("test");
  {
    RunFileWriter w(out, "--out");
    w.create(prov, {TableSpec::of<TestRow>("rows", 4)}, Publish::at_finish, {},
             [](hid_t f) { h5::write_attr(f, "schema", std::string("test")); });
    ASSERT_NE(w.writing_path(), out);
    w.append("rows", row(1, 0.5, "a"));
    w.append("rows", row(2, 0.25, "b"));
    // Readable while the run goes on, in the temporary file; OUT is still the earlier one.
    const auto live = read_rows(w.writing_path());
    ASSERT_EQ(live.size(), 2u);
    EXPECT_EQ(live[1].tag.str(), "b");
    EXPECT_EQ(std::ifstream(out).get(), 'a');
    w.set_attr("status", std::string("ok"));
    w.finish("2026-01-01T00:00:00Z");
  }
  const auto rows = read_rows(out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 1);
  EXPECT_DOUBLE_EQ(rows[1].loss, 0.25);
  h5::Handle f = h5::open_file_read(out);
  EXPECT_EQ(h5::read_attr_string(f, "status").value(), "ok");
  EXPECT_EQ(h5::read_attr_string(f, "end_utc").value(), "2026-01-01T00:00:00Z");
  EXPECT_EQ(h5::read_attr_string(f, "argv").value(), "test");  // provenance
  EXPECT_TRUE(others(dir, "run.h5").empty());  // no temporary or lock file left
  fs::remove_all(dir);
}

TEST(RunFileWriter, AnUnfinishedRunLeavesOutAsItWasAndNothingBehind) {
  const std::string dir = fresh_dir("writer_unfinished");
  const std::string out = dir + "/run.h5";
  std::ofstream(out) << "an earlier run";
  try {
    RunFileWriter w(out, "--out");
    w.create(collect_provenance("test"), {TableSpec::of<TestRow>("rows", 4)}, Publish::at_finish, {}, [](hid_t) {});
    w.append("rows", row(1, 0.5, "a"));
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  std::ifstream in(out);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "an earlier run");
  EXPECT_TRUE(others(dir, "run.h5").empty());
  fs::remove_all(dir);
}

// A file cut short (a copy interrupted, a full disk long ago): --resume names OUT, not the copy it made to
// append to, leaves OUT byte for byte and removes the copy.
TEST(RunFileWriter, ResumingAFileThatDoesNotOpenNamesItAndChangesNothing) {
  const std::string dir = fresh_dir("writer_resume_corrupt");
  const std::string out = dir + "/run.h5";
  {
    RunFileWriter w(out, "--out");
    w.create(collect_provenance("test"), {TableSpec::of<TestRow>("rows", 4)}, Publish::at_start, {}, [](hid_t) {});
    w.append("rows", row(1, 0.5, "a"));
    w.finish("2026-12-07T00:00:00Z");
  }
  fs::resize_file(out, 700);
  std::ifstream before_in(out, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(before_in)), std::istreambuf_iterator<char>());
  try {
    RunFileWriter w(out, "--out");
    w.resume();
    FAIL() << "a file cut short was resumed";
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--resume '" + out + "': cannot open it"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(".partial-"), std::string::npos) << e.what();
  }
  std::ifstream after_in(out, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>()), before);
  EXPECT_TRUE(others(dir, "run.h5").empty());
  fs::remove_all(dir);
}

TEST(RunFileWriter, AtStartPublishesAtOnceAndAppendsInPlace) {
  const std::string dir = fresh_dir("writer_at_start");
  const std::string out = dir + "/run.h5";
  {
    RunFileWriter w(out, "--out");
    w.create(collect_provenance("test"), {TableSpec::of<TestRow>("rows", 4)}, Publish::at_start, {}, [](hid_t) {});
    EXPECT_EQ(w.writing_path(), out);
    EXPECT_TRUE(read_rows(out).empty());  // OUT opens at once, with its empty tables
    w.append("rows", row(7, 1.5, "x"));
    EXPECT_EQ(read_rows(out).size(), 1u);  // every row readable at OUT as soon as appended
    // A second writer of the same OUT is refused by its lock.
    EXPECT_THROW({ RunFileWriter second(out, "--out"); }, PathError);
    w.finish("2026-01-01T00:00:00Z");
  }
  EXPECT_EQ(read_rows(out).size(), 1u);
  fs::remove_all(dir);
}

TEST(RunFileWriter, TablesAddedLaterCountTablesAndRecordsAsAttributes) {
  const std::string dir = fresh_dir("writer_tables");
  const std::string out = dir + "/run.h5";
  {
    RunFileWriter w(out, "--out");
    w.create(collect_provenance("test"), {TableSpec::counts("hist", 3, 4)}, Publish::at_finish, {}, [](hid_t) {});
    const int64_t counts[3] = {1, 2, 3};
    w.append({{"hist", counts, sizeof counts}});
    w.add_table(TableSpec::of<TestRow>("later", 4));
    w.append("later", row(3, 2.0, "z"));
    const TestRow record = row(5, 0.125, "rec");
    w.set_record_attrs("memory", "predicted_", &record, TestRow::columns());
    EXPECT_THROW(w.append("missing", record), h5::Error);
    w.finish("2026-01-01T00:00:00Z");
  }
  h5::Handle f = h5::open_file_read(out);
  const auto hist = h5::read<int64_t>(f, "hist");
  EXPECT_EQ(hist.shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(hist.data, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(read_rows(out, "later").at(0).step, 3);
  h5::Handle g(H5Gopen2(f, "memory", H5P_DEFAULT), H5Gclose);
  EXPECT_EQ(h5::read_attr_int64(g, "predicted_step").value(), 5);
  EXPECT_DOUBLE_EQ(h5::read_attr_double(g, "predicted_loss").value(), 0.125);
  EXPECT_EQ(h5::read_attr_string(g, "predicted_tag").value(), "rec");
  fs::remove_all(dir);
}

TEST(RunFileWriter, AWholeFileReplacesOutOnlyWhenCompleteAndOnlyWhenAsked) {
  const std::string dir = fresh_dir("writer_whole");
  const std::string out = dir + "/out.h5", in = dir + "/in.h5";
  std::ofstream(out) << "an earlier file";
  std::ofstream(in) << "an input";
  {  // an OUT there is refused unless overwriting, before anything is written
    RunFileWriter w(out, "--out");
    EXPECT_THROW(w.begin_whole({}, /*overwrite=*/false), PathError);
  }
  {  // never an input (the same file under another name too)
    fs::create_symlink(in, dir + "/alias.h5");
    RunFileWriter w(dir + "/alias.h5", "--out");
    EXPECT_THROW(w.begin_whole({in}, /*overwrite=*/true), PathError);
  }
  EXPECT_EQ(contents(out), "an earlier file");
  EXPECT_EQ(contents(in), "an input");
  {
    RunFileWriter w(out, "--out");
    w.begin_whole({in}, /*overwrite=*/true);
    EXPECT_EQ(contents(out), "an earlier file");  // nothing replaced before the content is written
    w.write_whole([](hid_t f) { h5::write_attr(f, "format", std::string("e4m3fn")); });
    EXPECT_THROW(w.write_whole([](hid_t) {}), std::logic_error);  // one file, written once
  }
  h5::Handle f = h5::open_file_read(out);
  EXPECT_EQ(h5::read_attr_string(f, "format").value(), "e4m3fn");
  EXPECT_FALSE(h5::read_attr_string(f, "end_utc"));  // nothing added to what the content wrote
  EXPECT_FALSE(h5::read_attr_string(f, "argv"));
  f.reset();
  const std::vector<std::string> left = others(dir, "out.h5");
  EXPECT_EQ(left.size(), 2u) << "a temporary or lock file was left";  // in.h5 and alias.h5 only
  fs::remove_all(dir);
}

TEST(RunFileWriter, AWholeFileThatFailsLeavesOutAsItWasAndNothingBehind) {
  const std::string dir = fresh_dir("writer_whole_fails");
  const std::string out = dir + "/out.h5";
  {
    RunFileWriter w(out, "--out");
    w.begin_whole({}, true);
    w.write_whole([](hid_t f) { h5::write_attr(f, "epoch", int64_t(1)); });
  }
  const std::string before = contents(out);
  try {  // the content fails half-way (an exception while writing)
    RunFileWriter w(out, "--out");
    w.begin_whole({}, true);
    w.write_whole([](hid_t f) {
      h5::write_attr(f, "epoch", int64_t(2));
      throw std::runtime_error("the write failed");
    });
    ADD_FAILURE() << "write_whole did not pass the exception on";
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(contents(out), before);
  EXPECT_TRUE(others(dir, "out.h5").empty());
  // A full disk: a file-size limit below the content (SIGXFSZ ignored, so writes fail with EFBIG as
  // they would with ENOSPC), lifted again afterwards.
  rlimit was{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &was), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = was;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    RunFileWriter w(out, "--out");
    w.begin_whole({}, true);
    const std::vector<double> big(1 << 16, 1.0);  // 512 KiB
    w.write_whole([&](hid_t f) { h5::write<double>(f, "parameters", {int64_t(big.size())}, big.data()); });
  } catch (const std::exception&) {
    threw = true;
  }
  setrlimit(RLIMIT_FSIZE, &was);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw) << "a write past the disk's room must fail";
  EXPECT_EQ(contents(out), before);
  EXPECT_TRUE(others(dir, "out.h5").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lobench::io
