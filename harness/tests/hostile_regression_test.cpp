// One regression test per defect class of issue 11 ("nothing crashes, nothing is lost"), at the level
// where each was fixed. Class 7 (float32 overflow of finite inputs) is in
// variants/tests/float32_overflow_test.cpp, and results that depend on the thread count in
// variants/tests/thread_independence_test.cpp and harness/train/tests/thread_independence_test.cpp. The
// hostile-input suite (tests/fuzz/hostile_inputs.py) runs the same classes through the commands.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <sys/wait.h>

#include "harness/check.hpp"
#include "datasets/line_reader.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/cli/option_checks.hpp"
#include "variants/checked_math.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/results_file.hpp"
#include "datasets/seqrec.hpp"
#include "variants/tests/temp_path.hpp"

namespace lobench {
namespace {

namespace fs = std::filesystem;

// A scratch folder, removed with everything in it.
struct Scratch {
  fs::path dir = testing::temp_path("hostile_" + std::to_string(std::rand()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::string contents(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A string attribute of `n` elements, fixed length `len` (0: variable length), null-padded.
void write_string_attr(hid_t obj, const char* name, hsize_t n, size_t len, const char* value) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, len == 0 ? H5T_VARIABLE : len);
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  h5::Handle space(n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  h5::Handle attr(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const size_t count = n == 0 ? 1 : n;
  if (len == 0) {
    std::vector<const char*> ptrs(count, value);
    H5Awrite(attr, type, ptrs.data());
  } else {
    std::string buf(count * len, '\0');
    for (size_t i = 0; i < count; ++i) std::memcpy(buf.data() + i * len, value, std::min(len, std::strlen(value)));
    H5Awrite(attr, type, buf.data());
  }
}

// Class 1: attributes of an unexpected shape or type overflowed a fixed buffer (1000 strings: SIGSEGV)
// or were silently accepted (2 strings); an array-valued number in a run file did the same.
TEST(HostileRegression, Class1AttributesMustHoldExactlyOneValue) {
  Scratch s;
  {
    auto f = h5::create_file(s / "a.h5");
    write_string_attr(f, "two", 2, 4, "sum");
    write_string_attr(f, "thousand", 1000, 0, "sum");
    const double xs[3] = {1, 2, 3};
    const hsize_t n = 3;
    h5::Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5::Handle a(H5Acreate2(f, "numbers", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    H5Awrite(a, H5T_NATIVE_DOUBLE, xs);
    h5::write_attr(f, "text", std::string("3"));
  }
  auto f = h5::open_file_read(s / "a.h5");
  EXPECT_NE(error_of([&] { h5::read_attr_string(f, "two"); }).find("'two' holds 2 values"), std::string::npos);
  EXPECT_NE(error_of([&] { h5::read_attr_string(f, "thousand"); }).find("1000 values"), std::string::npos);
  EXPECT_NE(error_of([&] { h5::read_attr_double(f, "numbers"); }).find("'numbers' holds 3 values"), std::string::npos);
  EXPECT_NE(error_of([&] { h5::read_attr_double(f, "text"); }).find("expected a number"), std::string::npos);
  EXPECT_NE(error_of([&] { h5::read_attr_string(f, "numbers"); }).find("holds 3 values"), std::string::npos);
}

// Class 2: dimension products that overflow int64 wrapped, and a 2 KB file claiming D = 2^62 was read
// out of bounds; headers are now checked (products, and bytes against what the file stores) first.
TEST(HostileRegression, Class2HugeClaimedShapesAreRefusedBeforeAllocating) {
  EXPECT_FALSE(checked_mul(int64_t(1) << 62, 4).has_value());
  EXPECT_FALSE(checked_product({int64_t(1) << 32, int64_t(1) << 32}).has_value());
  EXPECT_EQ(checked_product({1 << 20, 1 << 10, 8}).value(), int64_t(1) << 33);
  EXPECT_NE(error_of([] { cli::check_problem_shape(int64_t(1) << 32, int64_t(1) << 32, 50, 4, 2); }).find("P = B·N"),
            std::string::npos);
  Scratch s;
  for (auto [D, fragment] : {std::pair{int64_t(1) << 62, "overflows int64"}, {int64_t(1) << 20, "stores only"}}) {
    {
      auto f = h5::create_file(s / "big.h5");
      const hsize_t dims[2] = {4, hsize_t(D)}, chunk[2] = {1, 1024};
      h5::Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
      h5::Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
      H5Pset_chunk(props, 2, chunk);
      for (const char* name : {"A", "E"})
        h5::Handle(H5Dcreate2(f, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, props, H5P_DEFAULT), H5Dclose);
      const std::vector<int32_t> t(8, 0);
      h5::write(f, "targets", {4, 2}, t.data());
    }
    EXPECT_LT(fs::file_size(s / "big.h5"), 20000u);
    const std::string msg = error_of([&] { read_check_inputs(s / "big.h5"); });
    EXPECT_NE(msg.find("'A'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

// Class 3: `check` removed --out first (OUT = IN deleted the input; a directory or device node given as
// OUT was removed), `quantize` renamed over device nodes and left a stale OUT on failure.
TEST(HostileRegression, Class3OutputsNeverDestroyInputsOrSpecialFiles) {
  Scratch s;
  const std::string in = s / "in.h5";
  std::ofstream(in) << "input";
  EXPECT_NE(error_of([&] { io::OutputFile o(in, {in}); }).find("is the input"), std::string::npos);
  fs::create_hard_link(in, s / "hard.h5");
  EXPECT_NE(error_of([&] { io::OutputFile o(s / "hard.h5", {in}); }).find("is the input"), std::string::npos);
  fs::create_directory(s / "dir");
  EXPECT_NE(error_of([&] { io::OutputFile o(s / "dir", {in}); }).find("directory"), std::string::npos);
  ASSERT_EQ(mkfifo((s / "fifo").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { io::OutputFile o(s / "fifo", {in}); }).find("FIFO"), std::string::npos);
  fs::create_symlink("/dev/null", s / "null");
  EXPECT_NE(error_of([&] { io::OutputFile o(s / "null", {in}); }).find("device"), std::string::npos);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_directory(s / "dir"));
  EXPECT_EQ(contents(in), "input");

  // Not committed: the old OUT stays as it was and the temporary file is gone.
  const std::string out = s / "out.h5";
  std::ofstream(out) << "earlier result";
  std::string temp;
  {
    io::OutputFile o(out, {in});
    temp = o.temp_path();
    std::ofstream(temp) << "half written";
  }
  EXPECT_EQ(contents(out), "earlier result");
  EXPECT_FALSE(fs::exists(temp));
  {
    io::OutputFile o(out, {in});
    std::ofstream(o.temp_path()) << "new result";
    o.commit();
  }
  EXPECT_EQ(contents(out), "new result");
  for (const auto& e : fs::directory_iterator(s.dir))
    EXPECT_EQ(e.path().string().find(".partial"), std::string::npos) << e.path();

  // A run file that grows in place: never replaced, resumed only when it is HDF5.
  EXPECT_NE(error_of([&] { io::check_append_target(out, false); }).find("--resume"), std::string::npos);
  EXPECT_NE(error_of([&] { io::check_append_target(out, true); }).find("not an HDF5 file"), std::string::npos);
  EXPECT_NE(error_of([&] { io::check_append_target(s / "dir", true); }).find("directory"), std::string::npos);
  EXPECT_NO_THROW(io::check_append_target(s / "fresh.h5", false));
  h5::create_file(s / "run.h5");
  EXPECT_NO_THROW(io::check_append_target(s / "run.h5", true));

  // run_check keeps an existing OUT when IN is bad.
  std::ofstream(in) << "not HDF5";
  EXPECT_THROW(run_check(in, "chunked", out, 1, "test", 0, /*overwrite=*/true), std::exception);
  EXPECT_EQ(contents(out), "new result");
  // ... and without --overwrite an existing OUT is refused before IN is read.
  EXPECT_NE(error_of([&] { run_check(in, "chunked", out, 1, "test"); }).find("give --overwrite"), std::string::npos);
  EXPECT_EQ(contents(out), "new result");
}

// Class 4: thread counts were never validated (0 crashed, -1 asked libgomp for 900 GB).
TEST(HostileRegression, Class4ThreadCountsAreChecked) {
  for (int64_t t : {int64_t(0), int64_t(-1), int64_t(cli::kMaxThreads) + 1, int64_t(1) << 40})
    EXPECT_NE(error_of([&] { cli::check_threads("--threads", t); }).find("--threads"), std::string::npos) << t;
  EXPECT_EQ(cli::check_threads("--threads", 3), 3);
  EXPECT_GE(cli::default_threads(), 1);
}

// Class 5: work before the memory check (check read whole datasets first and had no limit). The
// prediction now comes from the headers, before any dataset is read.
TEST(HostileRegression, Class5CheckComparesItsPredictionWithTheLimitBeforeReading) {
  Scratch s;
  {
    auto f = h5::create_file(s / "in.h5");
    const std::vector<float> A(64 * 32, 0.5f), E(1000 * 32, 0.25f);
    const std::vector<int32_t> t(64 * 2, 3);
    h5::write(f, "A", {64, 32}, A.data());
    h5::write(f, "E", {1000, 32}, E.data());
    h5::write(f, "targets", {64, 2}, t.data());
  }
  const std::string msg = error_of([&] { run_check(s / "in.h5", "dense", s / "out.h5", 1, "test", 100000); });
  EXPECT_NE(msg.find("memory limit"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(s / "out.h5"));
  EXPECT_NO_THROW(run_check(s / "in.h5", "dense", s / "out.h5", 1, "test", int64_t(1) << 30));
  EXPECT_GT(cli::default_memory_limit(), 0);
}

// Class 6: fixed-length string attributes (h5py's np.bytes_(b'sum'), 3 bytes, no terminator) lost
// their last character ('sum' -> 'su').
TEST(HostileRegression, Class6FixedLengthStringsKeepTheirLastCharacter) {
  Scratch s;
  {
    auto f = h5::create_file(s / "s.h5");
    write_string_attr(f, "exact", 0, 3, "sum");     // scalar, exactly the string's length
    write_string_attr(f, "padded", 0, 8, "mean");   // null-padded
    write_string_attr(f, "one", 1, 3, "sum");       // a 1-element array, as h5py writes [b'sum']
    write_string_attr(f, "vlen", 0, 0, "sum");
  }
  auto f = h5::open_file_read(s / "s.h5");
  EXPECT_EQ(h5::read_attr_string(f, "exact").value(), "sum");
  EXPECT_EQ(h5::read_attr_string(f, "padded").value(), "mean");
  EXPECT_EQ(h5::read_attr_string(f, "one").value(), "sum");
  EXPECT_EQ(h5::read_attr_string(f, "vlen").value(), "sum");
}

// Class 8: bad option values were silently replaced by defaults or accepted.
TEST(HostileRegression, Class8BadOptionValuesAreRefusedWithTheirName) {
  for (const char* bad : {"nan", "inf", "0", "-1G", "1e30G", "12Q", "", "G", " 5G", "nanG"})
    EXPECT_NE(error_of([&] { cli::parse_memory_limit("--mem-limit", bad); }).find("--mem-limit"), std::string::npos)
        << "'" << bad << "'";
  EXPECT_EQ(cli::parse_memory_limit("--mem-limit", "20G"), int64_t(20) << 30);
  EXPECT_EQ(cli::parse_memory_limit("--mem-limit", "1.5GiB"), int64_t(3) << 29);
  EXPECT_EQ(cli::parse_memory_limit("--mem-limit", "123456B"), 123456);  // a bare number is refused (issue 31)
  EXPECT_NE(error_of([] { cli::parse_memory_limit("--mem-limit", "123456"); }).find("no unit"), std::string::npos);
  EXPECT_NE(error_of([] { cli::check_block_size("--block-v", -1); }).find("--block-v"), std::string::npos);
  EXPECT_EQ(cli::check_block_size("--block-v", 0), 0);
  for (double f : {std::nan(""), -0.5, 1.5, double(INFINITY)})
    EXPECT_NE(error_of([&] { cli::check_fraction("--pad-fraction", f); }).find("--pad-fraction"), std::string::npos);
  EXPECT_EQ(cli::check_fraction("--pad-fraction", 1.0), 1.0);
  EXPECT_NE(error_of([] { cli::check_positive("--L", 0); }).find("--L"), std::string::npos);
}

// Class 9: a FIFO given as --in blocked forever. Inputs must be regular files; the refusal comes at
// once (the test fails by timing out otherwise).
TEST(HostileRegression, Class9FifosAndDirectoriesAreRefusedWithoutBlocking) {
  Scratch s;
  ASSERT_EQ(mkfifo((s / "fifo").c_str(), 0600), 0);
  fs::create_directory(s / "dir");
  auto refused = std::async(std::launch::async, [&] {
    std::vector<std::string> msgs;
    msgs.push_back(error_of([&] { io::require_input_file(s / "fifo", "--in"); }));
    msgs.push_back(error_of([&] { read_check_inputs(s / "fifo"); }));
    msgs.push_back(error_of([&] { data::open_input_file(s / "fifo"); }));
    msgs.push_back(error_of([&] { io::require_input_file(s / "dir", "--in"); }));
    msgs.push_back(error_of([&] { data::open_input_file(s / "dir"); }));
    return msgs;
  });
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a read blocked";
  const auto msgs = refused.get();
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(msgs[i].find("FIFO"), std::string::npos) << msgs[i];
  for (size_t i = 3; i < 5; ++i) EXPECT_NE(msgs[i].find("directory"), std::string::npos) << msgs[i];
}

// ---------------------------------------------------------------------------------------------------
// Issue 23: the same guarantees on the surfaces added since (training commands, merge, MPI ranks, full
// disks, concurrent writers, h5py-made files). One test per class; tests/fuzz/surfaces.py runs them
// through the commands with a few hundred generated cases.

// Runs `command` under bash, stdout and stderr together; the exit status as the shell reports it
// (128 + N for a signal).
std::pair<int, std::string> shell(const std::string& command) {
  const std::string wrapped = "bash -c '" + command + "' 2>&1";
  FILE* p = popen(wrapped.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

const std::string kExe = LOBENCH_EXE;
const std::string kSeq = [] {
  std::string t;
  for (int u = 1; u <= 30; ++u) {
    t += std::to_string(u);
    for (int i = 0; i < 12; ++i) (t += ' ') += std::to_string(1 + (u * 7 + i * 3) % 40);  // (GCC 12 misreads " " + string as overlapping)
    t += "\n";
  }
  return t;
}();
std::string seqrec_argv(const std::string& data, const std::string& out) {
  return kExe + " train-seqrec --dataset " + data + " --L 1 --N 4 --B 2 --D 8 --heads 1 --layers 1 --steps 1 "
         "--eval-every -1 --threads 1 --quiet --mem-limit 1G --out " + out;
}

// Crashes (a): a corrupted global heap under a variable-length string attribute segfaulted inside
// HDF5 1.10 (H5HG_read). The read is tried apart first: a refusal naming the attribute, no crash.
TEST(HostileRegression, Issue23CorruptGlobalHeapIsRefusedNotACrash) {
  Scratch s;
  {
    auto f = h5::create_file(s / "heap.h5");
    h5::write_attr(f, "reduction", std::string("mean"));
  }
  std::string bytes = contents(s / "heap.h5");
  const size_t at = bytes.find("GCOL");
  ASSERT_NE(at, std::string::npos);
  for (int seed = 0; seed < 16; ++seed) {
    std::string bad = bytes;
    const uint64_t huge = (uint64_t(1) << 40) + uint64_t(seed) * 977;  // the first object's size
    std::memcpy(bad.data() + at + 24, &huge, 8);
    bad[at + 16 + seed % 8] = char(0xA5 ^ seed);
    std::ofstream(s / "bad.h5", std::ios::binary) << bad;
    const pid_t pid = fork();  // a crash here must fail the test, not end it
    if (pid == 0) {
      try {
        auto f = h5::open_file_read(s / "bad.h5");
        h5::read_attr_string(f, "reduction");
      } catch (const std::exception&) {
      }
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status)) << "seed " << seed << ": killed by signal " << WTERMSIG(status);
  }
}

// Crashes (b): train-seqrec on a full disk printed "cannot flush", then segfaulted at exit. Here the
// disk is a file-size limit (SIGXFSZ ignored, so writes fail with EFBIG as with ENOSPC).
TEST(HostileRegression, Issue23FullDiskEndsWithAMessageNotACrash) {
  Scratch s;
  std::ofstream(s / "seq.txt") << kSeq;
  for (const int kib : {0, 4, 16, 64}) {
    const auto [rc, out] = shell("trap \"\" XFSZ; ulimit -f " + std::to_string(kib) + "; exec " +
                                 seqrec_argv(s / "seq.txt", s / "out.h5") + " --steps 20 --eval-every 0 --overwrite");
    EXPECT_LT(rc, 128) << kib << " KiB: " << out;
    EXPECT_FALSE(fs::exists(s / "out.h5") && rc != 0) << kib << " KiB: a failed run left its file: " << out;
  }
}

// Hangs: ranks started with different options hung in mismatched collectives. They compare their
// options first and refuse together: harness/sweep/tests/rank_agreement_test.cpp (RankAgreement.*).

// Files destroyed (a): two writers of one path. The second is refused by OUT's lock, at once.
TEST(HostileRegression, Issue23SecondWriterOfOnePathIsRefused) {
  Scratch s;
  std::ofstream(s / "out.h5") << "the first writer's";
  {
    io::OutputLock first(s / "out.h5");
    const std::string e = error_of([&] { io::OutputLock second(s / "out.h5"); });
    EXPECT_NE(e.find("another lobench is writing it"), std::string::npos) << e;
    fs::create_symlink(s / "out.h5", s / "alias.h5");  // the same file under another name: the same lock
    EXPECT_NE(error_of([&] { io::OutputFile other(s / "alias.h5", {}); }).find("another lobench"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(s / "out.h5.lock"));  // released and removed
  EXPECT_NO_THROW(io::OutputLock again(s / "out.h5"));
  EXPECT_EQ(contents(s / "out.h5"), "the first writer's");
}

// Files destroyed (b): `run --resume` on a nearly full disk made the run file unreadable. It appends
// to a copy renamed at the end: the file keeps every earlier row whatever the disk does.
TEST(HostileRegression, Issue23ResumeOnAFullDiskKeepsTheRunFile) {
  Scratch s;
  const std::string run = kExe + " run --B 1 --N 4 --D 4 --L 2 --variants chunked --reps 1 --warmup 0 --threads 1 "
                                 "--mem-limit 1G --no-accuracy --out " + (s / "run.h5");
  ASSERT_EQ(shell(run + " --V 50,60").first, 0);
  const std::string before = contents(s / "run.h5");
  const int64_t kib = int64_t(before.size()) / 1024;
  for (const int64_t room : {int64_t(-1), int64_t(0), int64_t(2), int64_t(8)}) {
    const auto [rc, out] = shell("trap \"\" XFSZ; ulimit -f " + std::to_string(kib + room) + "; exec " + run +
                                 " --V 50,60,70,80,90,100,110,120,130,140,150,160,170,180 --resume");
    EXPECT_LT(rc, 128) << out;
    if (rc != 0) {
      EXPECT_EQ(contents(s / "run.h5"), before) << "room " << room << ": " << out;
    }
    EXPECT_GE(ResultsFile::read_all(s / "run.h5").size(), 2u) << out;
    EXPECT_EQ(shell("ls " + s.dir.string() + " | grep -c partial").second, "0\n");
  }
}

// Files destroyed (c): train-seqrec --out naming its own --dataset replaced the data.
TEST(HostileRegression, Issue23TrainSeqrecNeverWritesOverItsDataset) {
  Scratch s;
  std::ofstream(s / "seq.txt") << kSeq;
  fs::create_hard_link(s / "seq.txt", s / "link.txt");
  for (const std::string& out : std::vector<std::string>{s / "seq.txt", s / "link.txt"}) {
    const auto [rc, text] = shell(seqrec_argv(s / "seq.txt", out) + " --overwrite");
    EXPECT_EQ(rc, 2) << text;
    EXPECT_NE(text.find("dataset"), std::string::npos) << text;
  }
  EXPECT_EQ(contents(s / "seq.txt"), kSeq);
}

// Files destroyed (d): train-xmc replaced run files silently (no --overwrite; --seeds 0,0; symlinks).
TEST(HostileRegression, Issue23TrainXmcReplacesNothingUnasked) {
  Scratch s;
  const std::string xmc = kExe + " train-xmc --dataset synthetic:tiny --syn-scale 0.01 --epochs 1 --dim 8 --quiet "
                                 "--dry-run --threads 1 --mem-limit 1G --out-dir " + (s / "runs");
  ASSERT_EQ(shell(xmc).first, 0);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s / "runs")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string first = contents(files[0].string());
  auto [rc, out] = shell(xmc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--overwrite"), std::string::npos) << out;
  EXPECT_EQ(shell(xmc + " --seeds 0,0 --overwrite").first, 2);
  fs::remove(files[0]);
  std::ofstream(s / "precious") << "keep";
  fs::create_symlink(s / "precious", files[0]);
  std::tie(rc, out) = shell(xmc + " --overwrite");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("symlink"), std::string::npos) << out;
  EXPECT_EQ(contents(s / "precious"), "keep");
  std::ofstream(s / "layouts.h5") << "keep";
  EXPECT_EQ(shell(kExe + " train-xmc --layouts 1000 --layouts-out " + (s / "layouts.h5")).first, 2);
  EXPECT_EQ(contents(s / "layouts.h5"), "keep");
}

// A new-user trial (session 20): --layouts 0 printed the table's header and a row before an error naming
// an internal function; a --syn-scale far beyond memory ended in a bare std::bad_alloc. (1e13: beyond the
// address space, so that it fails at once whatever the kernel's overcommit setting.)
TEST(HostileRegression, TrainXmcRefusesBadSizesByTheirOptionBeforePrinting) {
  auto [rc, out] = shell(kExe + " train-xmc --layouts 0,-5");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(out, "lobench: error: --layouts: label counts must be >= 1 (got 0)\n");
  std::tie(rc, out) = shell(kExe + " train-xmc --dataset synthetic:tiny --syn-scale 1e13 --epochs 1 --quiet --dry-run "
                                   "--out-dir /nonexistent-lobench-test/runs");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("does not fit in this process's memory at --syn-scale 1e+13"), std::string::npos) << out;
  EXPECT_EQ(out.find("bad_alloc"), std::string::npos) << out;
}

// Garbage accepted (a): the seqrec memory model wrapped to −4.6e18 bytes for --D 3221225472.
TEST(HostileRegression, Issue23SeqrecMemoryPredictionNeverOverflows) {
  Scratch s;
  std::ofstream(s / "seq.txt") << kSeq;
  for (const char* D : {"3221225472", "4611686018427387904", "9223372036854775807"}) {
    const auto [rc, out] =
        shell(seqrec_argv(s / "seq.txt", s / "out.h5") + " --dry-run --D " + D + " --heads 1");
    EXPECT_EQ(rc, 2) << D << ": " << out;
    EXPECT_EQ(out.find("-4."), std::string::npos) << out;
  }
  EXPECT_FALSE(fs::exists(s / "out.h5"));
}

// Garbage accepted (b): merge read parts of schema_version 99, NaN, 2.7, −3 with a wrong layout.
TEST(HostileRegression, Issue23OnlyKnownSchemaVersionsAreRead) {
  Scratch s;
  { ResultsFile f(s / "run.h5", collect_provenance("t"), OutMode::create_new); }
  for (const double v : {99.0, std::nan(""), 2.7, -3.0, 0.0, double(io::kSchemaVersion + 1)}) {
    {
      auto f = h5::open_file_rw(s / "run.h5");
      h5::write_attr(f, "schema_version", v);
    }
    const std::string e = error_of([&] { ResultsFile::read_all(s / "run.h5"); });
    EXPECT_NE(e.find("schema_version"), std::string::npos) << v << ": " << e;
    EXPECT_NE(e.find("run.h5"), std::string::npos) << e;
  }
}

// Unclear refusals (a): an empty sequence file was "V must count at least one item"; a BOM "got '1'".
TEST(HostileRegression, Issue23SequenceFilesSayWhatIsWrong) {
  Scratch s;
  std::ofstream(s / "empty.txt") << "";
  EXPECT_NE(error_of([&] { data::read_sequences(s / "empty.txt"); }).find("empty"), std::string::npos);
  std::ofstream(s / "bom.txt") << "\xEF\xBB\xBF" << kSeq;
  EXPECT_NE(error_of([&] { data::read_sequences(s / "bom.txt"); }).find("byte-order mark"), std::string::npos);
  const auto [rc, out] = shell(seqrec_argv(s / "empty.txt", s / "out.h5"));
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("empty"), std::string::npos) << out;
  std::ofstream(s / "seq.txt") << kSeq;
  for (const char* lr : {"inf", "nan", "-1"}) {
    const auto [lrc, lout] = shell(seqrec_argv(s / "seq.txt", s / "out.h5") + " --lr " + lr);
    EXPECT_EQ(lrc, 2) << lout;
    EXPECT_NE(lout.find("--lr"), std::string::npos) << lout;
  }
  std::ofstream(s / "file") << "keep";
  const auto [frc, fout] = shell(seqrec_argv(s / "seq.txt", s / "file/out.h5"));
  EXPECT_EQ(frc, 2);
  EXPECT_NE(fout.find("not a folder"), std::string::npos) << fout;
}

// Unclear refusals (b): a filter this HDF5 lacks (h5py's LZF) read as "corrupt file?"; a virtual
// dataset as "the file stores only 0 bytes". The filter is named; a virtual dataset is read.
TEST(HostileRegression, Issue23FiltersAreNamedAndVirtualDatasetsRead) {
  Scratch s;
  const float data[6] = {1, 2, 3, 4, 5, 6};
  const hsize_t dims[2] = {2, 3};
  {
    auto f = h5::create_file(s / "lzf.h5");
    h5::Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(dcpl, 2, dims);
    const unsigned values[1] = {0};
    H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 1, values);  // recorded, skipped on write: not in this HDF5
    h5::Handle ds(H5Dcreate2(f, "A", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  }
  if (H5Zfilter_avail(32000) <= 0) {
    auto f = h5::open_file_read(s / "lzf.h5");
    const std::string e = error_of([&] { h5::read<float>(f, "A"); });
    EXPECT_NE(e.find("LZF"), std::string::npos) << e;
  }
  {
    auto src = h5::create_file(s / "src.h5");
    h5::write<float>(src, "rows", {2, 3}, data);
  }
  {
    auto f = h5::create_file(s / "vds.h5");
    h5::Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_virtual(dcpl, space, (s / "src.h5").c_str(), "rows", space);
    h5::Handle ds(H5Dcreate2(f, "A", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
  }
  {
    auto f = h5::open_file_read(s / "vds.h5");
    const auto a = h5::read<float>(f, "A");
    EXPECT_EQ(a.data, std::vector<float>(data, data + 6));
  }
  fs::remove(s / "src.h5");
  auto f = h5::open_file_read(s / "vds.h5");
  const std::string e = error_of([&] { h5::read<float>(f, "A"); });
  EXPECT_NE(e.find("src.h5"), std::string::npos) << e;
}

// Unclear refusals (c): LOBENCH_ISA=bogus failed every row instead of stopping at start.
TEST(HostileRegression, Issue23BadLobenchIsaIsAUsageError) {
  for (const char* v : {"bogus", "AVX2", "sse"}) {
    const auto [rc, out] = shell(std::string("LOBENCH_ISA=") + v + " " + kExe + " list");
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("LOBENCH_ISA"), std::string::npos) << out;
    EXPECT_NE(out.find("portable"), std::string::npos) << out;
  }
  EXPECT_EQ(shell("LOBENCH_ISA=portable " + kExe + " list").first, 0);
}

// An environment that holds OpenBLAS to other kernels than the CPU's best (a sandbox's
// OPENBLAS_CORETYPE=Haswell halved its SGEMM on a Zen 5) is said on the machine-limits line, not only in
// the run file's provenance: otherwise OpenBLAS just looks slow. (Where the CPU has neither AVX2 nor
// AVX-512, lobench lets OpenBLAS choose and there is nothing to say.)
TEST(HostileRegression, OpenBlasHeldToOtherKernelsIsSaidOnTheLimitsLine) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2: lobench lets OpenBLAS choose its kernels";
  const auto [rc, out] = shell("d=$(mktemp -d); OPENBLAS_CORETYPE=Prescott " + kExe +
                               " run --variants fused --B 1 --N 8 --V 300 --D 8 --L 2 --reps 1 --sgemm-n 64 --out $d/r.h5;"
                               " rc=$?; rm -rf $d; exit $rc");
  ASSERT_EQ(rc, 0) << out;
  if (out.find("OpenBLAS not measured") != std::string::npos) GTEST_SKIP() << "libopenblas.so.0 not installed";
  EXPECT_NE(out.find("(OPENBLAS_CORETYPE=Prescott from the environment; this CPU runs "), std::string::npos) << out;
}

}  // namespace
}  // namespace lobench
