// The part of a row that runs the variant: its inputs made (or reused from the previous row), its steps
// timed, its outputs checked (sweep/check_outputs.hpp) and scored against the float64 reference. What
// runs in-process for a row that is not isolated, and in the child for one that is
// (sweep/isolated_row.hpp); the yardsticks around it and the timing columns stay with the parent.
#pragma once

#include <vector>

#include "harness/io/result_row.hpp"
#include "harness/measure.hpp"
#include "harness/sweep/plan.hpp"
#include "harness/sweep/point_inputs.hpp"

namespace lobench::sweep {

class RowMeasurer {
 public:
  RowMeasurer(const SyntheticSpec& synthetic, int warmup, const RepPolicy& reps, bool accuracy)
      : syn_(synthetic), warmup_(warmup), reps_(reps), accuracy_(accuracy) {}

  // Sets the row's measured columns (bytes, meters, loss and errors), its status (`ok`, `failed` with the
  // reason, or `skipped` when E does not fit its format) and returns its samples (none unless `ok`).
  // Exceptions of the variant become a failed row.
  std::vector<double> measure(const PlannedRow& plan, io::ResultRow& row);
  // The share of time the last measured row's threads waited for a CPU (meters/run_queue_wait.hpp);
  // kNotMeasured before any. Above kBusyThreshold the row is flagged `busy` and its reason says so.
  double last_cpu_wait_fraction() const { return cpu_wait_; }

 private:
  std::vector<double> measure_checked(const PlannedRow& plan, io::ResultRow& row);

  SyntheticSpec syn_;
  int warmup_;
  RepPolicy reps_;
  bool accuracy_;
  PointInputs inputs_;
  double cpu_wait_ = io::kNotMeasured;
};

// The columns measure() sets, copied from a row measured elsewhere (an isolated row's child).
void copy_measured_columns(const io::ResultRow& from, io::ResultRow& to);

}  // namespace lobench::sweep
