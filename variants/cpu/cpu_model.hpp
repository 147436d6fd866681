// The CPU's model name as the kernel reports it: what a run file's `cpu_model` attribute and step_bench's
// JSON context record, one definition, so that both describe a machine alike (plots/perf_runs.py derives
// the machine's fingerprint from the description).
#pragma once

#include <string>

namespace lobench::cpu {

// The first "model name" of /proc/cpuinfo ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"); "unknown"
// where there is none.
std::string cpu_model_name();

// Which CPU it is, where the model name does not say (a KVM guest reports "AMD EPYC" on a Zen 3 and a
// Zen 5 alike): "family 26 model 2 stepping 0 (AuthenticAMD)", from the first processor of /proc/cpuinfo;
// "unknown" where it has no such fields.
std::string cpu_identity();

// The instruction-set flags lobench's kernels and the libraries' can use, of those the CPU reports (a
// guest may hide AVX-512 or AMX under the same model): "avx2,fma,avx512f,...,amx_bf16"; "none".
std::string cpu_simd_flags();

}  // namespace lobench::cpu
