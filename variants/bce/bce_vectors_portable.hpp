// The portable path's vector operations (bce_math.hpp's `S`): the GCC/Clang vector extensions, 8 floats
// per vector, lowered to whatever the build targets. Included only by translation units compiled with the
// build's own flags (bce_tile_portable.cpp, and bce_tile_rounded.cpp, whose operations are these rounded
// to a narrower format), inside their anonymous namespace: see bce_math.hpp for why every `S` has internal
// linkage. (The includer includes <cstdint> first: nothing is included here, inside that namespace.)
#pragma once

constexpr int kLanes = 8;
typedef float Floats __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t Ints __attribute__((vector_size(kLanes * sizeof(int32_t))));
typedef double Doubles __attribute__((vector_size(kLanes * sizeof(double))));

struct Vectors {
  using F = Floats;
  using M = Ints;  // all ones (−1) in lanes that are true
  static constexpr int width = kLanes;

  static F set1(float s) { return F{} + s; }
  static F load(const float* p) {
    F a;
    __builtin_memcpy(&a, p, sizeof a);
    return a;
  }
  static void store(float* p, F a) { __builtin_memcpy(p, &a, sizeof a); }
  static M first_lanes(int n) { return Ints{0, 1, 2, 3, 4, 5, 6, 7} < n; }
  static F load_first(const float* p, int n) {
    F a = {};
    for (int i = 0; i < n && i < kLanes; ++i) a[i] = p[i];
    return a;
  }
  static void store_first(float* p, F a, int n) {
    for (int i = 0; i < n && i < kLanes; ++i) p[i] = a[i];
  }

  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F div(F a, F b) { return a / b; }
  static F fma(F a, F b, F c) { return a * b + c; }  // -ffp-contract=off: not fused
  static F negative_abs(F a) { return (F)((Ints)a | int32_t(0x80000000u)); }
  static F min(F a, F b) { return a < b ? a : b; }  // b when either is NaN, as on x86
  static F max(F a, F b) { return a > b ? a : b; }
  // Round to nearest even by the 1.5·2^23 trick (|a| < 2^22 here); exact in IEEE float arithmetic, and
  // IEEE semantics forbid the compiler from folding the two steps (no -ffast-math here).
  static F round(F a) { return (a + 12582912.0f) - 12582912.0f; }
  // p·2^n as p·2^⌊n/2⌋·2^⌈n/2⌉, as Avx2::ldexp: two normal factors, one rounding.
  static F ldexp(F p, F n) {
    const Ints ni = __builtin_convertvector(n >= -150.0f ? n : -150.0f, Ints);  // NaN n (p is NaN too): no UB
    const Ints n1 = ni >> 1, n2 = ni - n1;
    return p * (F)((n1 + 127) << 23) * (F)((n2 + 127) << 23);
  }
  static M greater(F a, F b) { return a > b; }
  static F select(M m, F a, F b) { return m ? a : b; }
  static int count(M m) {
    int c = 0;
    for (int i = 0; i < kLanes; ++i) c -= m[i];
    return c;
  }

  using Acc = Doubles;
  static Acc acc_zero() { return Acc{}; }
  static void acc_add(Acc& acc, F a) { acc += __builtin_convertvector(a, Doubles); }
  static double acc_total(Acc acc) {
    double s = 0.0;
    for (int i = 0; i < kLanes; ++i) s += acc[i];
    return s;
  }
};
