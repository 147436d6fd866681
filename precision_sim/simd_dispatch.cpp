// Run-time choice of the kernel table: the CPU is asked once what it supports.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/simd.hpp"

namespace lobench::precision {

namespace {

bool cpu_has(Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (isa) {
    case Isa::scalar: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return false;
#else
  return isa == Isa::scalar;
#endif
}

const detail::KernelTable* compiled(Isa isa) {
  switch (isa) {
    case Isa::scalar: return &detail::scalar_kernels();
    case Isa::avx2: return detail::avx2_kernels();
    case Isa::avx512: return detail::avx512_kernels();
  }
  return nullptr;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

bool isa_available(Isa isa) { return compiled(isa) != nullptr && cpu_has(isa); }

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512})
    if (isa_available(i)) out.push_back(i);
  return out;
}

Isa default_isa() {
  static const Isa chosen = [] {
    Isa best = available_isas().back();
    if (const char* env = std::getenv("LOBENCH_PRECISION_ISA")) {
      const std::string want(env);
      for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512})
        if (want == isa_name(i) && static_cast<int>(i) < static_cast<int>(best)) best = i;
    }
    return best;
  }();
  return chosen;
}

namespace detail {
const KernelTable& kernels_for(Isa isa) {
  const KernelTable* t = compiled(isa);
  if (!t) throw std::invalid_argument("ISA " + std::string(isa_name(isa)) + " was not compiled in");
  return *t;
}
}  // namespace detail

}  // namespace lobench::precision
