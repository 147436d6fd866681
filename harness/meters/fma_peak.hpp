// The physical ceiling beside the SGEMM yardstick: the rate of fused multiply-adds on registers only
// (no loads, no stores), the widest vector unit this CPU has, on `threads` threads at once, each
// timing itself (the sum of their rates; two threads on one SMT core share its units and show it). No SGEMM
// or BCE step can exceed it; the fraction of it an SGEMM reaches says how much the yardstick leaves.
#pragma once

#include <limits>
#include <string>

namespace lobench::meters {

struct FmaPeak {
  double gflops = std::numeric_limits<double>::quiet_NaN();  // the fastest of the timed runs
  std::string isa;  // "avx512", "avx2" (both with FMA) or "portable" (scalar std::fma, a lower bound)
};

// Independent chains of vector FMAs, enough of them to cover the FMA latency of every current x86 core
// (12 on AVX2: 16 registers; 16 on AVX-512); per thread the fastest of `runs` runs of about 2 ms (how many:
// measure_machine_limits).
FmaPeak fma_peak(int threads, int runs);

}  // namespace lobench::meters
