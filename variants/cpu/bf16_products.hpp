// Products of bfloat16 operands accumulated in float32, the CPU's `--operand bf16`: every product the
// tiled variants make (logits, dE, dA) is one call of bf16_product on the calling thread.
//
// Operands are bf16 pairs in 32-bit words (bf16_dot.hpp): `a` holds M rows of K2 pairs (the K index
// runs along a's rows; or, a_transposed, K2 rows of M pairs), `b` holds K2 rows of N pairs (pair k of column n: the two K indices 2k, 2k+1).
// Two instruction families compute them, each with its own rounding, each with a scalar model that the
// SIMD kernels equal bit for bit:
//   - lane chains (AVX512_BF16's VDPBF16PS, kernels avx512_bf16 and avx512_fma, model `emulated`):
//       acc = accumulate ? C(m, n) : +0;  for k = 0 … K2−1: acc = dpbf16_lane(acc, a[m][k], b[k][n]);
//   - tile blocks (AMX-BF16's TDPBF16PS, kernel amx_bf16, model `emulated_amx`):
//       acc = accumulate ? C(m, n) : +0;  for each block of 16 pairs (k0 = 0, 16, …):
//       acc = tdpbf16_element(acc, a[m][k0…], b[k0…][n], K2 − k0 pairs at most).
// No sum is ever split otherwise, so results do not depend on threads or blocking; they depend on the
// family, which follows the CPU (AMX where present). C(m, n) is c[m·ldc + n], or c[n·ldc + m] when
// c_transposed (the dE product makes dEᵀ tiles and adds them into dE's rows in place).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lobench::cpu {

struct Bf16Product {
  int64_t M = 0, N = 0, K2 = 0;  // C is M × N; K2 pairs of the inner index
  const uint32_t* a = nullptr;
  int64_t lda = 0;  // words between a's rows
  const uint32_t* b = nullptr;
  int64_t ldb = 0;  // words between b's rows
  float* c = nullptr;
  int64_t ldc = 0;
  bool c_transposed = false;
  bool accumulate = false;
  bool a_transposed = false;  // a(m, k) is a[k·lda + m] (a stored K2 × M), else a[m·lda + k]
};

// avx512_bf16: VDPBF16PS (bf16_products_avx512.cpp); avx512_fma: the same chains as float32 multiply-adds
// on the widened operands, denormals handled as the instruction does (bf16_products_fma.cpp); emulated:
// the scalar model of both (bf16_dot.hpp). amx_bf16: TDPBF16PS tiles (bf16_products_amx.cpp);
// emulated_amx: its scalar model (tdpbf16_element).
enum class Bf16Kernel { avx512_bf16, avx512_fma, emulated, amx_bf16, emulated_amx };

const char* to_string(Bf16Kernel k);

// Why this process cannot run the SIMD kernel (the CPU lacks AVX512_BF16, the build lacks the kernel, or
// LOBENCH_ISA forces a path below avx512), or nothing when it can.
std::optional<std::string> bf16_simd_unavailable();

// Why this process cannot run the AMX kernel (no AMX-BF16, Linux refused the tile state, the build has
// no such kernel, or LOBENCH_ISA forces a path below avx512), or nothing when it can.
std::optional<std::string> bf16_amx_unavailable();

// The kernel bf16_product uses: the one a test forced (set_bf16_kernel), else amx_bf16 where it runs,
// else the faster SIMD kernel on this CPU, chosen once by measuring both instructions' rates
// (simd_peak_rates): the FMA kernel where the float32 multiply-add's flop rate exceeds VDPBF16PS's by a
// fifth (the FMA kernel spends some issue slots on widening). Throws
// std::runtime_error with bf16_simd_unavailable()'s reason when nothing was forced and the SIMD kernel
// cannot run (the variants check bf16_products_unavailable first and skip).
Bf16Kernel active_bf16_kernel();

// Whether a kernel computes in AMX's tile blocks: amx_bf16 or its model emulated_amx (they read a by rows
// only, and the bf16 tiles' width follows them: tile_blocks.cpp).
inline bool in_amx_tiles(Bf16Kernel k) { return k == Bf16Kernel::amx_bf16 || k == Bf16Kernel::emulated_amx; }

// Whether the bf16 products run on AMX tiles: in_amx_tiles of the kernel a test forced, or, nothing
// forced, the AMX kernel runs here. Never throws.
bool bf16_products_on_amx();

// Why the variants cannot compute with bf16 operands here: the SIMD kernel's reason, unless a test
// forced the emulation. The variants report it as their skip reason.
std::optional<std::string> bf16_products_unavailable();

// Forces a kernel for every later product in this process (tests run the variants through the
// emulations on any CPU); std::nullopt returns to the automatic choice. Throws std::invalid_argument
// when a SIMD or AMX kernel is forced where it cannot run. Not for use while a variant is running.
void set_bf16_kernel(std::optional<Bf16Kernel> kernel);

void bf16_product(const Bf16Product& p);
void bf16_product(Bf16Kernel kernel, const Bf16Product& p);

// ---- packing float32 into bf16 pairs (rounded to nearest-even; a missing partner of an odd count is 0) ----

// dst[r·ld_dst + k] = pair(src[r][2k], src[r][2k+1]) for k < ⌈cols/2⌉: pairs of neighbouring columns.
void pair_columns(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst);
// dst[k·ld_dst + c] = pair(src[2k][c], src[2k+1][c]) for k < ⌈rows/2⌉: pairs of neighbouring rows.
void pair_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst);
// The same pairs, stored transposed: dst[k·ld_dst + r] = pair(src[r][2k], src[r][2k+1]).
void pair_columns_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                             int64_t ld_dst);
// pair_columns_transposed into dst_t and pair_rows into dst_rows, reading src once.
void pair_columns_transposed_and_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst_t,
                                      int64_t ld_t, uint32_t* dst_rows, int64_t ld_rows);
// dst[c·ld_dst + k] = pair(src[2k][c], src[2k+1][c]).
void pair_rows_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                          int64_t ld_dst);

// The instruction-level ceilings of the calling thread, for benchmarks: VFMADD231PS and VDPBF16PS on
// 512-bit registers with 24 independent accumulators, in short interleaved bursts for about `seconds`,
// the best burst of each in GFLOP/s (a multiply-add is 2 flops: 32 per FMA, 64 per VDPBF16PS). Nothing
// where the SIMD kernel cannot run.
struct PeakRates {
  double fp32_fma = 0, bf16_dot = 0;
};
std::optional<PeakRates> simd_peak_rates(double seconds);
// TDPBF16PS on tiles already loaded (four independent accumulator tiles), the best burst in GFLOP/s of
// the calling thread (16384 flops per instruction); nothing where the AMX kernel cannot run.
std::optional<double> amx_peak_rate(double seconds);

// The SIMD kernel's entry points (bf16_products_avx512.cpp), present when LOBENCH_BF16_SIMD is defined.
namespace avx512_bf16 {
PeakRates peak_rates(double seconds);
void product(const Bf16Product& p);
}  // namespace avx512_bf16
namespace avx512_fma {
void product(const Bf16Product& p);
}  // namespace avx512_fma
// The AMX kernel's entry points (bf16_products_amx.cpp), present when LOBENCH_BF16_AMX is defined.
namespace amx_bf16 {
bool tile_state_granted();
void product(const Bf16Product& p);
double peak_rate(double seconds);
}  // namespace amx_bf16
namespace avx512_bf16 {
void pair_columns(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst);
void pair_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst);
void pair_columns_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                             int64_t ld_dst);
void pair_columns_transposed_and_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst_t,
                                      int64_t ld_t, uint32_t* dst_rows, int64_t ld_rows);
}  // namespace avx512_bf16

}  // namespace lobench::cpu
