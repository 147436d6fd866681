// Debian's OpenBLAS (libopenblas.so.0: the BLAS NumPy, Debian's PyTorch and most frameworks call),
// loaded at run time so that building lobench needs no BLAS headers and a machine without it still runs
// (on Eigen's products). Loaded once and never closed: OpenBLAS keeps a thread pool that must outlive
// every call.
#pragma once

#include <string>

namespace lobench::cpu {

// The entry points lobench calls, by their documented C signatures (cblas.h's enums are ints:
// CblasRowMajor 101, CblasNoTrans 111, CblasTrans 112).
struct OpenBlas {
  using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);
  Sgemm sgemm = nullptr;                       // cblas_sgemm
  void (*set_num_threads)(int) = nullptr;      // openblas_set_num_threads
  int (*get_num_threads)() = nullptr;          // openblas_get_num_threads
  std::string config;                          // openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ...",
                                               // and the environment_note in parentheses where there is one
  // Where OPENBLAS_CORETYPE in the environment chose other kernels than this CPU's best, says so
  // ("OPENBLAS_CORETYPE=Haswell from the environment; this CPU runs SKYLAKEX"); empty otherwise.
  std::string environment_note;
};

// The library, or nullptr when libopenblas.so.0 cannot be loaded or lacks one of the entry points
// (openblas_unavailable() then says why). Before loading, OPENBLAS_THREAD_TIMEOUT is set to its
// shortest value (unless the user set it): OpenBLAS's idle pool threads otherwise busy-wait about
// 0.1 s after each multithreaded call, on the cores the variants measured next run on.
const OpenBlas* openblas();
std::string openblas_unavailable();

}  // namespace lobench::cpu
