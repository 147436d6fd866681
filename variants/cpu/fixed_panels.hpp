// Products whose results do not depend on the thread count. Eigen's own multithreaded GEMM chooses its
// blocking (and so the order of each dot product's additions) from the number of threads; here a
// product is split into row panels of a fixed height, each made by one thread with Eigen running on
// that thread, so every sum's order is fixed by the shapes and the panel height alone.
#pragma once

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>

namespace lobench::cpu {

// Eigen splits a product over its own threads whenever the caller's team has one thread (it checks only
// omp_get_num_threads()), which would nest its parallelism under ours, make a one-thread run use every
// core, and make the blocking depend on the thread count. For the duration of a run, every product runs
// on the thread that calls it.
class EigenOnCallingThread {
 public:
  EigenOnCallingThread() : saved_(Eigen::nbThreads()) { Eigen::setNbThreads(1); }
  ~EigenOnCallingThread() { Eigen::setNbThreads(saved_); }
  EigenOnCallingThread(const EigenOnCallingThread&) = delete;
  EigenOnCallingThread& operator=(const EigenOnCallingThread&) = delete;

 private:
  int saved_;
};

// Rows per panel: tall enough for Eigen's kernels to run at full rate, small enough to balance threads.
constexpr int64_t kFixedPanelRows = 64;

// Calls panel(first_row, row_count) for consecutive panels of `panel_rows` rows covering [0, rows), on
// `threads` threads. Panels write disjoint outputs, so their order does not matter; their height does,
// and it is fixed.
template <class PanelFn>
void for_each_fixed_panel(int64_t rows, int threads, PanelFn&& panel, int64_t panel_rows = kFixedPanelRows) {
  const int64_t n = (rows + panel_rows - 1) / panel_rows;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) panel(i * panel_rows, std::min(panel_rows, rows - i * panel_rows));
}

}  // namespace lobench::cpu
