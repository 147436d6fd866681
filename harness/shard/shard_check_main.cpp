// lobench_shard_check: one sharded step on synthetic inputs, under mpirun, compared on rank 0 with the
// same variant run in one process and with the float64 reference. Exit status: 0 within the accuracy
// rules; 1 outside them; 2 for a usage error or a rank that could not run (its message on stderr).
//
//   mpirun -np 3 build/harness/shard/lobench_shard_check --V 1001 --shard vocab --variant fused
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "harness/shard/collectives.hpp"
#include "harness/shard/compare.hpp"
#include "harness/shard/mpi_session.hpp"
#include "harness/shard/sharded_measure.hpp"
#include "harness/system_memory.hpp"
#include "variants/reference.hpp"

namespace {

using namespace lobench;
using namespace lobench::shard;

RunOptions threads_only(int threads) {
  RunOptions o;
  o.threads = threads;
  return o;
}

struct Args {
  Shape shape{2, 17, 1001, 24, 5, Reduction::mean, false};
  std::string reduction = "mean", variant = "fused", shard = "vocab", split = "balanced", mem_limit;
  SyntheticSpec spec;
  int vocab_parts = 0, threads = 1, warmup = 0, reps = 1;
  bool compare = true;
};

void add_options(CLI::App& app, Args& a) {
  app.add_option("--B", a.shape.B)->capture_default_str();
  app.add_option("--N", a.shape.N)->capture_default_str();
  app.add_option("--V", a.shape.V)->capture_default_str();
  app.add_option("--D", a.shape.D)->capture_default_str();
  app.add_option("--L", a.shape.L)->capture_default_str();
  app.add_option("--reduction", a.reduction, "mean | sum")->capture_default_str();
  app.add_flag("--weighted", a.shape.weighted, "position weights (some zero with --zero-weight-fraction)");
  app.add_option("--pad-fraction", a.spec.pad_fraction)->capture_default_str();
  app.add_option("--dup-fraction", a.spec.dup_fraction)->capture_default_str();
  app.add_option("--zero-weight-fraction", a.spec.zero_weight_fraction)->capture_default_str();
  app.add_option("--seed", a.spec.seed)->capture_default_str();
  app.add_option("--variant", a.variant, "any CPU variant (lobench list)")->capture_default_str();
  app.add_option("--shard", a.shard, "vocab | positions | vocab,positions")->capture_default_str();
  app.add_option("--vocab-parts", a.vocab_parts, "grid: vocabulary parts (0: closest to square)")->capture_default_str();
  app.add_option("--split", a.split, "balanced | blocked")->capture_default_str();
  app.add_option("--rank-mem-limit", a.mem_limit, "bytes one rank may use, e.g. 64M (default: no check)");
  app.add_option("--threads", a.threads, "threads per rank")->capture_default_str();
  app.add_option("--warmup", a.warmup)->capture_default_str();
  app.add_option("--reps", a.reps)->capture_default_str();
  app.add_flag("!--no-compare", a.compare, "skip the single-process and float64 comparisons");
}

void print_measurement(const ShardedMeasurement& m) {
  fmt::print("layout {} ({} ranks), variant {}, {}\n", m.layout.describe(), m.layout.ranks, m.variant, m.mpi_library);
  for (const RankMeasurement& r : m.ranks)
    fmt::print("  rank {}: rows [{}, {}) positions [{}, {}) compute {:.3f} ms comm {:.3f} ms sent {} B peak {} B "
               "(predicted {} B) io {} B\n",
               r.rank, r.vocab.begin, r.vocab.end, r.positions.begin, r.positions.end, 1e3 * r.compute_s.back(),
               1e3 * r.comm_s.back(), r.comm_bytes_sent, r.peak_working_bytes, r.predicted_working_bytes, r.io_bytes);
  fmt::print("step {:.3f} ms (comm share {:.1f} %), peak bytes max {} sum {}\n", 1e3 * m.step_s_median,
             100 * m.comm_share, m.peak_bytes_max, m.peak_bytes_sum);
}

// One machine-readable line (scripts/shard_measure.sh collects them), GFLOP/s on the whole step's 6PVD.
void print_csv(const Args& a, const ShardedMeasurement& m) {
  const double flops = a.shape.flops_fused();
  fmt::print("csv,{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4f},{},{},{},{:.4g}\n", m.layout.ranks,
             to_string(m.layout.kind), m.variant, a.threads, a.shape.P(), a.shape.V, a.shape.D, a.reps, m.step_s_median,
             m.compute_s_max, m.compute_s_min, m.comm_s_max, m.wait_s_max, m.comm_share, m.comm_bytes_max,
             m.peak_bytes_max, m.peak_bytes_sum, flops / m.step_s_median * 1e-9);
}

// Rank 0: the sharded outputs against one process and the float64 reference. Returns the exit status.
int compare_on_rank0(const Args& a, const ShardedMeasurement& m) {
  const StepData whole = make_synthetic(a.shape, a.spec);
  const StepInputs in = whole.view();
  CountingAllocator alloc;
  cpu::ReferenceResult ref;
  cpu::reference_step(in, ref, alloc, a.threads);
  StepOutputs single;
  single.resize(in.P, in.V, in.D);
  RunContext ctx{alloc, threads_only(a.threads)};
  Registry::instance().find(a.variant)->run(in, single, ctx);

  const StepOutputs& out = *m.whole;
  const Errors vs_ref = errors_against_reference(out, ref, in.P, in.V, in.D);
  const Errors vs_single = errors_against_run(out, single, ref.near_zero.data());
  const Errors single_vs_ref = errors_against_reference(single, ref, in.P, in.V, in.D);
  fmt::print("sharded vs float64 reference: {}\n", vs_ref.describe());
  fmt::print("single-process vs float64 reference: {}\n", single_vs_ref.describe());
  fmt::print("sharded vs single-process: {}\n", vs_single.describe());
  fmt::print("outputs hash {:016x}\n", outputs_hash(out));
  bool ok = vs_ref.within_tolerance() && vs_single.within_tolerance();
  for (const RankMeasurement& r : m.ranks)
    if (r.peak_working_bytes != r.predicted_working_bytes) {
      fmt::print(stderr, "rank {}: measured peak {} B differs from the predicted {} B\n", r.rank, r.peak_working_bytes,
                 r.predicted_working_bytes);
      ok = false;
    }
  fmt::print("{}\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

int run(int argc, char** argv, int rank) {
  CLI::App app{"One sharded step on synthetic inputs, compared with one process and the float64 reference"};
  Args a;
  add_options(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : e.get_exit_code();  // the same on every rank: rank 0 says it
    return rc == 0 ? 0 : 2;
  }
  try {
    a.shape.reduction = parse_reduction(a.reduction);
    ShardOptions so;
    so.vocab_parts = a.vocab_parts;
    so.split = parse_split(a.split);
    so.rank_mem_limit = a.mem_limit.empty() ? 0 : parse_bytes(a.mem_limit);
    so.gather = a.compare;
    const ShardedMeasurement m = measure_sharded_point(MPI_COMM_WORLD, a.shape, a.spec, a.variant,
                                                       threads_only(a.threads), parse_shard_kind(a.shard), a.warmup,
                                                       a.reps, so);
    int rc = 0;
    if (rank == 0) {
      print_measurement(m);
      print_csv(a, m);
      if (a.compare) rc = compare_on_rank0(a, m);
      std::fflush(stdout);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
  } catch (const RankFailure& e) {  // thrown on every rank: rank 0 reports
    if (rank == 0) fmt::print(stderr, "lobench_shard_check: {}\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {  // the same arguments on every rank: the same error
    if (rank == 0) fmt::print(stderr, "lobench_shard_check: {}\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    return run(argc, argv, rank);
  } catch (const std::exception& e) {
    // Anything else happened on this rank alone: the others may wait in a collective, so end the job.
    fmt::print(stderr, "lobench_shard_check: rank {}: {}\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return 2;
}
