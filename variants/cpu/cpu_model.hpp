// The CPU's model name as the kernel reports it: what a run file's `cpu_model` attribute and step_bench's
// JSON context record, one definition, so that both describe a machine alike (plots/perf_runs.py derives
// the machine's fingerprint from the description).
#pragma once

#include <string>

namespace lobench::cpu {

// The first "model name" of /proc/cpuinfo ("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"); "unknown"
// where there is none.
std::string cpu_model_name();

}  // namespace lobench::cpu
