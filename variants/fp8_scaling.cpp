#include "variants/fp8_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>

namespace lobench {

precision::Format fp8_format(Operand op) {
  if (op == Operand::e4m3) return precision::formats::float8_e4m3fn();
  if (op == Operand::e5m2) return precision::formats::float8_e5m2();
  throw std::invalid_argument(std::string("operand ") + to_string(op) + " is not an fp8 operand (e4m3, e5m2)");
}

float max_abs(const float* x, int64_t n, int threads) {
  // The magnitude's bits order non-negative floats, with inf above every finite value and NaN above inf;
  // below 2^31, so a signed maximum (which SSE2 vectorizes, unlike an unsigned one) orders them too.
  int32_t top = 0;
#pragma omp parallel for num_threads(std::max(1, threads)) reduction(max : top) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    int32_t u;
    std::memcpy(&u, x + i, 4);
    top = std::max(top, u & 0x7fffffff);
  }
  float m;
  std::memcpy(&m, &top, 4);
  return m;
}

namespace {

// The bias of the format's scaled copy must keep its grid a float32 grid (precision::validate): smallest
// normal 2^(1 - bias - s) >= 2^-126, largest binade <= 2^127.
int clamp_to_valid_bias(const precision::Format& f, int s) {
  const int hi = 127 - f.bias, lo = f.emax() - 127;
  return std::clamp(s, lo, hi);
}

precision::Format scaled(const precision::Format& f, int s) {
  precision::Format g = f;
  g.bias = f.bias + s;
  g.name = f.name + "*2^" + std::to_string(-s);
  precision::validate(g);
  return g;
}

}  // namespace

int fp8_scale_exponent(const precision::Format& f, float amax) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 0;
  // amax·2^s <= max: s = ilogb(max) − ilogb(amax), one less where the mantissas put it above (exact in double).
  int s = std::ilogb(f.max_finite()) - std::ilogb(amax);
  if (std::ldexp(double(amax), s) > f.max_finite()) --s;
  return clamp_to_valid_bias(f, s);
}

Fp8Scaling::Fp8Scaling(Operand op, float amax)
    : s_(fp8_scale_exponent(fp8_format(op), amax)), q_(scaled(fp8_format(op), s_)) {}

Fp8Scaling Fp8Scaling::of(Operand op, const float* x, int64_t n, int threads) {
  return Fp8Scaling(op, max_abs(x, n, threads));
}

void Fp8Scaling::round(const float* in, float* out, int64_t n, int threads) const {
  q_.round(std::span<const float>(in, size_t(n)), std::span<float>(out, size_t(n)), {}, threads);
}

std::string Fp8Scaling::describe() const { return "2^" + std::to_string(s_); }

}  // namespace lobench
