// `lobench check` on good input and on each kind of bad input: every error names the dataset and the
// problem, and no OUT file is left behind.
#include "harness/check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "harness/io/h5_io.hpp"
#include "harness/io/tests/h5_content.hpp"
#include "harness/meters/products_choice.hpp"
#include "variants/tests/temp_path.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

namespace fs = std::filesystem;

struct Files {
  std::string in = testing::temp_path("check_in.h5");
  std::string out = testing::temp_path("check_out.h5");
  ~Files() {
    fs::remove(in);
    fs::remove(out);
  }
};

// Writes a valid input, then lets `mutate` spoil it.
void write_input(const std::string& path, const StepData& d, const std::function<void(hid_t)>& extra = nullptr,
                 bool skip_E = false) {
  auto f = h5::create_file(path);
  h5::write(f, "A", {d.P, d.D}, d.A.data());
  if (!skip_E) h5::write(f, "E", {d.V, d.D}, d.E.data());
  h5::write(f, "targets", {d.P, d.L}, d.targets.data());
  if (!d.weights.empty()) h5::write(f, "weights", {int64_t(d.weights.size())}, d.weights.data());
  h5::write_attr(f, "reduction", to_string(d.reduction));
  if (extra) extra(f);
}

StepData small() {
  Shape s{1, 13, 57, 6, 3, Reduction::sum, true};
  SyntheticSpec spec;
  spec.pad_fraction = 0.2;
  return make_synthetic(s, spec);
}

void expect_error(const Files& f, const std::string& fragment) {
  try {
    run_check(f.in, "chunked", f.out, 1, "test");
    ADD_FAILURE() << "expected an error mentioning: " << fragment;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "message: " << e.what();
  }
  EXPECT_FALSE(fs::exists(f.out)) << "an OUT file was left behind for: " << fragment;
  EXPECT_FALSE(fs::exists(f.out + ".partial"));
}

TEST(Check, WritesTheVariantsOutputs) {
  Files f;
  const StepData d = small();
  write_input(f.in, d);
  run_check(f.in, "chunked", f.out, 2, "test");
  auto out = h5::open_file_read(f.out);
  StepOutputs expect;
  expect.resize(d.P, d.V, d.D);
  CountingAllocator alloc;
  RunOptions options;
  options.threads = 2;
  RunContext ctx{alloc, options};
  {
    // Through the products check chose for this D, as check ran it: the other path sums each product in
    // another order (the library's where check measured it faster, as in a sanitizer build).
    const meters::Fp32ProductsForD products(d.D);
    Registry::instance().find("chunked")->run(d.view(), expect, ctx);
  }
  EXPECT_DOUBLE_EQ(h5::read<double>(out, "loss").data.at(0), expect.loss);
  EXPECT_EQ(h5::read<double>(out, "per_position_loss").shape, (std::vector<int64_t>{d.P}));
  auto dA = h5::read<float>(out, "dA");
  EXPECT_EQ(dA.shape, (std::vector<int64_t>{d.P, d.D}));
  EXPECT_EQ(dA.data, expect.dA);
  EXPECT_EQ(h5::read<float>(out, "dE").data, expect.dE);
  auto counts = h5::read<int64_t>(out, "counts");
  EXPECT_EQ(counts.shape, (std::vector<int64_t>{d.P, 4}));
  EXPECT_EQ(counts.data, expect.counts);
  EXPECT_EQ(h5::read_attr_string(out, "reduction").value(), "sum");
}

TEST(Check, RejectsEachKindOfBadInput) {
  Files f;
  const StepData good = small();

  write_input(f.in, good, nullptr, /*skip_E=*/true);
  expect_error(f, "dataset 'E' is missing");

  {
    StepData d = good;
    d.A[5] = std::nanf("");
    write_input(f.in, d);
    expect_error(f, "dataset 'A' holds a non-finite value");
  }
  {
    StepData d = good;
    d.E[7] = INFINITY;
    write_input(f.in, d);
    expect_error(f, "dataset 'E' holds a non-finite value");
  }
  {
    auto h = h5::create_file(f.in);  // A stored as float64
    std::vector<double> A(good.A.begin(), good.A.end());
    h5::write(h, "A", {good.P, good.D}, A.data());
    h5::write(h, "E", {good.V, good.D}, good.E.data());
    h5::write(h, "targets", {good.P, good.L}, good.targets.data());
  }
  expect_error(f, "dataset 'A' has dtype float64, expected float32");
  {
    auto h = h5::create_file(f.in);  // A of rank 1
    h5::write(h, "A", {good.P * good.D}, good.A.data());
    h5::write(h, "E", {good.V, good.D}, good.E.data());
    h5::write(h, "targets", {good.P, good.L}, good.targets.data());
  }
  expect_error(f, "dataset 'A' has rank 1, expected 2");
  {
    auto h = h5::create_file(f.in);  // E with the wrong D
    h5::write(h, "A", {good.P, good.D}, good.A.data());
    h5::write(h, "E", {good.V * good.D / 3, 3}, good.E.data());
    h5::write(h, "targets", {good.P, good.L}, good.targets.data());
  }
  expect_error(f, "dataset 'E' has D = 3 columns but 'A' has D = 6");
  {
    auto h = h5::create_file(f.in);  // targets for fewer positions
    h5::write(h, "A", {good.P, good.D}, good.A.data());
    h5::write(h, "E", {good.V, good.D}, good.E.data());
    h5::write(h, "targets", {good.P - 1, good.L}, good.targets.data());
  }
  expect_error(f, "dataset 'targets' has 12 rows but 'A' has P = 13");
  {
    StepData d = good;
    d.weights.pop_back();
    write_input(f.in, d);
    expect_error(f, "dataset 'weights' has 12 entries");
  }
  write_input(f.in, good, [](hid_t h) { h5::write_attr(h, "reduction", std::string("median")); });
  expect_error(f, "attribute 'reduction'");
  {
    std::ofstream junk(f.in, std::ios::binary);
    junk << "this is not an HDF5 file";
  }
  expect_error(f, "cannot open");
  fs::remove(f.in);
  expect_error(f, "cannot be read: No such file");
}

// `check` outputs do not depend on --threads, bit for bit, for every CPU variant (issue 11).
TEST(Check, OutputsAreBitIdenticalForOneAndTwoThreads) {
  Files f;
  const StepData d = make_synthetic(Shape{3, 50, 4099, 24, 5, Reduction::mean, true}, SyntheticSpec{});
  write_input(f.in, d);
  for (const char* variant : {"reference", "dense", "chunked", "fused"}) {
    std::vector<float> dA[2], dE[2];
    std::vector<double> loss[2], ppl[2];
    for (int threads : {1, 2}) {
      run_check(f.in, variant, f.out, threads, "test", 0, /*overwrite=*/true);
      auto out = h5::open_file_read(f.out);
      dA[threads - 1] = h5::read<float>(out, "dA").data;
      dE[threads - 1] = h5::read<float>(out, "dE").data;
      loss[threads - 1] = h5::read<double>(out, "loss").data;
      ppl[threads - 1] = h5::read<double>(out, "per_position_loss").data;
    }
    EXPECT_EQ(dA[0], dA[1]) << variant;
    EXPECT_EQ(dE[0], dE[1]) << variant;
    EXPECT_EQ(loss[0], loss[1]) << variant;
    EXPECT_EQ(ppl[0], ppl[1]) << variant;
  }
}

// An existing OUT is refused, untouched, unless --overwrite; with it, it is replaced.
TEST(Check, ExistingOutIsRefusedUnlessOverwrite) {
  Files f;
  write_input(f.in, small());
  std::ofstream(f.out) << "an earlier result";
  try {
    run_check(f.in, "chunked", f.out, 1, "test");
    ADD_FAILURE() << "an existing OUT was not refused";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("exists; give --overwrite"), std::string::npos) << e.what();
  }
  std::ifstream kept(f.out);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()), "an earlier result");
  const std::string cli = std::string(LOBENCH_EXE) + " check --in " + f.in + " --variant chunked --out " + f.out;
  EXPECT_NE(std::system((cli + " 2>/dev/null >/dev/null").c_str()), 0);
  EXPECT_EQ(std::system((cli + " --overwrite >/dev/null").c_str()), 0);
  EXPECT_NO_THROW(h5::read<float>(h5::open_file_read(f.out), "dA"));
}

// The output's content is what lobench wrote before its writer moved to io::RunFileWriter (issue 42):
// data/check_chunked.h5, written by lobench 5f272d9 (`check --variant chunked --threads 1`) from
// data/check_in.h5, has the same groups, datasets, attributes and types; the numbers that depend on the
// CPU (the loss, the gradients, the products chosen, the peak) are compared by type and shape only, the
// counts exactly.
TEST(Check, WritesTheContentEarlierLobenchWrote) {
  Files f;
  const std::string data = std::string(LOBENCH_SOURCE_DIR) + "/harness/tests/data/";
  run_check(data + "check_in.h5", "chunked", f.out, 1, "test");
  const std::set<std::string> cpu_dependent = {"input", "loss", "per_position_loss", "dA", "dE",
                                               "peak_working_bytes", "fp32_products", "fp32_products_basis"};
  EXPECT_EQ(testing::content_differences(testing::h5_content(f.out, cpu_dependent, /*without_provenance=*/true),
                                               testing::h5_content(data + "check_chunked.h5", cpu_dependent, /*without_provenance=*/true)),
            "");
}

TEST(Check, CommandLineExitsNonZeroAndPrintsTheProblem) {
  Files f;
  StepData d = small();
  d.A[0] = std::nanf("");
  write_input(f.in, d);
  const std::string log = testing::temp_path("check_cli.log");
  const std::string cmd = std::string(LOBENCH_EXE) + " check --in " + f.in + " --variant chunked --out " + f.out + " 2> " + log;
  const int status = std::system(cmd.c_str());
  EXPECT_NE(status, 0);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("dataset 'A' holds a non-finite value"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(f.out));
  fs::remove(log);
}

}  // namespace
}  // namespace lobench
