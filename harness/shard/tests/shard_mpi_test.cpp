// The sharded step under mpirun (-np 2 and -np 3 in ctest): on ragged cases it equals the float64
// reference by the accuracy rules and the single-process run of the same variant, counts exact, memory
// exactly as predicted on every rank, bit-identical when repeated; a rank that cannot run stops every
// rank with its message. Every test is collective: checks use EXPECT (never a returning ASSERT) so
// that no rank leaves a collective the others are in.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "harness/shard/collectives.hpp"
#include "harness/shard/compare.hpp"
#include "harness/shard/sharded_measure.hpp"
#include "harness/shard/sharded_step.hpp"
#include "variants/reference.hpp"

namespace lobench::shard {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
RunOptions one_thread() {
  RunOptions o;
  o.threads = 1;
  return o;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

struct Case {
  Shape shape;
  SyntheticSpec spec;
  ShardKind kind;
  Split split;
  std::string variant;
  std::string name() const {
    return fmt::format("{} {} {} V={} P={} D={} L={} {}{} pad {} dup {}", variant, to_string(kind), to_string(split),
                       shape.V, shape.P(), shape.D, shape.L, to_string(shape.reduction),
                       shape.weighted ? " weighted" : "", spec.pad_fraction, spec.dup_fraction);
  }
};

// The sharded point follows the sweep's repetition rule (collect_samples): an adaptive policy whose
// time target is never reached stops at max_reps, on every rank at once (the decision is made on the
// slowest rank's step time, which every rank holds).
TEST(ShardMpi, RepeatsFollowTheSweepsRepetitionPolicy) {
  RepPolicy policy;
  policy.min_reps = 2;
  policy.max_reps = 4;
  policy.min_time_s = 1e9;  // never enough time: stops at max_reps
  policy.max_time_s = 1e9;
  const ShardedMeasurement m = measure_sharded_point(MPI_COMM_WORLD, Shape{1, 16, 1000, 8, 3, Reduction::mean, false},
                                                     SyntheticSpec{}, "fused", one_thread(), ShardKind::vocab, 1, policy);
  ASSERT_EQ(m.step_s.size(), 4u);
  for (const RankMeasurement& r : m.ranks) {
    EXPECT_EQ(r.compute_s.size(), 4u) << "rank " << r.rank;
    EXPECT_EQ(r.comm_s.size(), 4u) << "rank " << r.rank;
  }
  EXPECT_DOUBLE_EQ(m.step_s_median, Samples{m.step_s}.median());
  RepPolicy none;
  none.fixed_reps = 0;
  none.min_reps = 0;
  none.max_reps = 0;
  EXPECT_THROW(measure_sharded_point(MPI_COMM_WORLD, Shape{1, 16, 1000, 8, 3, Reduction::mean, false}, SyntheticSpec{},
                                     "fused", one_thread(), ShardKind::vocab, 0, none),
               std::invalid_argument);
}

// Runs the case sharded over every rank, twice; rank 0 compares.
void expect_case_matches(const Case& c) {
  ShardOptions so;
  so.split = c.split;
  so.gather = true;
  const RunOptions opts = one_thread();
  const ShardedMeasurement a = measure_sharded_point(MPI_COMM_WORLD, c.shape, c.spec, c.variant, opts, c.kind, 0, 1, so);
  const ShardedMeasurement b = measure_sharded_point(MPI_COMM_WORLD, c.shape, c.spec, c.variant, opts, c.kind, 1, 2, so);
  EXPECT_EQ(a.loss, b.loss) << c.name();  // every rank holds the loss
  for (const RankMeasurement& r : a.ranks) {
    EXPECT_EQ(r.peak_working_bytes, r.predicted_working_bytes) << c.name() << " rank " << r.rank;
    EXPECT_EQ(r.comm_s.size(), 1u);
  }
  EXPECT_EQ(b.ranks[0].compute_s.size(), 2u);
  // Per-rank compute time: each rank's median of its own samples, the extremes over the ranks; no rank
  // computes longer than the step (its compute is part of every repeat's slowest-rank total).
  ASSERT_EQ(b.rank_compute_s_median.size(), b.ranks.size()) << c.name();
  for (size_t r = 0; r < b.ranks.size(); ++r) {
    const auto& s = b.ranks[r].compute_s;
    EXPECT_DOUBLE_EQ(b.rank_compute_s_median[r], 0.5 * (s[0] + s[1])) << c.name() << " rank " << r;
    EXPECT_GE(b.rank_compute_s_median[r], b.rank_compute_s_min) << c.name();
    EXPECT_LE(b.rank_compute_s_median[r], b.rank_compute_s_max) << c.name();
  }
  EXPECT_GT(b.rank_compute_s_min, 0.0) << c.name();
  EXPECT_LE(b.rank_compute_s_max, b.step_s_median) << c.name();
  EXPECT_LE(b.comm_s_max, b.step_s_median) << c.name();
  // The resident-set growth: every rank's (NaN where the kernel refuses the meter), the largest recorded.
  // No sign is asserted: at these sizes it is a few pages either way (the kernel's per-thread RSS
  // counters lag by up to 64 pages each), which is what the meter is, not what this code computes.
  double largest = 0;
  for (const RankMeasurement& r : b.ranks) {
    if (std::isnan(r.rss_growth_bytes)) largest = r.rss_growth_bytes;
    if (!std::isnan(largest)) largest = std::max(largest, r.rss_growth_bytes);
  }
  if (std::isnan(largest)) EXPECT_TRUE(std::isnan(b.rss_growth_bytes_max)) << c.name();
  else EXPECT_EQ(b.rss_growth_bytes_max, largest) << c.name();
  if (world_rank() != 0) return;
  const StepData whole = make_synthetic(c.shape, c.spec);
  const StepInputs in = whole.view();
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(in, ref, alloc, 1);
  StepOutputs single;
  single.resize(in.P, in.V, in.D);
  RunContext ctx{alloc, opts};
  Registry::instance().find(c.variant)->run(in, single, ctx);

  const Errors vs_ref = errors_against_reference(*a.whole, ref, in.P, in.V, in.D);
  const Errors vs_single = errors_against_run(*a.whole, single, ref.near_zero.data());
  EXPECT_TRUE(vs_ref.within_tolerance()) << c.name() << ": vs reference " << vs_ref.describe();
  EXPECT_TRUE(vs_single.within_tolerance()) << c.name() << ": vs single process " << vs_single.describe();
  // Counts are exact: with no logit near zero they equal the reference's at every position.
  for (int64_t p = 0; p < in.P; ++p) {
    if (ref.near_zero[p] != 0) continue;
    for (int k = 0; k < 4; ++k) EXPECT_EQ(a.whole->counts[size_t(p * 4 + k)], ref.counts[p * 4 + k]) << c.name() << " p " << p;
  }
  int64_t total = 0;
  for (int64_t p = 0; p < in.P; ++p)
    for (int k = 0; k < 4; ++k) total += a.whole->counts[size_t(p * 4 + k)];
  EXPECT_EQ(total, in.P * in.V) << c.name();  // TP+FP+FN+TN = V at every position, summed over shards
  EXPECT_EQ(outputs_hash(*a.whole), outputs_hash(*b.whole)) << c.name() << ": two runs differ";
}

SyntheticSpec ragged_spec(uint64_t seed) {
  SyntheticSpec s;
  s.seed = seed;
  s.pad_fraction = 0.2;
  s.dup_fraction = 0.25;
  s.zero_weight_fraction = 0.2;
  return s;
}

TEST(ShardedStep, EveryVariantKindAndReductionOnRaggedCases) {
  const int R = world_size();
  // V = 1001 is divisible by neither 2 nor 3; P = 2·17 neither by 3.
  for (const char* variant : {"dense", "chunked", "fused"})
    for (ShardKind kind : {ShardKind::vocab, ShardKind::positions, ShardKind::grid})
      for (Reduction red : {Reduction::mean, Reduction::sum})
        for (bool weighted : {false, true}) {
          Case c{Shape{2, 17, 1001, 24, 5, red, weighted}, ragged_spec(uint64_t(R * 10 + weighted)), kind, Split::balanced,
                 variant};
          expect_case_matches(c);
        }
}

TEST(ShardedStep, RanksHoldingNothing) {
  const int R = world_size();
  // V < R: the last rank holds no rows of E (balanced); blocked with V = R + 1 > R leaves the tail empty
  // at R = 3 (ceil(4/3) = 2: [0,2) [2,4) [4,4)); P < R: a rank without positions.
  for (const char* variant : {"fused", "chunked", "dense"}) {
    expect_case_matches({Shape{1, 9, R - 1, 8, 3, Reduction::mean, true}, ragged_spec(3), ShardKind::vocab, Split::balanced, variant});
    expect_case_matches({Shape{1, 9, R + 1, 8, 3, Reduction::sum, false}, ragged_spec(4), ShardKind::vocab, Split::blocked, variant});
    expect_case_matches({Shape{1, R - 1, 300, 8, 3, Reduction::mean, true}, ragged_spec(5), ShardKind::positions, Split::balanced, variant});
    expect_case_matches({Shape{1, 1, 7, 8, 2, Reduction::mean, true}, ragged_spec(6), ShardKind::grid, Split::blocked, variant});
  }
}

// Each rank's resident-set growth over the timed repeats meets its counted peak when the working set is
// large (dense: three [P, V/R] buffers, ~48 MB over 2 ranks): at least 90 % of it, at most 16 MiB more,
// the bounds the sweep's own meter test uses for one process.
TEST(ShardedStep, ResidentSetGrowthMeetsTheCountedPeakOnEveryRank) {
  const ShardedMeasurement m = measure_sharded_point(MPI_COMM_WORLD, Shape{1, 128, 60000, 8, 3, Reduction::mean, false},
                                                     {}, "dense", one_thread(), ShardKind::vocab, 1, 2);
  for (const RankMeasurement& r : m.ranks) {
    if (std::isnan(r.rss_growth_bytes)) continue;  // the kernel refused the meter's reset
    const double peak = double(r.peak_working_bytes);
    EXPECT_GE(r.rss_growth_bytes, 0.9 * peak) << "rank " << r.rank << " peak " << peak;
    EXPECT_LE(r.rss_growth_bytes, peak + 16.0 * 1048576) << "rank " << r.rank << " peak " << peak;
  }
}

TEST(ShardedStep, AllWeightsZeroGivesZeroLossOnEveryRank) {
  SyntheticSpec spec = ragged_spec(9);
  spec.zero_weight_fraction = 1.0;
  for (ShardKind kind : {ShardKind::vocab, ShardKind::positions}) {
    ShardOptions so;
    so.gather = true;
    const auto m = measure_sharded_point(MPI_COMM_WORLD, Shape{1, 10, 50, 4, 2, Reduction::mean, true}, spec, "fused",
                                         one_thread(), kind, 0, 1, so);
    EXPECT_EQ(m.loss, 0.0);
    if (world_rank() == 0) {
      for (float g : m.whole->dA) EXPECT_EQ(g, 0.0f);
    }
  }
}

// The fixed-order sum: rank order, the same bits on every rank, whatever the length (pieces included).
TEST(Collectives, OrderedSumIsTheRankOrderSum) {
  const int R = world_size(), me = world_rank();
  // Up to 256 doubles take the gather path, 257 and more the all-to-all: the same bits either way.
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(7), int64_t(256), int64_t(257), int64_t(5000)}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = std::ldexp(1.0 + 0.1 * double(i), 50 * (me % 2)) + 0.3 * me;
    CountingAllocator alloc;
    CommStats st;
    ordered_sum(MPI_COMM_WORLD, x.data(), n, alloc, st);
    for (int64_t i = 0; i < n; ++i) {
      double want = 0.0;
      for (int r = 0; r < R; ++r) {
        const double v = std::ldexp(1.0 + 0.1 * double(i), 50 * (r % 2)) + 0.3 * r;
        want = r == 0 ? v : want + v;
      }
      EXPECT_EQ(x[size_t(i)], want) << "n " << n << " i " << i;
    }
    EXPECT_EQ(alloc.peak_bytes(), ordered_sum_buffer_bytes(n, R, 8, me));
    EXPECT_EQ(alloc.current_bytes(), 0);
    if (n > 0) {
      EXPECT_GT(st.bytes_sent, 0);
    }
  }
}

// A rank that cannot run its shard stops every rank with its own message: no hang, no silent result.
TEST(RankFailures, PredictedOutOfMemoryOnOneRank) {
  const Shape s{2, 17, 1001, 24, 5, Reduction::mean, false};
  const int R = world_size();
  const ShardLayout layout = make_layout(ShardKind::vocab, R, s.V, s.P());
  const Variant& v = *Registry::instance().find("dense");
  auto need = [&](int r) { return predicted_rank_working_bytes(v, s, layout, r, one_thread()) + rank_io_bytes(s, layout, r); };
  // Balanced: rank 0 holds one row more than the last rank, so a limit between the two fails rank 0 only.
  ShardOptions so;
  so.rank_mem_limit = (need(0) + need(R - 1)) / 2;
  ASSERT_GT(need(0), so.rank_mem_limit);
  ASSERT_LE(need(R - 1), so.rank_mem_limit);
  try {
    measure_sharded_point(MPI_COMM_WORLD, s, {}, "dense", one_thread(), ShardKind::vocab, 0, 1, so);
    ADD_FAILURE() << "no RankFailure";
  } catch (const RankFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0: OOM predicted"), std::string::npos) << what;
    EXPECT_EQ(what.find(fmt::format("rank {}:", R - 1)), std::string::npos) << what;
  }
}

TEST(RankFailures, BadInputOnOneRank) {
  const Shape s{1, 8, 40, 4, 2, Reduction::mean, false};
  const int R = world_size(), me = world_rank();
  const ShardLayout layout = make_layout(ShardKind::vocab, R, s.V, s.P());
  const ShardComms comms(MPI_COMM_WORLD, layout);
  ShardData data = synthetic_shard(s, {}, layout, me);
  if (me == R - 1) data.E[3] = std::nanf("");  // the last rank's E holds a NaN (row v0 + 0, column 3)
  CountingAllocator alloc;
  RunContext ctx{alloc, one_thread()};
  ShardResult out;
  ShardTimes t;
  try {
    sharded_step(comms, layout, data, *Registry::instance().find("fused"), ctx, out, t);
    ADD_FAILURE() << "no RankFailure";
  } catch (const RankFailure& e) {
    const std::string want = fmt::format("rank {}: E holds a non-finite value (nan) at [{}, 3]", R - 1, layout.vocab(R - 1).begin);
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  // The communicators still work afterwards: the same ranks can step again.
  data = synthetic_shard(s, {}, layout, me);
  sharded_step(comms, layout, data, *Registry::instance().find("fused"), ctx, out, t);
  EXPECT_TRUE(std::isfinite(out.loss));
}

TEST(RankFailures, UnsupportedVariantStopsEveryRank) {
  RunOptions o = one_thread();
  o.operand = "tf32";  // a GPU tensor-core format: the CPU variants compute with fp32 or bf16 operands only
  EXPECT_THROW(measure_sharded_point(MPI_COMM_WORLD, Shape{1, 4, 10, 2, 1, Reduction::mean, false}, {}, "fused", o,
                                     ShardKind::vocab, 0, 1),
               RankFailure);
  RunOptions stored = one_thread();
  stored.e_format = "bfloat16";  // would silently run on float32 E: refused instead
  EXPECT_THROW(measure_sharded_point(MPI_COMM_WORLD, Shape{1, 4, 10, 2, 1, Reduction::mean, false}, {}, "fused", stored,
                                     ShardKind::vocab, 0, 1),
               RankFailure);
  EXPECT_THROW(measure_sharded_point(MPI_COMM_WORLD, Shape{1, 4, 10, 2, 1, Reduction::mean, false}, {}, "no_such",
                                     one_thread(), ShardKind::vocab, 0, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace lobench::shard
