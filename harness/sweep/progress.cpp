#include "harness/sweep/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "harness/sweep/printers.hpp"

namespace lobench::sweep {

Progress::Progress(std::ostream& os, double total_work, int64_t total_rows, const char* unit)
    : os_(os), total_work_(total_work), total_rows_(total_rows), unit_(unit), start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::set_total(double total_work, int64_t total_rows) {
  total_work_ = total_work;
  total_rows_ = total_rows;
}

void Progress::done(double work, double setup_seconds, bool timed) {
  done_work_ += work;
  if (timed) timed_work_ += work;
  ++done_rows_;
  const double elapsed = elapsed_seconds();
  // (no work to weigh, e.g. a --dry-run: the share of the rows)
  const double frac = total_work_ > 0   ? done_work_ / total_work_
                      : total_rows_ > 0 ? double(done_rows_) / double(total_rows_)
                                        : 1.0;
  const double rate = timed_work_ > 0 ? std::max(0.0, elapsed - setup_seconds) / timed_work_ : 0.0;  // s per work
  const double left = std::max(0.0, total_work_ - done_work_);
  // A string streamed, not fmt::print(os_, ...): fmt 9's <fmt/ostream.h> compiles fmt's whole formatting engine
  // into the file (about 2 CPU-s), while fmt::format is compiled once in libfmt (docs/reliability.md).
  os_ << fmt::format("progress: {:.0f}% of the work ({} of {} {}), elapsed {}, ETA {}\n", 100 * frac, done_rows_,
                     total_rows_, unit_, format_duration(elapsed),
                     left == 0 ? format_duration(0) : timed_work_ > 0 ? format_duration(rate * left) : "?");
  os_.flush();
}

}  // namespace lobench::sweep
