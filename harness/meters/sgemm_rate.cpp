#include "harness/meters/sgemm_rate.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <cstdlib>
#include <limits>
#include <functional>
#include <vector>

#include "harness/measure.hpp"
#include "variants/cpu/openblas.hpp"
#include "variants/cpu/sgemm.hpp"

namespace lobench::meters {
namespace {

// One untimed product, then timed ones until at least 3 and 1 s of them, at most 20 (no CV target:
// a machine limit is a rate, and its median over 1 s is what is asked).
Samples time_products(const std::function<void()>& product) {
  RepPolicy policy;
  policy.cv_target = std::numeric_limits<double>::infinity();
  return collect_samples([&] { return seconds_of(product); }, 1, policy);
}

SgemmRate rate_of(const Samples& s, int64_t n, std::string library) {
  SgemmRate r;
  r.n = n;
  r.samples = int(s.seconds.size());
  r.gflops = 2.0 * double(n) * double(n) * double(n) / s.median() / 1e9;
  r.library = std::move(library);
  return r;
}

}  // namespace

SgemmRate eigen_square_sgemm(int64_t n, int threads) {
  using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic>;
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(threads);
  const M a = M::Random(n, n), b = M::Random(n, n);
  M c(n, n);
  const Samples s = time_products([&] { c.noalias() = a * b; });
  Eigen::setNbThreads(saved);
  return rate_of(s, n, fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION));
}

SgemmRate openblas_square_sgemm(int64_t n, int threads) {
  const cpu::OpenBlas* blas = cpu::openblas();
  if (!blas) {
    SgemmRate r;
    r.n = n;
    r.why = cpu::openblas_unavailable();
    return r;
  }
  blas->set_num_threads(threads);
  std::vector<float> a(size_t(n * n)), b(size_t(n * n)), c(size_t(n * n));
  for (size_t i = 0; i < a.size(); ++i) {  // values in [-1, 1), as Eigen's Random
    a[i] = float(int64_t(i * 2654435761u % 2000) - 1000) / 1000.0f;
    b[i] = float(int64_t(i * 40503u % 2000) - 1000) / 1000.0f;
  }
  // (sgemm_using runs OpenBLAS on its pool's `threads` threads here: no ProductsOnCallingThread around it)
  const Samples s = time_products([&] {
    cpu::sgemm_using(cpu::GemmLibrary::openblas, cpu::Op::none, cpu::Op::none, n, n, n, a.data(), n, b.data(), n,
                     c.data(), n, false);
  });
  blas->set_num_threads(1);  // its pool goes idle while the variants run
  return rate_of(s, n, fmt::format("OpenBLAS ({})", blas->config));
}

}  // namespace lobench::meters
