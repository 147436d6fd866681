// Run-time choice of the kernel table: the CPU is asked once what it supports.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "precision_sim/cpu_dispatch.hpp"
#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/simd.hpp"

namespace lobench::precision {

namespace {

cpu_dispatch::Isa to_dispatch(Isa isa) {
  switch (isa) {
    case Isa::scalar: return cpu_dispatch::Isa::portable;
    case Isa::avx2: return cpu_dispatch::Isa::avx2;
    case Isa::avx512: return cpu_dispatch::Isa::avx512;
  }
  return cpu_dispatch::Isa::portable;
}

bool cpu_has(Isa isa) { return cpu_dispatch::cpu_supports(to_dispatch(isa)); }

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
  // LOBENCH_ISA forces a path (cpu_dispatch.hpp); otherwise the best one compiled in and supported.
  static const Isa chosen = [] {
    if (const auto want = cpu_dispatch::forced_by_environment()) {
      for (Isa i : available_isas())
        if (to_dispatch(i) == *want) return i;
      throw std::invalid_argument("LOBENCH_ISA=" + std::string(cpu_dispatch::name(*want)) +
                                  ": that path is not compiled into this build or this CPU cannot run it");
    }
    return available_isas().back();
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
