#include "variants/problem.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace lobench {

std::string to_string(Reduction r) { return r == Reduction::mean ? "mean" : "sum"; }

Reduction parse_reduction(const std::string& s) {
  if (s == "mean") return Reduction::mean;
  if (s == "sum") return Reduction::sum;
  throw std::invalid_argument(fmt::format("reduction must be 'mean' or 'sum', got '{}'", s));
}

void validate(const Shape& s) {
  auto positive = [](const char* name, int64_t v) {
    if (v < 1) throw std::invalid_argument(fmt::format("{} must be at least 1, got {}", name, v));
  };
  positive("B", s.B);
  positive("N", s.N);
  positive("V", s.V);
  positive("D", s.D);
  positive("L", s.L);
  if (s.V > int64_t(INT32_MAX) - 1)
    throw std::invalid_argument(fmt::format("V = {} does not fit int32 target ids", s.V));
}

}  // namespace lobench
