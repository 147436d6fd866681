// Debian's OpenBLAS (libopenblas.so.0: the BLAS NumPy, Debian's PyTorch and most frameworks call),
// loaded at run time so that building lobench needs no BLAS headers and a machine without it still runs
// (on Eigen's products). Loaded once and never closed: OpenBLAS keeps a thread pool that must outlive
// every call.
//
// One instance whatever the front end: OpenBLAS chooses its kernels once, when it is first loaded into
// a process (OPENBLAS_CORETYPE, else its own detection). In a Python process NumPy or PyTorch may have
// loaded it before lobench, with other kernels (Debian's 0.3.21 detects a Xeon of family 6 model 207 as
// Prescott, SSE3: 28–34 GFLOP/s where the SkylakeX kernels run 127–229). lobench then loads a private copy
// of the library (its own state and kernels, the other instance left as it is), so that `lobench run` and
// `python -m lobench run` measure and call the same kernels; where no copy can be made, it says which
// kernels the instance runs and its products go through Eigen instead (sgemm.hpp).
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
                                               // and the note in parentheses where there is one
  // The kernels the instance lobench calls runs: openblas_get_corename(), e.g. "SkylakeX" (empty where the
  // library lacks that entry point).
  std::string kernels;
  // Which instance that is: "libopenblas.so.0 (PATH)", "..., already loaded in this process", or "a private
  // copy of PATH (this process had loaded it with Prescott kernels)".
  std::string loaded;
  // What a reader of its rate must know, said beside it; empty when nothing: OPENBLAS_CORETYPE in the
  // environment chose other kernels than this CPU's best ("OPENBLAS_CORETYPE=Haswell from the environment;
  // this CPU runs SKYLAKEX"), or the instance runs other kernels than lobench chose and no private copy
  // could be made.
  std::string note;
  // The latter: the library was loaded before lobench with other kernels and no private copy could be made.
  // sgemm() then uses Eigen (unless LOBENCH_GEMM=openblas).
  bool other_kernels = false;
};

// The library, or nullptr when libopenblas.so.0 cannot be loaded or lacks one of the entry points
// (openblas_unavailable() then says why). Before loading, OPENBLAS_THREAD_TIMEOUT is set to its
// shortest value (unless the user set it): OpenBLAS's idle pool threads otherwise busy-wait about
// 0.1 s after each multithreaded call, on the cores the variants measured next run on.
const OpenBlas* openblas();
std::string openblas_unavailable();

}  // namespace lobench::cpu
