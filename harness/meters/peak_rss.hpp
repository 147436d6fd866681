// An independent meter of a step's memory: the growth of the process's resident set over the timed
// steps, from the kernel's own counters (/proc/self/status), beside the counting allocator's peak.
//
// The kernel's peak (VmHWM) is reset to the current resident set by writing "5" to
// /proc/self/clear_refs (Linux ≥ 4.0), so the peak is of these steps alone. glibc would keep freed
// blocks of up to 32 MiB resident (its dynamic mmap threshold), hiding a step's reuse of them from the
// meter; the meter fixes the threshold at 1 MiB once per process, so that every block of 1 MiB or more
// comes from the kernel and goes back to it. Smaller blocks, page rounding, Eigen's packing buffers and
// thread stacks make the rest of the difference to the allocator's count; the kernel's per-thread
// counters make its resolution about 64 pages per thread.
#pragma once

#include <cstdint>
#include <limits>

namespace lobench::meters {

class PeakRssMeter {
 public:
  // Resets the kernel's peak and reads the resident set now.
  PeakRssMeter();
  // Peak resident bytes since construction minus the resident bytes at construction; NaN when the
  // kernel refused the reset or the counters are unreadable.
  double growth_bytes() const;

 private:
  int64_t rss_before_ = -1;
};

// VmRSS and VmHWM of this process in bytes (-1 if unreadable).
int64_t resident_bytes();
int64_t peak_resident_bytes();
// VmData in bytes (-1 if unreadable): the private writable mappings, resident or not, that RLIMIT_DATA
// limits (a sanitizer's shadow memory among them: terabytes reserved, hardly any resident).
int64_t mapped_data_bytes();

// Fixes glibc's mmap threshold at 1 MiB (once per process; see above).
void fix_malloc_mmap_threshold();

}  // namespace lobench::meters
