#include "variants/bce/bce_tile.hpp"

#include "precision_sim/cpu_dispatch.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace lobench::cpu {
namespace {

// Which of the optional translation units the build compiled, and whether this CPU runs them. The
// kernels use popcnt as well; every CPU with AVX2 has it, but it is checked all the same.
cpu_dispatch::Isa to_dispatch(SimdPath p) {
  switch (p) {
    case SimdPath::portable: return cpu_dispatch::Isa::portable;
    case SimdPath::avx2: return cpu_dispatch::Isa::avx2;
    case SimdPath::avx512: return cpu_dispatch::Isa::avx512;
  }
  return cpu_dispatch::Isa::portable;
}

// Whether this CPU runs a path (the one feature check of cpu_dispatch.hpp, shared with precision_sim).
bool cpu_runs(SimdPath p) { return cpu_dispatch::cpu_supports(to_dispatch(p)); }

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

// LOBENCH_ISA forces a path (throws if it is not available); otherwise the best one available.
const BceTileKernels* automatic_choice() {
  if (const auto want = cpu_dispatch::forced_by_environment()) {
    for (SimdPath p : available_simd_paths())
      if (to_dispatch(p) == *want) return &bce_tile_kernels(p);
    throw std::invalid_argument("LOBENCH_ISA=" + std::string(cpu_dispatch::name(*want)) +
                                ": that path is not compiled into this build or this CPU cannot run it");
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

const BceTileKernels& bce_tile_kernels_for(Epilogue e) {
  switch (e) {
    case Epilogue::fp32: break;
    case Epilogue::bf16: return kBceTileKernelsBf16Epilogue;
    case Epilogue::fp16: return kBceTileKernelsFp16Epilogue;
  }
  return active_bce_tile_kernels();
}

void set_active_simd_path(std::optional<SimdPath> path) {
  forced.store(path ? &bce_tile_kernels(*path) : nullptr, std::memory_order_release);
}

}  // namespace lobench::cpu
