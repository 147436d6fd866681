#include "variants/cpu/openblas.hpp"

#include <dlfcn.h>

#include <strings.h>

#include <cstdlib>
#include <string>

namespace lobench::cpu {
namespace {

struct Loaded {
  OpenBlas lib;
  bool ok = false;
  std::string why;
};

// The kernels OpenBLAS should pick on this CPU, for OPENBLAS_CORETYPE (read by DYNAMIC_ARCH builds when
// they start). Debian 12's OpenBLAS 0.3.21 does not know CPUs newer than itself and falls back to its
// generic "Prescott" (SSE3) kernels: on a 2-core Intel Xeon of family 6 model 207 (AVX-512) its 4096³
// SGEMM ran 42.5 GFLOP/s against Eigen's 190 in the same run, and `fused` through it at 30 % of the
// yardstick. Choosing by the instruction sets the CPU reports keeps the choice fixed per machine.
const char* openblas_coretype() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SKYLAKEX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "HASWELL";
  return nullptr;  // let OpenBLAS detect
}

Loaded load() {
  Loaded l;
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
  // A user's own OPENBLAS_CORETYPE wins; the loaded library's configuration (provenance) names the core,
  // and says so when the environment chose other kernels than the CPU's best (a sandbox may hold OpenBLAS
  // to older kernels: OPENBLAS_CORETYPE=Haswell halved its SGEMM on an AVX-512 AMD Zen 5).
  const char* ours = openblas_coretype();
  const char* users = std::getenv("OPENBLAS_CORETYPE");
  if (users && ours && strcasecmp(users, ours) != 0)
    l.lib.environment_note = std::string("OPENBLAS_CORETYPE=") + users + " from the environment; this CPU runs " + ours;
  if (ours) setenv("OPENBLAS_CORETYPE", ours, /*overwrite=*/0);
  void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.why = std::string("libopenblas.so.0 not loadable (") + (e ? e : "?") + "); install libopenblas0-pthread";
    return l;
  }
  l.lib.sgemm = reinterpret_cast<OpenBlas::Sgemm>(dlsym(h, "cblas_sgemm"));
  l.lib.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  l.lib.get_num_threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
  const auto config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  if (!l.lib.sgemm || !l.lib.set_num_threads || !l.lib.get_num_threads) {
    l.why = "libopenblas.so.0 lacks cblas_sgemm, openblas_set_num_threads or openblas_get_num_threads";
    return l;
  }
  l.lib.config = std::string(config ? config() : "OpenBLAS");
  if (!l.lib.environment_note.empty()) l.lib.config += " (" + l.lib.environment_note + ")";
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const OpenBlas* openblas() { return loaded().ok ? &loaded().lib : nullptr; }
std::string openblas_unavailable() { return loaded().why; }

}  // namespace lobench::cpu
