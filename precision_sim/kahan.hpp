// Compensated (Kahan) summation.
//
// KahanSum keeps a running sum and a compensation term holding the low-order bits the last addition
// lost, so n additions have error O(eps) instead of O(n eps). Needs strict IEEE arithmetic: the
// project never builds with -ffast-math, which would let the compiler cancel (t - sum) - y to zero.
//
// kahan_update is the same idea applied to a *stored* low-precision value (optimi's Kahan-summed
// optimizers, used by ELMO's bf16 encoder): the compensation buffer c accumulates the update plus the
// rounding error left from the previous step, so small updates that round away in bf16 are not lost
// but carried until they add up.
#pragma once

#include <concepts>

namespace lobench::precision {

template <std::floating_point T = float>
struct KahanSum {
  T sum = 0;
  T comp = 0;  // low-order part lost by the previous additions (subtracted from the next one)

  void add(T x) {
    const T y = x - comp;
    const T t = sum + y;
    comp = (t - sum) - y;  // what of y did not make it into t (negated)
    sum = t;
  }
  KahanSum& operator+=(T x) {
    add(x);
    return *this;
  }
  T value() const { return sum; }
};

// One compensated step of a value p stored in a low-precision format: c += delta; p_new = round(p + c);
// c += p_old - p_new (the part of the update p could not absorb). `round` maps a float32 to the
// storage format (e.g. bf16 round-to-nearest-even); the compensation is stored through it too.
// Returns the new p; c is updated in place.
template <typename Round>
inline float kahan_update(float p, float& c, float delta, Round&& round) {
  const float pending = round(c + delta);
  const float p_new = round(p + pending);
  c = round(pending + (p - p_new));
  return p_new;
}

}  // namespace lobench::precision
