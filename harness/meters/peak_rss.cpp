#include "harness/meters/peak_rss.hpp"

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <string>

namespace lobench::meters {
namespace {

int64_t status_field_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string key;
  while (f >> key) {
    if (key == field) {
      int64_t kib = -1;
      return f >> kib ? kib * 1024 : -1;
    }
    f.ignore(1 << 20, '\n');
  }
  return -1;
}

bool reset_peak_resident() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

}  // namespace

int64_t resident_bytes() { return status_field_bytes("VmRSS:"); }
int64_t peak_resident_bytes() { return status_field_bytes("VmHWM:"); }
int64_t mapped_data_bytes() { return status_field_bytes("VmData:"); }

void fix_malloc_mmap_threshold() {
  static std::once_flag once;
  std::call_once(once, [] { mallopt(M_MMAP_THRESHOLD, 1 << 20); });
}

PeakRssMeter::PeakRssMeter() {
  fix_malloc_mmap_threshold();
  if (reset_peak_resident()) rss_before_ = resident_bytes();
}

double PeakRssMeter::growth_bytes() const {
  const int64_t peak = peak_resident_bytes();
  if (rss_before_ < 0 || peak < 0) return std::numeric_limits<double>::quiet_NaN();
  // The kernel syncs each thread's resident-page count into the process's only every 64 page faults,
  // so the two readings can disagree by a few pages either way: a growth below zero is no growth.
  return double(std::max<int64_t>(0, peak - rss_before_));
}

}  // namespace lobench::meters
