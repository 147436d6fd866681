#include "bce_tile.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace lobench::cpu {
namespace {

// Which of the optional translation units the build compiled, and whether this CPU runs them. The
// kernels use popcnt as well; every CPU with AVX2 has it, but it is checked all the same.
bool cpu_runs(SimdPath p) {
#if defined(LOBENCH_SIMD_AVX2) || defined(LOBENCH_SIMD_AVX512)
  __builtin_cpu_init();  // idempotent; needed if the first call comes before main (static initialisers)
#endif
  switch (p) {
    case SimdPath::portable:
      return true;
    case SimdPath::avx2:
#if defined(LOBENCH_SIMD_AVX2)
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
#else
      return false;
#endif
    case SimdPath::avx512:
#if defined(LOBENCH_SIMD_AVX512)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("popcnt");
#else
      return false;
#endif
  }
  return false;
}

const BceTileKernels* table(SimdPath p) {
  switch (p) {
    case SimdPath::portable:
      return &kBceTileKernelsPortable;
    case SimdPath::avx2:
#if defined(LOBENCH_SIMD_AVX2)
      return &kBceTileKernelsAvx2;
#else
      return nullptr;
#endif
    case SimdPath::avx512:
#if defined(LOBENCH_SIMD_AVX512)
      return &kBceTileKernelsAvx512;
#else
      return nullptr;
#endif
  }
  return nullptr;
}

const BceTileKernels* automatic_choice() {
  if (const char* env = std::getenv("LOBENCH_SIMD_PATH"); env && *env) {
    const auto p = parse_simd_path(env);
    if (!p) throw std::invalid_argument(std::string("LOBENCH_SIMD_PATH: unknown path ") + env);
    return &bce_tile_kernels(*p);
  }
  return &bce_tile_kernels(available_simd_paths().front());
}

std::atomic<const BceTileKernels*> forced{nullptr};

}  // namespace

std::string to_string(SimdPath p) {
  switch (p) {
    case SimdPath::portable:
      return "portable";
    case SimdPath::avx2:
      return "avx2";
    case SimdPath::avx512:
      return "avx512";
  }
  return "?";
}

std::optional<SimdPath> parse_simd_path(const std::string& s) {
  for (SimdPath p : {SimdPath::portable, SimdPath::avx2, SimdPath::avx512})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

std::vector<SimdPath> available_simd_paths() {
  std::vector<SimdPath> out;
  for (SimdPath p : {SimdPath::avx512, SimdPath::avx2, SimdPath::portable})
    if (table(p) && cpu_runs(p)) out.push_back(p);
  return out;
}

const BceTileKernels& bce_tile_kernels(SimdPath path) {
  const BceTileKernels* k = table(path);
  if (!k || !cpu_runs(path))
    throw std::invalid_argument("SIMD path " + to_string(path) + " is not available in this build on this CPU");
  return *k;
}

const BceTileKernels& active_bce_tile_kernels() {
  if (const BceTileKernels* k = forced.load(std::memory_order_acquire)) return *k;
  static const BceTileKernels* const automatic = automatic_choice();
  return *automatic;
}

void set_active_simd_path(std::optional<SimdPath> path) {
  forced.store(path ? &bce_tile_kernels(*path) : nullptr, std::memory_order_release);
}

}  // namespace lobench::cpu
