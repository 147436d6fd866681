#include "harness/config/option_checks.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "variants/checked_math.hpp"
#include "harness/system_memory.hpp"

namespace lobench::config {
namespace {

constexpr const char* kSizeExamples = "(examples: 20G, 512M, 1.5GiB, 4096B; units B, K, M, G, T, binary: 1K = 1024 B)";

[[noreturn]] void refuse(const std::string& option, const std::string& msg) {
  throw OptionError(fmt::format("{}: {}", option, msg));
}

}  // namespace

int default_threads() { return std::clamp(omp_get_num_procs(), 1, kMaxThreads); }

int check_threads(const std::string& option, int64_t value) {
  if (value < 1 || value > kMaxThreads)
    refuse(option, fmt::format("{} threads: must be in [1, {}] (default: all {} cores)", value, kMaxThreads,
                               default_threads()));
  return int(value);
}

int64_t parse_size(const std::string& option, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    refuse(option, fmt::format("'{}' is not a size {}", text, kSizeExamples));
  // strtod also reads hexadecimal (0x10G would be 16 GiB): sizes are decimal.
  if (std::string(begin, size_t(end - begin)).find_first_of("xXpP") != std::string::npos)
    refuse(option, fmt::format("'{}' is not a decimal number {}", text, kSizeExamples));
  std::string unit(end);
  for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  double mult = 0;
  if (unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    refuse(option, fmt::format("'{}' has an unknown unit '{}' (use B, K, M, G or T) {}", text, std::string(end), kSizeExamples));
  if (!std::isfinite(v)) refuse(option, fmt::format("'{}' is not a finite size {}", text, kSizeExamples));
  if (v <= 0) refuse(option, fmt::format("'{}' must be more than 0 bytes {}", text, kSizeExamples));
  if (unit.empty())
    refuse(option, fmt::format("'{}' has no unit: as bytes that is a memory limit of {} B, a probable mistake; write "
                               "{}G if you meant gibibytes (or {}M, or {}B for bytes) {}",
                               text, text, text, text, text, kSizeExamples));
  const double bytes = v * mult;
  if (mult == 1 && bytes != std::floor(bytes))
    refuse(option, fmt::format("'{}' is not a whole number of bytes {}", text, kSizeExamples));
  if (!(bytes <= double(kMaxMemoryLimit)))
    refuse(option, fmt::format("'{}' is more than 1 PiB, which no machine has {}", text, kSizeExamples));
  if (bytes < 1) refuse(option, fmt::format("'{}' is less than one byte {}", text, kSizeExamples));
  return int64_t(bytes);
}

int64_t parse_memory_limit(const std::string& option, const std::string& text) { return parse_size(option, text); }

int64_t default_memory_limit() {
  const int64_t available = available_memory_bytes();
  return std::max<int64_t>(1, available - std::max<int64_t>(int64_t(1) << 30, available / 10));
}

int64_t memory_limit_or_default(const std::string& option, const std::string& text) {
  return text.empty() ? default_memory_limit() : parse_memory_limit(option, text);
}

int64_t check_block_size(const std::string& option, int64_t value) {
  if (value < 0) refuse(option, fmt::format("{} must be >= 0 (0: the variant chooses)", value));
  return value;
}

int64_t check_positive(const std::string& option, int64_t value) {
  if (value < 1) refuse(option, fmt::format("{} must be at least 1", value));
  return value;
}

int64_t check_non_negative(const std::string& option, int64_t value) {
  if (value < 0) refuse(option, fmt::format("{} must be >= 0", value));
  return value;
}

double check_fraction(const std::string& option, double value) { return check_range(option, value, 0.0, 1.0); }

double check_positive_real(const std::string& option, double value) {
  if (!std::isfinite(value) || !(value > 0)) refuse(option, fmt::format("{} must be a finite number > 0", value));
  return value;
}

double check_finite(const std::string& option, double value) {
  if (!std::isfinite(value)) refuse(option, fmt::format("{} must be a finite number", value));
  return value;
}

double check_range(const std::string& option, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi)
    refuse(option, fmt::format("{} must be a finite number in [{}, {}]", value, lo, hi));
  return value;
}

int64_t checked_mul(const std::string& what, int64_t a, int64_t b) {
  const auto r = lobench::checked_mul(a, b);
  if (!r) throw OptionError(fmt::format("{} = {} x {} overflows int64", what, a, b));
  return *r;
}

void check_problem_shape(int64_t B, int64_t N, int64_t V, int64_t D, int64_t L) {
  check_positive("--B", B);
  check_positive("--N", N);
  check_positive("--V", V);
  check_positive("--D", D);
  check_positive("--L", L);
  if (V > int64_t(INT32_MAX) - 1)
    refuse("--V", fmt::format("{} is more than int32 target ids allow ({})", V, int64_t(INT32_MAX) - 1));
  const int64_t P = checked_mul("P = B·N", B, N);
  const auto bytes8 = [](const std::string& what, int64_t elements) { checked_mul(what + " bytes", elements, 8); };
  bytes8("P·D", checked_mul("P·D", P, D));
  bytes8("P·V", checked_mul("P·V", P, V));
  bytes8("V·D", checked_mul("V·D", V, D));
  bytes8("P·L", checked_mul("P·L", P, L));
}

}  // namespace lobench::config
