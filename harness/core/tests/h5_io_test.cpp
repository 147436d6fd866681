#include "h5_io.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/temp_path.hpp"

namespace lobench {
namespace {

using testing::temp_path;

TEST(H5Io, RoundTripsDatasetsAndAttributes) {
  const std::string path = temp_path("h5_roundtrip.h5");
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1e-30f};
  const std::vector<int32_t> t = {1, -1, 5};
  {
    auto f = h5::create_file(path);
    h5::write(f, "A", {2, 3}, a.data());
    h5::write(f, "targets", {3}, t.data());
    h5::write_scalar(f, "loss", 0.693);
    h5::write_attr(f, "reduction", std::string("sum"));
    h5::write_attr(f, "gemm_gflops", 123.5);
  }
  auto f = h5::open_file_read(path);
  auto A = h5::read<float>(f, "A");
  ASSERT_EQ(A.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(A.data, a);
  EXPECT_EQ(h5::read<int32_t>(f, "targets").data, t);
  EXPECT_EQ(h5::read_attr_string(f, "reduction").value(), "sum");
  EXPECT_DOUBLE_EQ(h5::read_attr_double(f, "gemm_gflops").value(), 123.5);
  EXPECT_FALSE(h5::read_attr_string(f, "absent").has_value());
  std::filesystem::remove(path);
}

TEST(H5Io, ErrorsNameTheDatasetAndTheProblem) {
  const std::string path = temp_path("h5_errors.h5");
  const std::vector<double> d = {1.0, 2.0};
  {
    auto f = h5::create_file(path);
    h5::write(f, "A", {2}, d.data());
  }
  auto f = h5::open_file_read(path);
  try {
    h5::read<float>(f, "A");
    FAIL() << "float64 read as float32";
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'A' has dtype float64, expected float32"), std::string::npos) << e.what();
  }
  try {
    h5::read<float>(f, "E");
    FAIL() << "missing dataset read";
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'E' is missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h5::open_file_read(temp_path("does_not_exist.h5")), h5::Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lobench
