#include "variants/cpu/openblas.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace lobench::cpu {
namespace {

constexpr const char* kSoname = "libopenblas.so.0";

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

// openblas_get_corename() of the instance behind handle h ("" where the library lacks it).
std::string corename(void* h) {
  const auto f = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
  const char* name = f ? f() : nullptr;
  return name ? name : "";
}

std::string path_of(void* h) {
  link_map* lm = nullptr;
  return dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name ? lm->l_name : kSoname;
}

// A second, private instance of the library at `path`: its own state and thread pool, its kernels chosen
// now from OPENBLAS_CORETYPE. The dynamic loader shares a library loaded twice by its file's identity, so
// the copy is made in an anonymous memory file (memfd) and loaded from there; RTLD_LOCAL keeps its symbols
// from anything else. nullptr with `why` set where that fails.
void* load_private_copy(const std::string& path, std::string& why) {
  const int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return why = "cannot read " + path + ": " + std::strerror(errno), nullptr;
  const int fd = memfd_create("libopenblas.so.0 (lobench's private copy)", MFD_CLOEXEC);
  if (fd < 0) {
    why = std::string("memfd_create: ") + std::strerror(errno);
    close(in);
    return nullptr;
  }
  std::string buf(size_t(1) << 16, '\0');
  bool copied = true;
  for (ssize_t k; (k = read(in, buf.data(), buf.size())) != 0;) {
    if (k < 0 || write(fd, buf.data(), size_t(k)) != k) {
      copied = false;
      break;
    }
  }
  close(in);
  void* h = nullptr;
  if (!copied) why = "copying " + path + " failed: " + std::strerror(errno);
  else if (!(h = dlopen(("/proc/self/fd/" + std::to_string(fd)).c_str(), RTLD_NOW | RTLD_LOCAL))) {
    const char* e = dlerror();
    why = std::string("loading the copy failed: ") + (e ? e : "?");
  }
  close(fd);  // (the loader keeps its own mapping)
  return h;
}

// With the library already in this process running kernels `bound` other than `wanted`: a private copy
// running `wanted`, else the shared instance with its note (lib.other_kernels).
void* instance_for(void* shared, const std::string& bound, const char* wanted, OpenBlas& lib) {
  const std::string path = path_of(shared);
  std::string why;
  if (void* copy = load_private_copy(path, why)) {
    const std::string got = corename(copy);
    if (strcasecmp(got.c_str(), wanted) == 0) {
      lib.loaded = "a private copy of " + path + " (this process had loaded it with " + bound + " kernels)";
      return copy;
    }
    why = "the copy runs " + got + " kernels";  // (left loaded: dlclose would stop its thread pool mid-start)
  }
  lib.other_kernels = true;
  lib.loaded = path + ", already loaded in this process";
  lib.note += std::string(lib.note.empty() ? "" : "; ") + kSoname + " was loaded before lobench with " + bound +
              " kernels, not the " + wanted + " lobench asks for (no private copy: " + why + "; lobench's products use Eigen)";
  return shared;
}

Loaded load() {
  Loaded l;
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
  // A user's own OPENBLAS_CORETYPE wins; the note says when the environment chose other kernels than the
  // CPU's best (a sandbox may hold OpenBLAS to older kernels: OPENBLAS_CORETYPE=Haswell halved its SGEMM on
  // an AVX-512 AMD Zen 5).
  const char* ours = openblas_coretype();
  const char* users = std::getenv("OPENBLAS_CORETYPE");
  const std::string wanted = users ? users : ours ? ours : "";
  if (users && ours && strcasecmp(users, ours) != 0)
    l.lib.note = std::string("OPENBLAS_CORETYPE=") + users + " from the environment; this CPU runs " + ours;
  if (ours) setenv("OPENBLAS_CORETYPE", ours, /*overwrite=*/0);
  const bool already = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD) != nullptr;  // (a reference, never dropped)
  void* h = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.why = std::string(kSoname) + " not loadable (" + (e ? e : "?") + "); install libopenblas0-pthread";
    return l;
  }
  l.lib.loaded = path_of(h) + (already ? ", already loaded in this process" : "");
  const std::string bound = corename(h);
  if (already && !wanted.empty() && !bound.empty() && strcasecmp(bound.c_str(), wanted.c_str()) != 0)
    h = instance_for(h, bound, wanted.c_str(), l.lib);
  l.lib.kernels = corename(h);
  l.lib.sgemm = reinterpret_cast<OpenBlas::Sgemm>(dlsym(h, "cblas_sgemm"));
  l.lib.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  l.lib.get_num_threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
  const auto config = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_config"));
  if (!l.lib.sgemm || !l.lib.set_num_threads || !l.lib.get_num_threads) {
    l.why = std::string(kSoname) + " lacks cblas_sgemm, openblas_set_num_threads or openblas_get_num_threads";
    return l;
  }
  l.lib.config = std::string(config ? config() : "OpenBLAS");
  if (!l.lib.note.empty()) l.lib.config += " (" + l.lib.note + ")";
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
