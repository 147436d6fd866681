// The one sweep driver: every command that runs a sweep (`lobench run`'s step points, `train-xmc`'s and
// `train-seqrec`'s training runs) is a SweepJob, and drive() does for all of them what a sweep needs
// beside its points: the partition of a job array (`--partition K/N`: points i with i % N == K), the
// plan before anything runs (each point's key, work and, through the job, its predicted memory and skip
// reason), `--resume` (points already recorded are kept, not run again), a signal stopping the sweep
// between points (io/interrupt_guard.hpp) with every finished point kept and the message that says how
// to continue, and the progress line with its ETA (sweep/progress.hpp). The job says what a point is,
// how it is planned, recorded and run; the driver owns the order of those steps, and `--list`.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "harness/provenance.hpp"
#include "harness/sweep/partition.hpp"

namespace lobench::sweep {

// One point of this partition, as planned before anything runs.
struct PlannedPoint {
  int64_t index = 0;  // in the whole sweep (before partitioning)
  std::string key;    // identity in the record: what --resume looks for
  double work = 1;    // the ETA's unit (the job's measure of cost; a skipped point still counts its share)
};

// What became of one point.
enum class PointStatus { ok, skipped, failed, interrupted };

struct DriveResult {
  int64_t points = 0;                          // of this partition
  int64_t ok = 0, skipped = 0, failed = 0;     // run (or recorded as skipped) by this process
  int64_t kept = 0;                            // recorded already (--resume), not run again
  int stopped_by = 0;                          // the signal that stopped the sweep; 0: it ran to the end
  double wall_seconds = 0;
  int64_t finished() const { return ok + skipped + failed + kept; }
};

class SweepJob {
 public:
  virtual ~SweepJob() = default;
  // The points of the whole sweep (the partition is taken from them by index).
  virtual int64_t size() const = 0;
  // Plans the points of this partition (indices into the whole sweep, ascending), in that order:
  // their keys and work, and whatever the job decides before anything runs (memory, skip reasons).
  virtual std::vector<PlannedPoint> plan(const std::vector<int64_t>& indices) = 0;
  // Opens the record (a run file, a folder) once the plan is known; prints what the sweep will do.
  virtual void begin(const std::vector<PlannedPoint>& /*planned*/) {}
  // --resume: whether the point is in the record already (then it is kept, not run again).
  virtual bool recorded(const PlannedPoint& p) const = 0;
  // Runs the point, or records it as skipped; records the outcome. A failure of the point is its
  // status (the sweep goes on); an exception ends the sweep. `interrupted`: a signal stopped the point
  // itself (between epochs or steps); the job has kept what it did.
  virtual PointStatus execute(const PlannedPoint& p) = 0;
  // Seconds spent so far on what is measured once, not per point (the machine's limits), inside
  // execute(): the progress line's ETA leaves them out of the rate of work.
  virtual double setup_seconds() const { return 0.0; }
  // Closes the record, normally or after a signal stopped the sweep.
  virtual void end(const DriveResult& /*result*/) {}
  // What the Interrupted message says after "interrupted by SIGNAL: " (how much is kept where, how to
  // continue), once end() has run.
  virtual std::string stopped_detail(const DriveResult& r) const = 0;
  // --list: the point's line (what it is; no planning, nothing read or written).
  virtual std::string describe(int64_t index) const = 0;
};

struct DriveSettings {
  Partition partition;
  bool resume = false;  // ask recorded() before each point
  // The progress line ("progress: 40% of the work (2 of 5 ...), elapsed, ETA") after each point; null: none.
  std::ostream* progress = nullptr;
  const char* unit = "rows";  // what the progress line counts
  // A sharded sweep: every rank must stop at the same point, so the ranks agree on the signal each saw
  // (every rank calls it before each point, in order). Empty: this process's own signal.
  std::function<int64_t(int64_t)> agree_on_signal;
};

// The indices of the whole sweep of `size` points that `part` runs, ascending.
std::vector<int64_t> partition_indices(int64_t size, const Partition& part);

// --list: the line of every point of `part`, then "N <unit>"; plans, runs and writes nothing.
void list_points(const SweepJob& job, const Partition& part, std::ostream& out, const char* unit);

// --list of a training command (train-xmc, train-seqrec: one run file a point, "runs"): its Job made from
// the command's spec (which has .partition) with nothing to record, then list_points.
template <typename Job, typename Spec>
void list_runs(const Spec& spec, std::ostream& out) {
  const Provenance none;  // nothing is recorded
  const Job job(spec, none, out, out);
  list_points(job, spec.partition, out, "runs");
}

// --resume continues a sweep's run files: it refuses the first of `options` ({name, given}) that was given
// (e.g. --overwrite, --dry-run), naming it. The one check for every command that resumes.
void refuse_with_resume(bool resume, std::initializer_list<std::pair<const char*, bool>> options);

// Plans, begins, runs every point of the partition (keeping those recorded when resuming), ends.
// Throws io::Interrupted (after end()) when a signal stopped the sweep; otherwise returns the counts.
DriveResult drive(SweepJob& job, const DriveSettings& settings);

}  // namespace lobench::sweep
