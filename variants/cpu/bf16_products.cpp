#include "variants/cpu/bf16_products.hpp"

#include <atomic>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "precision_sim/cpu_dispatch.hpp"
#include "variants/cpu/bf16_dot.hpp"
#include "variants/cpu/bf16_fused_tile.hpp"

namespace lobench::cpu {
namespace {

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

// CPUID leaf 7: AMX-TILE (EDX bit 24) and AMX-BF16 (EDX bit 22).
bool cpu_has_amx_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 24 & 1u) && (edx >> 22 & 1u);
#else
  return false;
#endif
}

#if defined(LOBENCH_FP16_EPILOGUE_TILE_BUILT)  // (a compiler that knows -mavx512fp16 knows the feature's name)
bool cpu_has_avx512_fp16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512fp16") && cpu_has_avx512_bf16();
}
#endif

// 0: automatic; else 1 + the forced kernel.
std::atomic<int> forced{0};

void emulated_product(const Bf16Product& p) {
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      float& c = p.c_transposed ? p.c[n * p.ldc + m] : p.c[m * p.ldc + n];
      float acc = p.accumulate ? c : 0.0f;
      for (int64_t k = 0; k < p.K2; ++k)
        acc = dpbf16_lane(acc, p.a_transposed ? p.a[k * p.lda + m] : p.a[m * p.lda + k], p.b[k * p.ldb + n]);
      c = acc;
    }
}

void emulated_amx_product(const Bf16Product& p) {
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      float& c = p.c_transposed ? p.c[n * p.ldc + m] : p.c[m * p.ldc + n];
      float acc = p.accumulate ? c : 0.0f;
      for (int64_t k0 = 0; k0 < p.K2; k0 += kTilePairs)
        acc = tdpbf16_element(acc, p.a + m * p.lda + k0, p.b + k0 * p.ldb + n, p.ldb, p.K2 - k0);
      c = acc;
    }
}

bool is_emulation(Bf16Kernel k) { return k == Bf16Kernel::emulated || k == Bf16Kernel::emulated_amx; }

// For the kernels that read a by rows only (the AMX kernel loads a's tiles straight from memory, and its
// model follows it): a copied into rows (a_transposed off), the same pairs, so the same results. (A copy
// outside any counting allocator: the variants never ask these kernels for a transposed a.)
template <class Fn>
void with_a_by_rows(const Bf16Product& p, Fn&& fn) {
  if (!p.a_transposed) return fn(p);
  std::vector<uint32_t> rows(size_t(p.M * p.K2));
  for (int64_t k = 0; k < p.K2; ++k)
    for (int64_t m = 0; m < p.M; ++m) rows[size_t(m * p.K2 + k)] = p.a[k * p.lda + m];
  Bf16Product q = p;
  q.a = rows.data(), q.lda = p.K2, q.a_transposed = false;
  fn(q);
}

}  // namespace

const char* to_string(Bf16Kernel k) {
  switch (k) {
    case Bf16Kernel::avx512_bf16: return "avx512_bf16";
    case Bf16Kernel::avx512_fma: return "avx512_fma";
    case Bf16Kernel::emulated: return "emulated";
    case Bf16Kernel::amx_bf16: return "amx_bf16";
    case Bf16Kernel::emulated_amx: return "emulated_amx";
  }
  return "?";
}

std::optional<std::string> bf16_simd_unavailable() {
#if !defined(LOBENCH_BF16_SIMD)
  return std::string("bf16 products need AVX512_BF16 (VDPBF16PS), and this build has no such kernel (not x86-64 GCC/Clang)");
#else
  if (!cpu_has_avx512_bf16())
    return std::string("bf16 products need AVX512_BF16 (VDPBF16PS), which this CPU lacks; "
                       "its numerics are tested through the kernel's emulation");
  const auto isa = cpu_dispatch::forced_by_environment();
  if (isa && *isa != cpu_dispatch::Isa::avx512)
    return "LOBENCH_ISA=" + std::string(cpu_dispatch::name(*isa)) +
           " excludes the AVX512_BF16 kernel the bf16 products need";
  return std::nullopt;
#endif
}

namespace {
// The faster SIMD kernel here, measured once (about 10 ms): the best of short bursts of each instruction.
Bf16Kernel faster_simd_kernel() {
  static const Bf16Kernel k = [] {
    const auto rates = simd_peak_rates(0.01);
    return rates && rates->fp32_fma > 1.2 * rates->bf16_dot ? Bf16Kernel::avx512_fma : Bf16Kernel::avx512_bf16;
  }();
  return k;
}
}  // namespace

std::optional<std::string> bf16_amx_unavailable() {
#if !defined(LOBENCH_BF16_AMX)
  return std::string("this build has no AMX-BF16 kernel (not x86-64 GCC/Clang with AMX support)");
#else
  // (CPUID traps to the hypervisor in a virtual machine: asked once. LOBENCH_ISA is read every time:
  // tests change it.)
  static const bool has_amx = cpu_has_amx_bf16();
  if (!has_amx) return std::string("this CPU lacks AMX-BF16 (TDPBF16PS)");
  if (auto why = bf16_simd_unavailable()) return why;  // (LOBENCH_ISA below avx512 excludes AMX too)
  if (!amx_bf16::tile_state_granted())
    return std::string("Linux did not grant this process the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM)");
  return std::nullopt;
#endif
}

Bf16Kernel active_bf16_kernel() {
  if (const int f = forced.load()) return Bf16Kernel(f - 1);
  if (!bf16_amx_unavailable()) return Bf16Kernel::amx_bf16;
  if (auto why = bf16_simd_unavailable()) throw std::runtime_error(*why);
  return faster_simd_kernel();
}

bool bf16_products_on_amx() {
  if (const int f = forced.load()) return in_amx_tiles(Bf16Kernel(f - 1));
  return !bf16_amx_unavailable();
}

std::optional<std::string> bf16_products_unavailable() {
  if (const int f = forced.load(); f && is_emulation(Bf16Kernel(f - 1))) return std::nullopt;
  if (!bf16_amx_unavailable()) return std::nullopt;
  return bf16_simd_unavailable();
}

void set_bf16_kernel(std::optional<Bf16Kernel> kernel) {
  if (kernel && *kernel == Bf16Kernel::amx_bf16) {
    if (auto why = bf16_amx_unavailable()) throw std::invalid_argument(*why);
  } else if (kernel && !is_emulation(*kernel)) {
    if (auto why = bf16_simd_unavailable()) throw std::invalid_argument(*why);
  }
  forced.store(kernel ? 1 + int(*kernel) : 0);
}

void bf16_product(const Bf16Product& p) { bf16_product(active_bf16_kernel(), p); }

void bf16_product(Bf16Kernel kernel, const Bf16Product& p) {
  if (p.M <= 0 || p.N <= 0) return;
  if (kernel == Bf16Kernel::emulated) return emulated_product(p);
  if (kernel == Bf16Kernel::emulated_amx) return with_a_by_rows(p, emulated_amx_product);
#if defined(LOBENCH_BF16_AMX)
  if (kernel == Bf16Kernel::amx_bf16) {
    if (auto why = bf16_amx_unavailable()) throw std::runtime_error(*why);
    return with_a_by_rows(p, amx_bf16::product);
  }
#endif
  if (kernel == Bf16Kernel::amx_bf16) throw std::runtime_error(*bf16_amx_unavailable());
#if defined(LOBENCH_BF16_SIMD)
  if (auto why = bf16_simd_unavailable()) throw std::runtime_error(*why);
  if (kernel == Bf16Kernel::avx512_fma) return avx512_fma::product(p);
  avx512_bf16::product(p);
#else
  throw std::runtime_error(*bf16_simd_unavailable());
#endif
}

bool bf16_fused_tile_built() {
#if defined(LOBENCH_BF16_SIMD)
  return true;
#else
  return false;
#endif
}

void bf16_fused_tile(const Bf16FusedTile& t, bool logits_in_x, bool fp16_epilogue) {
#if defined(LOBENCH_FP16_EPILOGUE_TILE_BUILT)
  if (fp16_epilogue) return logits_in_x ? avx512_fp16_epilogue::epilogue_of_tile(t) : avx512_fp16_epilogue::fused_logits(t);
#endif
#if defined(LOBENCH_BF16_SIMD)
  if (!fp16_epilogue) return logits_in_x ? avx512_bf16::epilogue_of_tile(t) : avx512_bf16::fused_logits(t);
#endif
  (void)t, (void)logits_in_x;
  throw std::logic_error("bf16_fused_tile: this build has no such kernel");
}

void bf16_fused_tile_row_sums(const double* row_sums, int64_t rows, double* loss, bool fp16_epilogue) {
#if defined(LOBENCH_FP16_EPILOGUE_TILE_BUILT)
  if (fp16_epilogue) return avx512_fp16_epilogue::add_row_sums(row_sums, rows, loss);
#endif
#if defined(LOBENCH_BF16_SIMD)
  if (!fp16_epilogue) return avx512_bf16::add_row_sums(row_sums, rows, loss);
#endif
  (void)row_sums, (void)rows, (void)loss;
  throw std::logic_error("bf16_fused_tile_row_sums: this build has no such kernel");
}

std::optional<std::string> fp16_epilogue_tile_unavailable() {
#if !defined(LOBENCH_FP16_EPILOGUE_TILE_BUILT)
  return std::string("the binary16 epilogue's kernel needs a compiler with AVX512-FP16 (GCC 12, Clang 14 or later) "
                     "on x86-64, which this build did not have");
#else
  if (auto why = bf16_simd_unavailable()) return why;
  if (!cpu_has_avx512_fp16()) return std::string("the binary16 epilogue's kernel needs AVX512-FP16, which this CPU lacks");
  return std::nullopt;
#endif
}

std::optional<PeakRates> simd_peak_rates(double seconds) {
#if defined(LOBENCH_BF16_SIMD)
  if (!bf16_simd_unavailable()) return avx512_bf16::peak_rates(seconds);
#endif
  (void)seconds;
  return std::nullopt;
}

std::optional<double> amx_peak_rate(double seconds) {
#if defined(LOBENCH_BF16_AMX)
  if (!bf16_amx_unavailable()) return amx_bf16::peak_rate(seconds);
#endif
  (void)seconds;
  return std::nullopt;
}

namespace {
// Whether the packing takes its SIMD loops (decided once: the CPU and LOBENCH_ISA do not change).
bool simd_packing() {
  static const bool yes = !bf16_simd_unavailable();
  return yes;
}
}  // namespace

// The SIMD packing gives the same words as these loops (same rounding rule); it runs whenever the CPU
// has the instructions, whichever product kernel is active.
void pair_columns(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst) {
#if defined(LOBENCH_BF16_SIMD)
  if (simd_packing()) return avx512_bf16::pair_columns(src, ld_src, rows, cols, dst, ld_dst);
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * ld_src;
    for (int64_t k = 0; 2 * k < cols; ++k) dst[r * ld_dst + k] = bf16_pair(s[2 * k], 2 * k + 1 < cols ? s[2 * k + 1] : 0.0f);
  }
}

void pair_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst, int64_t ld_dst) {
#if defined(LOBENCH_BF16_SIMD)
  if (simd_packing()) return avx512_bf16::pair_rows(src, ld_src, rows, cols, dst, ld_dst);
#endif
  for (int64_t k = 0; 2 * k < rows; ++k) {
    const float* lo = src + 2 * k * ld_src;
    const float* hi = 2 * k + 1 < rows ? lo + ld_src : nullptr;
    for (int64_t c = 0; c < cols; ++c) dst[k * ld_dst + c] = bf16_pair(lo[c], hi ? hi[c] : 0.0f);
  }
}

void pair_columns_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                             int64_t ld_dst) {
#if defined(LOBENCH_BF16_SIMD)
  if (simd_packing()) return avx512_bf16::pair_columns_transposed(src, ld_src, rows, cols, dst, ld_dst);
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * ld_src;
    for (int64_t k = 0; 2 * k < cols; ++k) dst[k * ld_dst + r] = bf16_pair(s[2 * k], 2 * k + 1 < cols ? s[2 * k + 1] : 0.0f);
  }
}

void pair_columns_transposed_and_rows(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst_t,
                                      int64_t ld_t, uint32_t* dst_rows, int64_t ld_rows) {
#if defined(LOBENCH_BF16_SIMD)
  if (simd_packing())
    return avx512_bf16::pair_columns_transposed_and_rows(src, ld_src, rows, cols, dst_t, ld_t, dst_rows, ld_rows);
#endif
  pair_columns_transposed(src, ld_src, rows, cols, dst_t, ld_t);
  pair_rows(src, ld_src, rows, cols, dst_rows, ld_rows);
}

void pair_rows_transposed(const float* src, int64_t ld_src, int64_t rows, int64_t cols, uint32_t* dst,
                          int64_t ld_dst) {
  for (int64_t k = 0; 2 * k < rows; ++k) {
    const float* lo = src + 2 * k * ld_src;
    const float* hi = 2 * k + 1 < rows ? lo + ld_src : nullptr;
    for (int64_t c = 0; c < cols; ++c) dst[c * ld_dst + k] = bf16_pair(lo[c], hi ? hi[c] : 0.0f);
  }
}

}  // namespace lobench::cpu
