#include "variants/fp8_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>

#include "precision_sim/cpu_dispatch.hpp"

namespace lobench {

precision::Format fp8_format(Operand op) {
  if (op == Operand::e4m3) return precision::formats::float8_e4m3fn();
  if (op == Operand::e5m2) return precision::formats::float8_e5m2();
  throw std::invalid_argument(std::string("operand ") + to_string(op) + " is not an fp8 operand (e4m3, e5m2)");
}

namespace {

// The largest magnitude's bits over x[0, n) (see max_abs). The magnitude's bits order non-negative floats,
// with inf above every finite value and NaN above inf; below 2^31, so a signed maximum (which SSE2
// vectorizes, unlike an unsigned one) orders them too. Kept in kLanes independent lanes, and compiled for
// AVX-512 and AVX2 as well, the path chosen as every run-time-dispatched kernel's is (cpu_dispatch.hpp,
// LOBENCH_ISA; a maximum is exact, so each gives the same result): one running maximum in SSE2 was a chain
// of dependent operations at about 4 bytes per cycle, 15 GB/s on one thread where E's 51 MB came from L3;
// now 24 GB/s there, and 19 → 82 GB/s on a block of E in L2 (Xeon model 167, a microbenchmark not kept).
[[gnu::always_inline]] inline int32_t max_magnitude_bits(const float* x, int64_t n) {
  constexpr int kLanes = 32;
  int32_t lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      int32_t u;
      std::memcpy(&u, x + i + l, 4);
      lane[l] = std::max(lane[l], u & 0x7fffffff);
    }
  int32_t top = 0;
  for (; i < n; ++i) {
    int32_t u;
    std::memcpy(&u, x + i, 4);
    top = std::max(top, u & 0x7fffffff);
  }
  for (int32_t l : lane) top = std::max(top, l);
  return top;
}

int32_t max_magnitude_bits_portable(const float* x, int64_t n) { return max_magnitude_bits(x, n); }
__attribute__((target("avx2"))) int32_t max_magnitude_bits_avx2(const float* x, int64_t n) {
  return max_magnitude_bits(x, n);
}
__attribute__((target("avx512f"))) int32_t max_magnitude_bits_avx512(const float* x, int64_t n) {
  return max_magnitude_bits(x, n);
}

using MaxMagnitudeBits = int32_t (*)(const float*, int64_t);

MaxMagnitudeBits max_magnitude_bits_for_this_cpu() {
  using cpu_dispatch::Isa;
  switch (cpu_dispatch::choose({Isa::portable, Isa::avx2, Isa::avx512})) {
    case Isa::avx512: return max_magnitude_bits_avx512;
    case Isa::avx2: return max_magnitude_bits_avx2;
    case Isa::portable: break;
  }
  return max_magnitude_bits_portable;
}

}  // namespace

float max_abs(const float* x, int64_t n, int threads) {
  constexpr int64_t kChunk = int64_t(1) << 14;  // floats per piece of the threads' work
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const MaxMagnitudeBits largest_bits = max_magnitude_bits_for_this_cpu();
  int32_t top = 0;
#pragma omp parallel for num_threads(std::max(1, threads)) reduction(max : top) schedule(static) if (threads > 1)
  for (int64_t c = 0; c < chunks; ++c) top = std::max(top, largest_bits(x + c * kChunk, std::min(kChunk, n - c * kChunk)));
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
