#include "harness/system_memory.hpp"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <stdexcept>

namespace lobench {

int64_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

int64_t parse_bytes(const std::string& s) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    throw std::invalid_argument(fmt::format("'{}' is not a size (examples: 20G, 512M, 1.5GiB)", s));
  }
  std::string unit = s.substr(pos);
  for (auto& c : unit) c = char(std::toupper(c));
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw std::invalid_argument(fmt::format("'{}' has an unknown unit '{}' (use K, M, G or T)", s, unit));
  if (v < 0) throw std::invalid_argument(fmt::format("size '{}' is negative", s));
  return int64_t(v * mult);
}

std::string format_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

}  // namespace lobench
