// Plan: every row of a sweep with its predicted memory and, where it cannot run, why — decided before
// anything is measured or allocated (the yardstick and the inputs included), so that a point too big
// for the machine is recorded as skipped instead of being attempted.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/io/result_row.hpp"
#include "harness/sweep/step_point.hpp"

namespace lobench::sweep {

struct MemoryLimits {
  int64_t host_bytes = 0;  // inputs, outputs, the reference and a CPU variant's working set
  int64_t gpu_bytes = 0;   // a GPU variant's working set and its copy of the inputs/outputs; 0: no limit known
};

struct PlannedRow {
  StepPoint point;
  int64_t index = -1;  // the point's index in the whole sweep (what an isolated row's child is told)
  const Variant* variant = nullptr;
  io::ResultRow row;  // identity, predicted bytes, and for a skipped row its status and reason
  bool skipped = false;
  bool want_reference = false;  // the float64 reference fits beside the row
  double work = 0;              // P·V·D: the ETA's unit of work
};

// The default --gpu-mem-limit: the device's free memory minus max(1 GiB, 5 % of its total); 0 without one.
int64_t default_gpu_memory_limit();

// The row's identity columns for a point (variant, backend, shape, options, seed).
io::ResultRow identity_row(const StepPoint& pt, const Variant& v);

std::vector<PlannedRow> plan_rows(const std::vector<StepPoint>& points, const MemoryLimits& limits, bool accuracy,
                                  int warmup, int reps);

// The row's predicted working memory (r.row.predicted_bytes) and, from it and the limits, whether it runs:
// skipped (the variant's skip reason, or memory) or failed (what the variant's code threw, or a negative
// prediction), with the reason. plan_rows calls it for every row; a sweep again for the rows whose fp32
// tiles' products are chosen after planning (their working memory depends on the choice).
void predict_memory(PlannedRow& r, const MemoryLimits& limits);

}  // namespace lobench::sweep
