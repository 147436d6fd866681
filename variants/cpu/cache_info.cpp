#include "variants/cpu/cache_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace lobench::cpu {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// "48K", "1024K", "32M" or a plain number of bytes.
int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    return 0;
  }
  if (used < s.size()) {
    if (s[used] == 'K') v *= 1024;
    else if (s[used] == 'M') v *= 1024 * 1024;
    else if (s[used] == 'G') v *= 1024 * 1024 * 1024;
  }
  return v;
}

CacheSizes from_sysconf() {
  CacheSizes c;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  c.l1d = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  c.l2 = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  c.l3 = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  c.source = "sysconf";
  return c;
}

}  // namespace

CacheSizes read_sysfs_cache_sizes(const std::string& cache_dir) {
  CacheSizes c;
  c.source = "sysfs";
  for (int i = 0; i < 16; ++i) {
    const std::string dir = cache_dir + "/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "type");
    if (type == "Instruction") continue;
    const int64_t size = parse_size(read_line(dir + "size"));
    if (level == "1") c.l1d = size;
    else if (level == "2") c.l2 = size;
    else if (level == "3") c.l3 = size;
  }
  return c;
}

const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = [] {
    CacheSizes c = read_sysfs_cache_sizes("/sys/devices/system/cpu/cpu0/cache");
    if (c.l2 <= 0) c = from_sysconf();
    if (c.l2 <= 0) {
      c = CacheSizes{48 << 10, 1 << 20, 32 << 20, "default"};
    }
    if (c.l1d <= 0) c.l1d = 32 << 10;
    if (c.l3 <= 0) c.l3 = c.l2;
    return c;
  }();
  return sizes;
}

}  // namespace lobench::cpu
