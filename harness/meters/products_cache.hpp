// The cache of the fp32 products choice (products_choice.hpp): one small text file per machine and build,
// $XDG_CACHE_HOME/lobench/fp32-products-<hash>.txt (XDG_CACHE_HOME unset or empty: ~/.cache), so that the
// measurement runs once per CPU and binary, not once per process.
//
// Why the key holds the build as well as the CPU: the micro-kernels, the tile sizes and the library's
// product all change with commits, and what won at one commit need not win at the next. The key is
// the CPU's fingerprint (model name, family/model, the SIMD flags the kernels can use, the L1d, L2 and
// L3 sizes: the L3 sets the timed shape), the GEMM library sgemm() runs (its version and core type:
// OPENBLAS_CORETYPE and LOBENCH_GEMM change it), whether our kernels run (LOBENCH_ISA below avx512 turns them off: such a run's choice is
// between the libraries only), oneDNN's version and instruction set or its absence (a build without it
// must never read a choice of oneDNN), and the binary's build commit and flags (a modified tree adds the binary's size and
// modification time). The file holds the whole key; the hash in its name only keeps machines that share
// a home folder apart. A file whose key differs is a miss, not an error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/measure.hpp"

namespace lobench::meters {

// One shape class's measurement: the fused step through each path, round by round (the paths back to back
// in each round), in process CPU seconds (all threads: what the choice compares, as a shared machine's
// other jobs hardly enter it) and in wall seconds (shown beside).
// The least gain at the median for a library's products to replace ours (a fraction of our time).
inline constexpr double kMinLibraryGain = 0.03;
// How much slower than the fastest a path may be at the cache-resident shape and still be timed at the
// streaming one (products_choice.cpp, time_class).
inline constexpr double kScreenMargin = 0.15;

struct ProductsTiming {
  std::string shape_class;  // "D<=192" or "D>192"
  int64_t P = 0, V = 0, D = 0;
  // CPU seconds per step; empty for a path not timed (ours where they do not run, oneDNN's where it is not
  // another library here, any path screened out)
  Samples own, library;
  Samples own_wall, library_wall;  // wall seconds per step, the same rounds
  // oneDNN's products as a second library (where built in and not the process's library already), the
  // same rounds; empty where they were not timed.
  Samples onednn, onednn_wall;
  // The paths not timed here, found too slow at the cache-resident shape first (products_choice.cpp,
  // time_class), and by how much; or, where that left one path, that this is that screening's timing.
  // Empty where every path was timed.
  std::string screened{};
  // The rounds of the paths timed (each timed path has that many samples).
  size_t rounds() const {
    return std::max({own.seconds.size(), library.seconds.size(), onednn.seconds.size()});
  }
  // Whether a library's products (`other`: library or onednn) replace ours: faster in CPU time in at least
  // 3/4 of the rounds, and by kMinLibraryGain at the median. A tie within the noise keeps our kernels (what
  // every earlier result used, pinned bit for bit by their scalar model) rather than letting the noise
  // pick a machine's last bits: oneDNN's fused step ran 1.5 % under ours in every round of one `lobench
  // tune` at D = 256 on the small shape it times, and a few % over ours at V = 100000 (Zen 5).
  bool faster_than_own(const Samples& other) const;
  bool library_faster() const { return faster_than_own(library); }
  // The same rule against any baseline (where our kernels do not run: oneDNN against the library's).
  static bool beats(const Samples& other, const Samples& base);
};

struct CachedProducts {
  std::string key;
  std::string measured_utc;
  int threads = 0;
  std::vector<ProductsTiming> timings;  // one per shape class, in increasing D
};

// The key of this CPU and binary (one line).
std::string products_cache_key();

// The cache file of this key: $XDG_CACHE_HOME/lobench/fp32-products-<16 hex digits>.txt; nothing when
// neither XDG_CACHE_HOME nor HOME is set.
std::optional<std::string> products_cache_path(const std::string& key);

// The file's content, or nothing with *why set: "no cache file" (a miss), "measured for another CPU or
// build" (a miss), or what is wrong with it (unreadable, corrupt: the caller warns).
struct CacheRead {
  std::optional<CachedProducts> products;
  std::string why;
  bool corrupt = false;  // unreadable or malformed (not a plain miss)
};
CacheRead read_products_cache(const std::string& path, const std::string& key);

// Writes the file atomically (a temporary file in the same folder, then rename), creating the folder;
// false with *why set when it cannot (the old file, if any, is left as it was).
bool write_products_cache(const std::string& path, const CachedProducts& c, std::string* why);

// One measurement per machine and build at a time: an exclusive lock (flock) on the file "PATH.lock" beside
// the cache, held for this object's lifetime, i.e. while a process that missed measures and writes. Processes
// started together (ctest -j, a job array's tasks on one node) then wait for the first one's choice and read
// it, instead of each timing on cores the others share (each slowed, each measuring the contention).
// Waits for the lock, `on_wait` called once first where another process holds it, at most `max_wait_s`
// seconds (a holder that never finishes, stopped or hung on a network file system, must not stop every
// later run). held() is false where the lock file cannot be made (an unwritable folder: the caller
// measures unlocked, as it would write no cache anyway), cannot be locked, or was not had in time. The lock file is left in place (removing it would let a third process lock a new file beside a
// holder of the old one); a killed holder's lock is dropped by the kernel.
inline constexpr double kMaxMeasurementWaitSeconds = 600;
class MeasurementLock {
 public:
  MeasurementLock(const std::string& cache_path, const std::function<void(const std::string& lock_path)>& on_wait,
                  double max_wait_s = kMaxMeasurementWaitSeconds);
  ~MeasurementLock();
  MeasurementLock(const MeasurementLock&) = delete;
  MeasurementLock& operator=(const MeasurementLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace lobench::meters
