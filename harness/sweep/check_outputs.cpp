#include "harness/sweep/check_outputs.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace lobench::sweep {
namespace {

std::optional<std::string> non_finite(const std::vector<float>& v, int64_t cols, const char* what) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      return fmt::format("its {} holds a non-finite value ({} at [{}, {}])", what, v[i], int64_t(i) / cols,
                         int64_t(i) % cols);
  return std::nullopt;
}

// 64-bit multiply-xor hashing of a byte range, 8 bytes at a time: a changed byte changes the digest.
uint64_t mix(uint64_t h, const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * kMul;
  return h ^ bytes;
}

}  // namespace

std::optional<std::string> invalid_outputs(const StepOutputs& out, const StepInputs& in) {
  const auto bad_size = [](const char* what, size_t got, int64_t rows, int64_t cols) {
    return fmt::format("its {} has {} values, expected [{}, {}] = {}", what, got, rows, cols, rows * cols);
  };
  if (int64_t(out.dA.size()) != in.P * in.D) return bad_size("dA", out.dA.size(), in.P, in.D);
  if (int64_t(out.dE.size()) != in.V * in.D) return bad_size("dE", out.dE.size(), in.V, in.D);
  if (!out.counts.empty() && int64_t(out.counts.size()) != in.P * 4) return bad_size("counts", out.counts.size(), in.P, 4);
  if (!std::isfinite(out.loss)) return fmt::format("its loss is not finite ({})", out.loss);
  if (auto why = non_finite(out.dA, in.D, "dA")) return why;
  if (auto why = non_finite(out.dE, in.D, "dE")) return why;
  for (size_t i = 0; i < out.counts.size(); ++i)
    if (out.counts[i] < 0) return fmt::format("its counts hold a negative count ({} at [{}, {}])", out.counts[i], i / 4, i % 4);
  return std::nullopt;
}

uint64_t inputs_digest(const StepInputs& in) {
  uint64_t h = 0xCBF29CE484222325ull;
  if (in.A) h = mix(h, in.A, size_t(in.P * in.D) * sizeof(float));
  if (in.E) h = mix(h, in.E, size_t(in.V * in.D) * sizeof(float));
  if (in.targets) h = mix(h, in.targets, size_t(in.P * in.L) * sizeof(int32_t));
  if (in.weights) h = mix(h, in.weights, size_t(in.P) * sizeof(float));
  return h;
}

}  // namespace lobench::sweep
