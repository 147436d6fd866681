// The data cache sizes of this machine, as the operating system reports them: what the tiled CPU
// variants size their logit tiles by.
#pragma once

#include <cstdint>
#include <string>

namespace lobench::cpu {

struct CacheSizes {
  int64_t l1d = 0;     // bytes, per core
  int64_t l2 = 0;      // bytes, per core (the level a tile should live in)
  int64_t l3 = 0;      // bytes, the whole last level (shared)
  std::string source;  // where the numbers came from: "sysfs", "sysconf" or "default"
};

// Read once per process: Linux sysfs (/sys/devices/system/cpu/cpu0/cache), else sysconf, else
// defaults of a common server core (48 KiB, 1 MiB, 32 MiB). sysfs comes first because sysconf reports
// nonsense under some hypervisors (320 MiB of L3 on the 2-core development VM).
const CacheSizes& cache_sizes();

// The sysfs reader on its own, for tests: the sizes found under `cache_dir` (an index0, index1, ...
// layout); levels it does not find are 0.
CacheSizes read_sysfs_cache_sizes(const std::string& cache_dir);

}  // namespace lobench::cpu
