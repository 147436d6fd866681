// shard_model: the α–β model of one vocabulary-sharded step per rank, for R = 1 .. 1024 ranks, at the
// shapes the papers care about. Memory is exact (the variants' and the collectives' own predicted
// bytes, which the tests hold the counting allocator to); time is modelled:
//   compute  = flops of the rank's shard / the per-rank rate measured on this machine;
//   ordered_sum of n bytes over R ranks = 2(R−1)·α + 2·(R−1)/R·n·β   (pairwise all-to-all + ring allgather)
//     or, n ≤ kGatherSumBytes, 2⌈log₂R⌉·α + (R−1+⌈log₂R⌉)·n·β          (gather to rank 0 + broadcast)
//   exact_sum / checkpoint (MPI_Allreduce)  = 2⌈log₂R⌉·α + 2·(R−1)/R·n·β
// and one step's collectives are what sharded_step issues: per-position losses (8P) and dA (4PD) by
// ordered_sum, counts (32P) and the checkpoint (4 B) by MPI_Allreduce. Appends CSV rows to --out and
// prints, per (shape, variant), the smallest R whose largest rank fits --rank-bytes.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"
#include "harness/shard/sharded_step.hpp"
#include "harness/system_memory.hpp"
#include "precision_sim/format.hpp"

namespace {

using namespace lobench;
using namespace lobench::shard;

struct ModelShape {
  std::string name;
  Shape shape;
};

struct Network {
  std::string name;
  double alpha_s = 0, beta_s_per_byte = 0;
  // The path ordered_sum takes: short vectors gathered to rank 0 (binomial gather and broadcast: rank 0
  // receives (R−1)·n, the broadcast moves n per level), longer ones all-to-all + allgather.
  double ordered_sum(double bytes, int R) const {
    if (R <= 1) return 0.0;
    const double levels = std::ceil(std::log2(double(R)));
    if (bytes <= double(kGatherSumBytes)) return 2.0 * levels * alpha_s + (R - 1 + levels) * bytes * beta_s_per_byte;
    return 2.0 * (R - 1) * alpha_s + 2.0 * (R - 1) / R * bytes * beta_s_per_byte;
  }
  double allreduce(double bytes, int R) const {
    return R <= 1 ? 0.0 : 2.0 * std::ceil(std::log2(double(R))) * alpha_s + 2.0 * (R - 1) / R * bytes * beta_s_per_byte;
  }
};

struct Point {
  int64_t rows = 0, working = 0, io = 0;
  double flops = 0, comm_s = 0;
  int64_t total() const { return working + io; }
};

// The largest rank (rank 0: balanced splits give it the most rows) of a vocabulary-sharded BCE step.
Point step_point(const Variant& v, const Shape& s, int R, int threads, const Network& net) {
  const ShardLayout layout = make_layout(ShardKind::vocab, R, s.V, s.P());
  RunOptions o;
  o.threads = threads;
  Point p;
  p.rows = layout.vocab(0).size();
  p.working = predicted_rank_working_bytes(v, s, layout, 0, o);
  p.io = rank_io_bytes(s, layout, 0);
  p.flops = 6.0 * double(s.P()) * double(p.rows) * double(s.D);
  const double P = double(s.P()), D = double(s.D);
  p.comm_s = net.ordered_sum(8 * P, R) + net.ordered_sum(4 * P * D, R) + net.allreduce(32 * P, R) + net.allreduce(4, R);
  return p;
}

// ELMO's training step with the classifier sharded by labels (fused SR update, no [V, D] gradient, 8
// label chunks as ELMO's fp8 configs use): the classifier head's exact bytes on the largest rank, and
// dH (4BD) summed by ordered_sum.
Point train_point(const Shape& s, int R, int threads, const Network& net, const std::string& format) {
  const Range rows = split_range(s.V, R, 0);
  train::ClassifierConfig c;
  c.V = rows.size();
  c.D = s.D;
  c.format = precision::parse_format(format);
  c.mode = train::UpdateMode::fused;
  c.chunks = 8;
  c.threads = threads;
  c.max_batch = s.P();
  c.max_positives = s.P() * s.L;
  Point p;
  p.rows = rows.size();
  p.working = train::Classifier::predicted_bytes(c).total();
  p.io = s.P() * s.D * 4 * 2;  // H and dH
  p.flops = 6.0 * double(s.P()) * double(p.rows) * double(s.D);
  p.comm_s = net.ordered_sum(4.0 * double(s.P()) * double(s.D), R) + net.allreduce(8, R) + net.allreduce(4, R);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"α–β model of a vocabulary-sharded step per rank, R = 1 .. 1024"};
  double fused_gflops = 0, dense_gflops = 0, alpha_us = 0, bandwidth_gbs = 0;
  std::string network = "measured", out, rank_bytes_s = "24GiB";
  int threads = 1;
  app.add_option("--fused-gflops", fused_gflops, "per-rank rate of fused on 6PVD (measured)")->required();
  app.add_option("--dense-gflops", dense_gflops, "per-rank rate of dense on 6PVD (measured)")->required();
  app.add_option("--alpha-us", alpha_us, "latency α of one message, µs")->required();
  app.add_option("--bandwidth-gbs", bandwidth_gbs, "1/β, GB/s (1e9 bytes)")->required();
  app.add_option("--network", network, "name of the (α, β) pair in the CSV")->capture_default_str();
  app.add_option("--threads", threads, "threads per rank (sets the variants' working memory)")->capture_default_str();
  app.add_option("--rank-bytes", rank_bytes_s, "memory of one rank")->capture_default_str();
  app.add_option("--out", out, "CSV to append to (header written when new)")->required();
  CLI11_PARSE(app, argc, argv);
  const int64_t rank_bytes = parse_bytes(rank_bytes_s);
  const Network net{network, alpha_us * 1e-6, 1.0 / (bandwidth_gbs * 1e9)};

  const std::vector<ModelShape> shapes = {
      {"elmo_18M_D768", Shape{128, 1, 18'000'000, 768, 8, Reduction::sum, false}},
      {"yambda_cutbce", Shape{64, 256, 876'939, 256, 8, Reduction::mean, false}},
      {"table2_V100k", Shape{32, 32, 100'000, 128, 8, Reduction::mean, false}},
  };
  const bool fresh = !std::filesystem::exists(out);
  std::FILE* f = std::fopen(out.c_str(), "a");
  if (!f) {
    fmt::print(stderr, "shard_model: cannot open {}\n", out);
    return 2;
  }
  if (fresh)
    fmt::print(f, "shape,variant,network,R,V,P,D,rows_per_rank,working_bytes,io_bytes,rank_bytes,fits,compute_s,comm_s,step_s,comm_share\n");

  struct Kind {
    std::string name;
    double gflops;
  };
  const std::vector<Kind> kinds = {{"fused", fused_gflops}, {"dense", dense_gflops}, {"train_fp8_fused_sr", fused_gflops},
                                   {"train_bf16_fused_sr", fused_gflops}};
  for (const ModelShape& ms : shapes)
    for (const Kind& k : kinds) {
      auto point = [&](int R) {
        if (k.name == "train_fp8_fused_sr") return train_point(ms.shape, R, threads, net, "float8_e4m3fn");
        if (k.name == "train_bf16_fused_sr") return train_point(ms.shape, R, threads, net, "bfloat16");
        return step_point(*Registry::instance().find(k.name), ms.shape, R, threads, net);
      };
      if (k.name.rfind("train_", 0) == 0 && ms.name != "elmo_18M_D768") continue;
      int smallest = 0;
      for (int R = 1; R <= 1024 && !smallest; ++R)
        if (point(R).total() <= rank_bytes) smallest = R;
      std::vector<int> Rs;
      for (int R = 1; R <= 1024; R *= 2) Rs.push_back(R);
      if (smallest && (smallest & (smallest - 1))) Rs.push_back(smallest);
      for (int R : Rs) {
        const Point p = point(R);
        const double compute = p.flops / (k.gflops * 1e9), step = compute + p.comm_s;
        fmt::print(f, "{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g}\n", ms.name, k.name, net.name, R,
                   ms.shape.V, ms.shape.P(), ms.shape.D, p.rows, p.working, p.io, p.total(), p.total() <= rank_bytes ? 1 : 0,
                   compute, p.comm_s, step, step > 0 ? p.comm_s / step : 0.0);
      }
      if (smallest) {
        const Point p = point(smallest);
        const double compute = p.flops / (k.gflops * 1e9);
        fmt::print("{:>14} {:>20} [{}]: smallest R fitting {} = {:4d} ({} per rank), predicted step {:.4g} s "
                   "(compute {:.4g} s, comm {:.4g} s)\n",
                   ms.name, k.name, net.name, format_bytes(double(rank_bytes)), smallest, format_bytes(double(p.total())),
                   compute + p.comm_s, compute, p.comm_s);
      } else {
        fmt::print("{:>14} {:>20} [{}]: does not fit {} at R <= 1024\n", ms.name, k.name, net.name,
                   format_bytes(double(rank_bytes)));
      }
    }
  std::fclose(f);
  return 0;
}
