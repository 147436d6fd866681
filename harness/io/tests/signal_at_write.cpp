// A test tool (LD_PRELOAD): delivers a signal to the process just before its K-th write to an HDF5
// file, so that a test can interrupt `lobench` in the middle of a write, deterministically.
// SIGNAL_AT_WRITE="K" or "K1,K2,..." (counting pwrite calls on files whose path contains ".h5", from 1),
// SIGNAL_AT_WRITE_SIG=N (default 15, SIGTERM). Unset: writes pass through untouched.
#include <dlfcn.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool is_h5(int fd) {
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return std::strstr(path, ".h5") != nullptr;
}

bool listed(const char* list, long k) {  // k among the comma-separated numbers of list
  for (const char* p = list; *p;) {
    char* end = nullptr;
    if (std::strtol(p, &end, 10) == k) return true;
    if (end == p) return false;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

long writes = 0;

}  // namespace

extern "C" ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  using Fn = ssize_t (*)(int, const void*, size_t, off_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pwrite64"));
  const char* at = std::getenv("SIGNAL_AT_WRITE");
  if (at && is_h5(fd) && listed(at, ++writes)) {
    const char* sig = std::getenv("SIGNAL_AT_WRITE_SIG");
    raise(sig ? std::atoi(sig) : SIGTERM);
  }
  return real(fd, buf, n, offset);
}

extern "C" ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) { return pwrite64(fd, buf, n, offset); }
