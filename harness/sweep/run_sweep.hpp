// The sweep engine of `lobench run`: plan → measure → score → record. The axes, declared once
// (sweep/run_axes.hpp), are expanded once (sweep/axes.hpp) into typed points (sweep/step_point.hpp); the plan decides every row's predicted
// memory and skip reason before anything runs (sweep/plan.hpp); each runnable row is measured
// (sweep/measure_row.hpp) on inputs shared by its group (sweep/point_inputs.hpp) against a yardstick
// measured moments before (sweep/yardstick.hpp), scored against the float64 reference
// (sweep/score.hpp), appended to the run file (io/results_file.hpp) and printed (sweep/printers.hpp).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "harness/io/results_file.hpp"
#include "harness/measure.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep/axes.hpp"
#include "harness/sweep/partition.hpp"
#include "harness/sweep/printers.hpp"
#include "harness/sweep/sharded_rows.hpp"

namespace lobench::sweep {

// Which rows run in a child process (sweep/isolated_row.hpp): by default those of plug-ins and Python
// variants (--isolate: every row; --no-isolate: none).
enum class Isolation { automatic, all, none };

struct SweepSettings {
  Axes axes;
  bool weighted = false;
  double pad_fraction = 0.0, dup_fraction = 0.0;
  int warmup = 1;
  RepPolicy reps;             // adaptive unless reps.fixed_reps > 0
  int64_t sgemm_n = 0;        // the machine yardstick's n³ product (0: by the sweep's size)
  int64_t mem_limit = 0;      // bytes; 0: available memory now minus a margin
  int64_t gpu_mem_limit = 0;  // bytes; 0: the device's free memory at start minus a margin
  bool accuracy = true;       // compute the float64 reference and the errors
  std::string out;            // the run file (HDF5); may be empty for --dry-run
  OutMode out_mode = OutMode::create_new;
  OutputFormat format = OutputFormat::text;
  Partition partition;
  // Set for `--shard KIND`: each row's step split over processes (every rank runs the same sweep; the
  // primary writes the file and prints). Not owned.
  ShardedRows* sharded = nullptr;
  Isolation isolation = Isolation::automatic;
  double row_timeout_s = 0;  // an isolated row still running after this many seconds is killed; 0: no limit
};

// Throws std::invalid_argument naming the option (--reps, --min-time, ...) that is out of range.
void check_rep_policy(const RepPolicy& r);

// --list: prints every row the sweep would run (one line each, then the count); runs and writes nothing.
void list_rows(const SweepSettings& s, std::ostream& out);
// --dry-run: prints every row's predicted memory and skip reason and, when s.out is set, writes them as
// rows with status `planned` or `skipped` (attribute dry_run = 1; such a file cannot be resumed).
void dry_run(const SweepSettings& s, const Provenance& prov, std::ostream& out, std::ostream& err);
struct IsolatedRequest;
// In an isolated row's child (sweep/isolated_row.hpp): measures the requested row of the sweep `s` and
// sends it to the parent. Records and prints nothing.
void measure_isolated_row(const SweepSettings& s, const IsolatedRequest& r);
// Runs the sweep; returns the number of failed rows.
int64_t run_sweep(const SweepSettings& s, const Provenance& prov, std::ostream& out, std::ostream& err);

}  // namespace lobench::sweep
