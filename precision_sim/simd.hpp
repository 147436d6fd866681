// Which instruction set the array kernels use. The best one the CPU supports is chosen at run time
// (__builtin_cpu_supports); every choice gives bit-identical results, so this only matters for speed,
// for tests that compare the paths, and for benchmarks. The environment variable
// LOBENCH_ISA=portable|avx2|avx512 forces a path for every kernel family (precision_sim/cpu_dispatch.hpp).
#pragma once

#include <string_view>
#include <vector>

namespace lobench::precision {

enum class Isa { scalar, avx2, avx512 };

std::string_view isa_name(Isa isa);
// Compiled in and supported by this CPU.
bool isa_available(Isa isa);
// The ISAs isa_available() accepts, scalar first.
std::vector<Isa> available_isas();
// The default: the best available, or the one LOBENCH_ISA forces (throws if it is not available).
Isa default_isa();

}  // namespace lobench::precision
