// The one place that asks the CPU which instruction sets it runs, and the one environment variable that
// forces a path: both kernel families chosen at run time (precision_sim's array kernels and the BCE
// tile kernels in variants/bce) use it, so `LOBENCH_ISA=avx2` means the same to every kernel.
// A leaf: it depends on nothing else in the project.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

namespace lobench::cpu_dispatch {

enum class Isa { portable, avx2, avx512 };  // in increasing order of capability

std::string_view name(Isa isa);  // "portable", "avx2", "avx512"
// Also accepts "scalar" for portable (the name precision_sim used before).
std::optional<Isa> parse(std::string_view text);

// Whether this CPU runs code compiled for `isa`. AVX2 kernels use FMA and popcnt; AVX-512 kernels
// use the F, DQ, BW and VL subsets and popcnt: each path is checked for everything either family needs.
bool cpu_supports(Isa isa);

// The path named by LOBENCH_ISA, or nothing when it is unset or empty. Throws std::invalid_argument
// naming the variable and the valid names when it holds anything else.
std::optional<Isa> forced_by_environment();

// The path a kernel family compiled for `compiled` should run: the one LOBENCH_ISA forces (throws
// std::invalid_argument when it is not compiled in or this CPU cannot run it), else the most capable
// one that is compiled in and supported.
Isa choose(std::initializer_list<Isa> compiled);

}  // namespace lobench::cpu_dispatch
