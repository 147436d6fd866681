#include "harness/sweep/driver.hpp"

#include <fmt/format.h>

#include <ostream>
#include <stdexcept>

#include "harness/io/interrupt_guard.hpp"
#include "harness/sweep/progress.hpp"

namespace lobench::sweep {
namespace {

// Where the progress line goes when nobody reads it: a stream without a buffer, which drops everything.
std::ostream& discard() {
  static std::ostream sink(nullptr);
  return sink;
}

void count(DriveResult& r, PointStatus s) {
  switch (s) {
    case PointStatus::ok: ++r.ok; break;
    case PointStatus::skipped: ++r.skipped; break;
    case PointStatus::failed: ++r.failed; break;
    case PointStatus::interrupted: break;  // not finished: kept as interrupted, run again by --resume
  }
}

}  // namespace

std::vector<int64_t> partition_indices(int64_t size, const Partition& part) {
  std::vector<int64_t> mine;
  for (int64_t i = part.index; i < size; i += part.count) mine.push_back(i);
  return mine;
}

void list_points(const SweepJob& job, const Partition& part, std::ostream& out, const char* unit) {
  const std::vector<int64_t> mine = partition_indices(job.size(), part);
  for (int64_t i : mine) out << job.describe(i) << '\n';
  out << mine.size() << ' ' << unit << '\n';
}

DriveResult drive(SweepJob& job, const DriveSettings& s) {
  const std::vector<PlannedPoint> planned = job.plan(partition_indices(job.size(), s.partition));
  job.begin(planned);
  double total_work = 0;
  for (const PlannedPoint& p : planned) total_work += p.work;
  Progress progress(s.progress ? *s.progress : discard(), total_work, int64_t(planned.size()), s.unit);
  DriveResult r;
  r.points = int64_t(planned.size());
  for (const PlannedPoint& p : planned) {
    // Between points: a signal stops the sweep here, every finished point kept (the ranks agree).
    r.stopped_by = int(s.agree_on_signal ? s.agree_on_signal(io::interrupt_signal()) : io::interrupt_signal());
    if (r.stopped_by != 0) break;
    if (s.resume && job.recorded(p)) {
      ++r.kept;
      progress.done(p.work, job.setup_seconds(), /*timed=*/false);
      continue;
    }
    const PointStatus status = job.execute(p);
    if (status == PointStatus::interrupted) {
      // (ranks stop a point together on the signal any of them saw: one that saw none itself takes theirs,
      // so that every rank ends as interrupted; collective, as every rank is here)
      r.stopped_by = int(s.agree_on_signal ? s.agree_on_signal(io::interrupt_signal()) : io::interrupt_signal());
      break;
    }
    count(r, status);
    // (a skipped point, refused at planning or by its variant, took no time of its work's share)
    progress.done(p.work, job.setup_seconds(), /*timed=*/status != PointStatus::skipped);
  }
  r.wall_seconds = progress.elapsed_seconds();
  job.end(r);
  if (r.stopped_by != 0) throw io::Interrupted(r.stopped_by, job.stopped_detail(r));
  return r;
}

void refuse_with_resume(bool resume, std::initializer_list<std::pair<const char*, bool>> options) {
  if (!resume) return;
  for (const auto& [name, given] : options)
    if (given) throw std::invalid_argument(fmt::format("--resume continues a sweep's run files; it does not take {}", name));
}

}  // namespace lobench::sweep
