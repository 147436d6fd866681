// A progress line with an ETA on stderr, by work done (P·V·D of the rows finished) rather than by
// row count, since a sweep's rows differ in size by orders of magnitude.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>

namespace lobench::sweep {

class Progress {
 public:
  // `unit`: what is counted ("rows" of `lobench run`, "runs" of the training commands).
  Progress(std::ostream& os, double total_work, int64_t total_rows, const char* unit = "rows");
  // One more point finished (measured; with timed false skipped or already recorded: no time of this
  // run's). setup_seconds: the job's one-off measurements so far (SweepJob::setup_seconds), which the
  // ETA leaves out: the rate of work is (elapsed − setup) over the work of the timed points.
  void done(double work, double setup_seconds = 0.0, bool timed = true);
  // A new estimate of the whole (an adaptive sweep, e.g. the frontier's bisections, learns its size as
  // it goes): the work and the points in all, those done included.
  void set_total(double total_work, int64_t total_rows);
  double elapsed_seconds() const;

 private:
  std::ostream& os_;
  double total_work_, done_work_ = 0, timed_work_ = 0;
  int64_t total_rows_, done_rows_ = 0;
  const char* unit_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lobench::sweep
