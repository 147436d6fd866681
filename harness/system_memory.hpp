// What memory the machine has free now: the default for --mem-limit.
#pragma once

#include <cstdint>
#include <string>

namespace lobench {

int64_t available_memory_bytes();  // MemAvailable from /proc/meminfo; 0 if unknown
// Parses "20G", "512M", "1.5GiB", "123456" (bytes). Throws std::invalid_argument.
int64_t parse_bytes(const std::string& s);
std::string format_bytes(double bytes);  // "1.25 GiB"

}  // namespace lobench
