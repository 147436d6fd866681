// The rate of the SASRec backbone's products (harness/seqrec/blocked_matmul.hpp, as the layers call
// them) against the machine's best SGEMM at a large square size on the same threads: issue 12's target
// of ≥ 70 %. The yardstick is the best of Eigen's own multithreaded product of one S×S×S problem,
// `threads` single-threaded Eigen S×S×S products side by side (each thread its own), and OpenBLAS's
// multithreaded S×S×S, so that no library or threading scheme flatters the ratio. Then the whole backbone (SasRec forward + backward at the
// model's shape, counted product flops over wall time) for what the element-wise passes cost around it.
//
// Repetitions are interleaved round-robin over the contenders so that a shared machine's drift slows
// all alike (time_interleaved, harness/measure.hpp: lobench's one repetition rule); every median comes
// with its min and max.
//
//   seqrec_backbone_bench [--R 2048] [--D 256] [--N 256] [--layers 3] [--heads 4] [--square 2048]
//                         [--threads 2] [--reps 7]
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include <Eigen/Core>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include "harness/measure.hpp"
#include "harness/seqrec/blocked_matmul.hpp"
#include "harness/seqrec/sasrec_model.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/cpu/openblas.hpp"
#include "variants/cpu/sgemm.hpp"

namespace {

using namespace lobench;
using namespace lobench::seqrec;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The whole backbone at the bench's shape: SasRec forward + backward (V small: the loss is not part of it).
struct Backbone {
  Backbone(int64_t R, int64_t N, int64_t D, int64_t layers, int64_t heads, int threads)
      : mc(config(R, N, D, layers, heads, threads)), model(mc, alloc), ids(size_t(mc.max_batch * N)),
        d_hidden(size_t(mc.max_batch * N * D), 1e-3f) {
    model.init();
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(1 + i % 999);
  }
  static ModelConfig config(int64_t R, int64_t N, int64_t D, int64_t layers, int64_t heads, int threads) {
    ModelConfig mc;
    mc.V = 1000;
    mc.N = N;
    mc.D = D;
    mc.layers = layers;
    mc.heads = heads;
    mc.max_batch = std::max<int64_t>(1, R / N);
    mc.dropout = 0.1f;
    mc.threads = threads;
    return mc;
  }
  // Products per layer: forward 2·R·D·(3D + D + 4D + 4D), attention 2·(B·H·N²·dh)·2; backward twice that.
  double flops() const {
    const double Rb = double(mc.max_batch * mc.N), dh = double(mc.D / mc.heads);
    const double layer_fwd = 2.0 * Rb * double(mc.D) * (12.0 * double(mc.D)) +
                             4.0 * double(mc.max_batch * mc.heads) * double(mc.N) * double(mc.N) * dh;
    return 3.0 * layer_fwd * double(mc.layers);
  }
  void run() {
    model.params().zero_grad();
    model.forward(ids.data(), mc.max_batch, 1, true);
    model.backward(ids.data(), mc.max_batch, 1, d_hidden.data());
  }
  const ModelConfig mc;
  CountingAllocator alloc;
  SasRec model;
  std::vector<int32_t> ids;
  std::vector<float> d_hidden;
};

// The contenders, the product flops of one call of each, and the matrices they multiply.
struct Bench {
  Bench() { keep.reserve(128); }  // the contenders hold pointers into it: no reallocation
  void add(std::string name, double f, std::function<void()> run) {
    contenders.push_back({std::move(name), std::move(run), {}, {}});
    flops.push_back(f);
  }
  // One layer product as the backbone issues it: C [M, N] (+)= op(A) · op(B).
  void add_product(const std::string& name, int64_t M, int64_t K, int64_t N, Op opA, Op opB, bool acc, int threads) {
    const float* A = keep.emplace_back(RowMat::Random(opA == Op::none ? M : K, opA == Op::none ? K : M)).data();
    const float* B = keep.emplace_back(RowMat::Random(opB == Op::none ? K : N, opB == Op::none ? N : K)).data();
    float* C = keep.emplace_back(RowMat::Zero(M, N)).data();
    add(fmt::format("{} [{}x{}]·[{}x{}]", name, M, K, K, N), 2.0 * double(M) * double(K) * double(N),
        [=] { matmul(A, opA, B, opB, C, M, K, N, acc, threads); });
  }
  std::vector<Contender> contenders;
  std::vector<double> flops;
  std::vector<RowMat> keep;
  std::unique_ptr<Backbone> backbone;
};

// The yardsticks: one S×S×S product by Eigen's threads, `threads` single-threaded ones side by side, and
// OpenBLAS's own threads (when it loads).
void add_yardsticks(Bench& b, int64_t S, int threads) {
  const RowMat& A = b.keep.emplace_back(RowMat::Random(S, S));
  const RowMat& B = b.keep.emplace_back(RowMat::Random(S, S));
  RowMat* C1 = &b.keep.emplace_back(S, S);
  b.add(fmt::format("Eigen SGEMM {}^3, Eigen's {} threads", S, threads), 2.0 * double(S) * S * S, [&A, &B, C1, threads] {
    Eigen::setNbThreads(threads);
    C1->noalias() = A * B;
    Eigen::setNbThreads(1);
  });
  std::vector<RowMat*> Cs;
  for (int t = 0; t < threads; ++t) Cs.push_back(&b.keep.emplace_back(S, S));
  b.add(fmt::format("Eigen SGEMM {}^3, one per thread x {}", S, threads), 2.0 * double(S) * S * S * threads,
        [&A, &B, Cs, threads] {
          Eigen::setNbThreads(1);
#pragma omp parallel num_threads(threads)
          Cs[size_t(omp_get_thread_num())]->noalias() = A * B;
        });
  // OpenBLAS at the same size on the same threads (the machine's best SGEMM is the faster library).
  if (const cpu::OpenBlas* blas = cpu::openblas()) {
    RowMat* C2 = &b.keep.emplace_back(S, S);
    b.add(fmt::format("OpenBLAS SGEMM {}^3, its {} threads", S, threads), 2.0 * double(S) * S * S,
          [&A, &B, C2, blas, S, threads] {
            blas->set_num_threads(threads);
            cpu::sgemm_using(cpu::GemmLibrary::openblas, cpu::Op::none, cpu::Op::none, S, S, S, A.data(), S, B.data(), S,
                             C2->data(), S, false);
            blas->set_num_threads(1);
          });
  } else {
    fmt::print("OpenBLAS yardstick left out: {}\n", cpu::openblas_unavailable());
  }
}

// Two ratios: of medians (what a loaded machine gives every contender alike) and of fastest reps (the
// rep in which the machine was closest to idle, for each contender and for the yardstick).
void print_rates(const Bench& b, size_t yardsticks, int threads, int reps) {
  double best = 0, best_fastest = 0;
  for (size_t i = 0; i < yardsticks; ++i) {
    best = std::max(best, b.flops[i] / b.contenders[i].wall.median() / 1e9);
    best_fastest = std::max(best_fastest, b.flops[i] / b.contenders[i].wall.min() / 1e9);
  }
  fmt::print("threads {}, {} reps each (interleaved); GFLOP/s median [slowest, fastest rep]; ratio of medians to the "
             "best yardstick's median ({:.1f} GFLOP/s), ratio of fastest reps to its fastest ({:.1f} GFLOP/s)\n",
             threads, reps, best, best_fastest);
  for (size_t i = 0; i < b.contenders.size(); ++i) {
    const Samples& s = b.contenders[i].wall;
    const double g = b.flops[i] / s.median() / 1e9, fastest = b.flops[i] / s.min() / 1e9;
    fmt::print("{:<66} {:8.1f} [{:6.1f}, {:6.1f}]  {:5.1f} %  {:5.1f} %\n", b.contenders[i].name, g,
               b.flops[i] / s.max() / 1e9, fastest, 100.0 * g / best, 100.0 * fastest / best_fastest);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t R = 2048, D = 256, N = 256, layers = 3, heads = 4, S = 2048;
  int threads = 2, reps = 7;
  CLI::App app{"Rate of the SASRec backbone's products against the machine's best SGEMM (same threads, one run)"};
  app.add_option("--R", R, "rows (B·N positions)");
  app.add_option("--D", D, "model width");
  app.add_option("--N", N, "window length (for the whole-backbone timing: B = R / N)");
  app.add_option("--layers", layers, "blocks (whole backbone)");
  app.add_option("--heads", heads, "attention heads (whole backbone)");
  app.add_option("--square", S, "size of the square SGEMM yardstick");
  app.add_option("--threads", threads, "threads");
  app.add_option("--reps", reps, "timed repetitions of each contender");
  CLI11_PARSE(app, argc, argv);
  fmt::print("layer products through {}\n", cpu::sgemm_library_name());

  Bench b;
  add_yardsticks(b, S, threads);
  const size_t yardsticks = b.contenders.size();
  // The layer products (forward y = x·W, backward dx = dy·Wᵀ and dW += xᵀ·dy) of qkv, proj, fc, out.
  for (auto [name, in, out] : {std::tuple{"qkv", D, 3 * D}, {"proj", D, D}, {"fc", D, 4 * D}, {"out", 4 * D, D}}) {
    b.add_product(std::string(name) + " fwd  x·W", R, in, out, Op::none, Op::none, true, threads);
    b.add_product(std::string(name) + " bwd dy·Wt", R, out, in, Op::none, Op::transpose, false, threads);
    b.add_product(std::string(name) + " bwd xt·dy", in, R, out, Op::transpose, Op::none, true, threads);
  }
  b.backbone = std::make_unique<Backbone>(R, N, D, layers, heads, threads);
  Backbone* bb = b.backbone.get();
  b.add(fmt::format("backbone fwd+bwd (B {} N {} D {} {} layers {} heads)", bb->mc.max_batch, N, D, layers, heads),
        bb->flops(), [bb] { bb->run(); });
  RepPolicy policy;
  policy.fixed_reps = reps;
  time_interleaved(b.contenders, /*warmup=*/1, policy);  // the warm-up round: first touch
  print_rates(b, yardsticks, threads, reps);
  return 0;
}
