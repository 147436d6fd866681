#include "harness/shard/sharded_measure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "harness/measure.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/shard/collectives.hpp"
#include "harness/shard/sharded_step.hpp"

namespace lobench::shard {
namespace {

// The one median of lobench's timing rule (harness/measure.hpp).
double median(std::vector<double> x) { return Samples{std::move(x)}.median(); }

// Every rank's `mine` (the same count on each), rank after rank.
std::vector<double> gather_doubles(MPI_Comm c, const std::vector<double>& mine, int R) {
  std::vector<double> all(mine.size() * size_t(R));
  MPI_Allgather(mine.data(), int(mine.size()), MPI_DOUBLE, all.data(), int(mine.size()), MPI_DOUBLE, c);
  return all;
}
std::vector<int64_t> gather_ints(MPI_Comm c, const std::vector<int64_t>& mine, int R) {
  std::vector<int64_t> all(mine.size() * size_t(R));
  MPI_Allgather(mine.data(), int(mine.size()), MPI_INT64_T, all.data(), int(mine.size()), MPI_INT64_T, c);
  return all;
}

// The per-rank records from every rank's samples and counters.
void fill_ranks(MPI_Comm comm, const ShardLayout& layout, int reps, const std::vector<double>& samples,
                const std::vector<int64_t>& counters, double rss_growth, ShardedMeasurement& m) {
  const int R = layout.ranks;
  const auto all_s = gather_doubles(comm, samples, R);
  const auto all_c = gather_ints(comm, counters, R);
  const auto all_rss = gather_doubles(comm, {rss_growth}, R);
  m.ranks.resize(static_cast<size_t>(R));
  for (int r = 0; r < R; ++r) {
    RankMeasurement& k = m.ranks[size_t(r)];
    k.rank = r;
    k.vocab = layout.vocab(r);
    k.positions = layout.positions(r);
    const double* s = all_s.data() + size_t(r) * samples.size();
    k.compute_s.assign(s, s + reps);
    k.wait_s.assign(s + reps, s + 2 * reps);
    k.comm_s.assign(s + 2 * reps, s + 3 * reps);
    const int64_t* c = all_c.data() + size_t(r) * counters.size();
    k.comm_bytes_sent = c[0];
    k.comm_bytes_received = c[1];
    k.collectives = c[2];
    k.peak_working_bytes = c[3];
    k.predicted_working_bytes = c[4];
    k.io_bytes = c[5];
    k.rss_growth_bytes = all_rss[size_t(r)];
  }
}

void summarise(int reps, ShardedMeasurement& m) {
  std::vector<double> cmax(static_cast<size_t>(reps)), cmin(static_cast<size_t>(reps)), kmax(static_cast<size_t>(reps)), wmax(static_cast<size_t>(reps));
  m.step_s.assign(size_t(reps), 0.0);
  for (int i = 0; i < reps; ++i) {
    cmin[size_t(i)] = m.ranks[0].compute_s[size_t(i)];
    for (const RankMeasurement& k : m.ranks) {
      const size_t j = size_t(i);
      m.step_s[j] = std::max(m.step_s[j], k.compute_s[j] + k.wait_s[j] + k.comm_s[j]);
      cmax[j] = std::max(cmax[j], k.compute_s[j]);
      cmin[j] = std::min(cmin[j], k.compute_s[j]);
      kmax[j] = std::max(kmax[j], k.comm_s[j]);
      wmax[j] = std::max(wmax[j], k.wait_s[j]);
    }
  }
  m.step_s_median = median(m.step_s);
  m.compute_s_max = median(cmax);
  m.compute_s_min = median(cmin);
  m.comm_s_max = median(kmax);
  m.wait_s_max = median(wmax);
  m.comm_share = m.step_s_median > 0 ? m.comm_s_max / m.step_s_median : 0.0;
  m.rank_compute_s_median.clear();
  for (const RankMeasurement& k : m.ranks) m.rank_compute_s_median.push_back(median(k.compute_s));
  const auto [fastest, slowest] = std::minmax_element(m.rank_compute_s_median.begin(), m.rank_compute_s_median.end());
  m.rank_compute_s_min = *fastest;
  m.rank_compute_s_max = *slowest;
  m.rss_growth_bytes_max = 0;
  for (const RankMeasurement& k : m.ranks)
    m.rss_growth_bytes_max = std::isnan(k.rss_growth_bytes) || std::isnan(m.rss_growth_bytes_max)
                                 ? std::numeric_limits<double>::quiet_NaN()
                                 : std::max(m.rss_growth_bytes_max, k.rss_growth_bytes);
  for (const RankMeasurement& k : m.ranks) {
    m.comm_bytes_max = std::max(m.comm_bytes_max, k.comm_bytes_sent);
    m.comm_bytes_sum += k.comm_bytes_sent;
    const int64_t peak = k.peak_working_bytes + k.io_bytes;
    m.peak_bytes_max = std::max(m.peak_bytes_max, peak);
    m.peak_bytes_sum += peak;
    m.predicted_bytes_max = std::max(m.predicted_bytes_max, k.predicted_working_bytes + k.io_bytes);
  }
}

}  // namespace

ShardedMeasurement measure_sharded_point(MPI_Comm comm, const Shape& shape, const SyntheticSpec& spec,
                                         const std::string& variant_name, const RunOptions& options, ShardKind kind,
                                         int warmup, int reps, const ShardOptions& so) {
  if (reps < 1) throw std::invalid_argument(fmt::format("need reps >= 1, got {}", reps));
  RepPolicy fixed;
  fixed.fixed_reps = reps;
  return measure_sharded_point(comm, shape, spec, variant_name, options, kind, warmup, fixed, so);
}

ShardedMeasurement measure_sharded_point(MPI_Comm comm, const Shape& shape, const SyntheticSpec& spec,
                                         const std::string& variant_name, const RunOptions& options, ShardKind kind,
                                         int warmup, const RepPolicy& policy, const ShardOptions& so) {
  validate(shape);
  if (warmup < 0) throw std::invalid_argument(fmt::format("need warmup >= 0, got {}", warmup));
  const Variant* v = Registry::instance().find(variant_name);
  if (!v) throw std::invalid_argument(fmt::format("unknown variant '{}' (see `lobench list`)", variant_name));
  int R = 1;
  MPI_Comm_size(comm, &R);
  ShardedMeasurement m;
  m.layout = make_layout(kind, R, shape.V, shape.P(), so.vocab_parts, so.split);
  m.variant = v->backend() + "/" + v->name();
  m.mpi_library = mpi_library_version();
  const ShardComms comms(comm, m.layout);
  const int me = comms.rank;

  // Every rank checks its block before anyone allocates it; one failure stops all, with its message.
  std::string error = rank_preflight(*v, shape, m.layout, me, options, so.rank_mem_limit);
  ShardData data;
  if (error.empty()) {
    try {
      data = synthetic_shard(shape, spec, m.layout, me);
    } catch (const std::exception& e) {
      error = fmt::format("cannot draw its shard: {}", e.what());
    }
  }
  agree_or_throw(comm, error, me);

  CountingAllocator alloc;
  RunContext ctx{alloc, options};
  ShardResult result;
  ShardTimes t;
  std::vector<double> compute_s, wait_s, comm_s;
  std::optional<meters::PeakRssMeter> rss;  // over the timed repeats, as the sweep meters one process
  int run = 0;
  // The sweep's rule (collect_samples: warm-ups dropped, then repeats until the policy has enough). Its
  // sample is the step's time, the slowest rank's compute + wait + comm, the same number on every rank,
  // so every rank makes the same decision and they stop together.
  const Samples steps = collect_samples(
      [&] {
        MPI_Barrier(comm);  // every repeat starts together, so the slowest rank's time is the step's
        const bool timed = run++ >= warmup;
        if (timed && !rss) rss.emplace();
        sharded_step(comms, m.layout, data, *v, ctx, result, t);
        double step = t.compute_s + t.wait_s + t.comm.seconds;
        MPI_Allreduce(MPI_IN_PLACE, &step, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (timed) {
          compute_s.push_back(t.compute_s);
          wait_s.push_back(t.wait_s);
          comm_s.push_back(t.comm.seconds);
        }
        return step;
      },
      warmup, policy);
  const int reps = int(steps.seconds.size());
  if (reps < 1) throw std::invalid_argument("the repetition policy allowed no timed repeat");
  std::vector<double> samples = compute_s;
  samples.insert(samples.end(), wait_s.begin(), wait_s.end());
  samples.insert(samples.end(), comm_s.begin(), comm_s.end());
  const std::vector<int64_t> counters{t.comm.bytes_sent,
                                      t.comm.bytes_received,
                                      t.comm.collectives,
                                      alloc.peak_bytes(),
                                      predicted_rank_working_bytes(*v, shape, m.layout, me, options),
                                      rank_io_bytes(shape, m.layout, me)};
  fill_ranks(comm, m.layout, reps, samples, counters, rss->growth_bytes(), m);
  summarise(reps, m);
  m.loss = result.loss;
  if (so.gather) {
    StepOutputs whole = gather_whole(comms, m.layout, result, shape.D);
    if (me == 0) m.whole = std::move(whole);
  }
  return m;
}

bool mpi_world_size_above_one() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (initialised && !finalised) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size > 1;
  }
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {  // Open MPI; MPICH, Intel MPI and srun
    if (const char* v = std::getenv(var)) return std::atoi(v) > 1;
  }
  return false;
}

}  // namespace lobench::shard
