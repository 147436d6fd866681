#include "variants/cpu/openblas.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace lobench::cpu {
namespace {

struct Loaded {
  OpenBlas lib;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
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
  l.lib.config = config ? config() : "OpenBLAS";
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
