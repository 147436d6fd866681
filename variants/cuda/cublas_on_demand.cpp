// cuBLAS, loaded the first time lobench calls it.
//
// Why: a process linked to libcublas pays for it at every start, GPU or not: the loader maps libcublasLt
// (about 540 MB), applies its relocations and runs its constructors: about 70 ms and 200 MiB of resident
// pages per process on a Zen 5 core. CPU-only work (every CPU sweep, each of the test suite's ~1,500
// process starts, each `python -m lobench` row process) never calls it. So lobench links cudart only
// (cheap, and its context is created lazily anyway), and these definitions of the cuBLAS entry points it
// uses resolve the real ones with dlopen on first use.
//
// The declarations come from cuBLAS's own header, so a signature that changes in a new CUDA fails to
// compile here instead of calling through a wrong type. A new cuBLAS call in lobench needs an entry below
// (the link fails until it has one). Where the library cannot be loaded, every call returns
// CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says why (the loader's message), so the GPU
// variant's row fails with the reason, as for any other cuBLAS error.
//
// These definitions are hidden (compiled with -fvisibility=hidden, variants/CMakeLists.txt): lobench's calls
// bind to them inside its own binary or module, never to another cuBLAS a process has loaded globally
// (PyTorch's, of another major version, in the same Python process).
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>

#include "variants/cuda/cublas_on_demand.hpp"

namespace lobench::cuda {
namespace {

struct Library {
  void* handle = nullptr;
  std::string error;  // the loader's message when handle is null
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    // The toolkit's versioned library found at configure time first (an installed wheel's modules carry
    // no run path to it), then the soname through the loader's search path.
    for (const char* name : {LOBENCH_CUBLAS_PATH, LOBENCH_CUBLAS_SONAME}) {
      l.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (l.handle) {
        l.error.clear();
        return l;
      }
      if (const char* e = dlerror()) l.error += (l.error.empty() ? "" : "; ") + std::string(e);
    }
    return l;
  }();
  return lib;
}

// The real function `name` of type F, or nullptr where the library or the symbol is missing.
template <class F>
F* entry(const char* name) {
  const Library& lib = library();
  return lib.handle ? reinterpret_cast<F*>(dlsym(lib.handle, name)) : nullptr;
}

}  // namespace

bool cublas_loadable() { return library().handle != nullptr; }

const std::string& cublas_load_error() { return library().error; }

}  // namespace lobench::cuda

using lobench::cuda::entry;

// Each entry point: the real function looked up once, then called; CUBLAS_STATUS_NOT_INITIALIZED where
// there is none.
#define LOBENCH_CUBLAS_FORWARD(name, params, args)                              \
  cublasStatus_t CUBLASWINAPI name params {                                     \
    static auto* const real = entry<decltype(name)>(#name);                     \
    return real ? real args : CUBLAS_STATUS_NOT_INITIALIZED;                    \
  }

extern "C" {

LOBENCH_CUBLAS_FORWARD(cublasCreate_v2, (cublasHandle_t * handle), (handle))
LOBENCH_CUBLAS_FORWARD(cublasDestroy_v2, (cublasHandle_t handle), (handle))
LOBENCH_CUBLAS_FORWARD(cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
LOBENCH_CUBLAS_FORWARD(cublasSetWorkspace_v2, (cublasHandle_t handle, void* workspace, size_t bytes),
                       (handle, workspace, bytes))
LOBENCH_CUBLAS_FORWARD(cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode))

// (cublasGemmEx is overloaded in C++: the header adds an inline one taking cudaDataType as compute type.)
using GemmEx = cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                              const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                              cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                                         void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo) {
  static auto* const real = entry<GemmEx>("cublasGemmEx");
  return real ? real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                     computeType, algo)
              : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  static auto* const real = entry<decltype(cublasGetStatusName)>("cublasGetStatusName");
  return real ? real(status) : "CUBLAS_STATUS_NOT_INITIALIZED";
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  static auto* const real = entry<decltype(cublasGetStatusString)>("cublasGetStatusString");
  if (real) return real(status);
  static const std::string why = "libcublas could not be loaded: " + lobench::cuda::cublas_load_error();
  return why.c_str();
}

}  // extern "C"
