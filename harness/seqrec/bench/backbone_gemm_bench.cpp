// The rate of the SASRec backbone's products (harness/seqrec/blocked_matmul.hpp, as the layers call
// them) against the machine's best SGEMM at a large square size on the same threads: issue 12's target
// of ≥ 70 %. The yardstick is the best of Eigen's own multithreaded product of one S×S×S problem,
// `threads` single-threaded Eigen S×S×S products side by side (each thread its own), and OpenBLAS's
// multithreaded S×S×S, so that no library or threading scheme flatters the ratio. Then the whole backbone (SasRec forward + backward at the
// model's shape, counted product flops over wall time) for what the element-wise passes cost around it.
//
// Repetitions are interleaved round-robin over the contenders so that a shared machine's drift slows
// all alike; every median comes with its min and max.
//
//   seqrec_backbone_bench [--R 2048] [--D 256] [--N 256] [--layers 3] [--heads 4] [--square 2048]
//                         [--threads 2] [--reps 7]
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include <Eigen/Core>
#include <chrono>
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

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Contender {
  std::string name;
  double flops = 0;  // per call
  std::function<void()> run;
  std::vector<double> seconds;
};

// One layer product as the backbone issues it: C [M, N] (+)= op(A) · op(B).
Contender product(const std::string& name, int64_t M, int64_t K, int64_t N, Op opA, Op opB, bool acc, int threads,
                  std::vector<RowMat>& keep) {
  keep.push_back(RowMat::Random(opA == Op::none ? M : K, opA == Op::none ? K : M));
  const float* A = keep.back().data();
  keep.push_back(RowMat::Random(opB == Op::none ? K : N, opB == Op::none ? N : K));
  const float* B = keep.back().data();
  keep.push_back(RowMat::Zero(M, N));
  float* C = keep.back().data();
  return {fmt::format("{} [{}x{}]·[{}x{}]", name, M, K, K, N), 2.0 * double(M) * double(K) * double(N),
          [=] { matmul(A, opA, B, opB, C, M, K, N, acc, threads); }, {}};
}

}  // namespace

// One long main on purpose: a benchmark's protocol (set-up, the interleaved timed loop, the report)
// reads top to bottom, and nothing in it is reused elsewhere.
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

  std::vector<RowMat> keep;
  keep.reserve(128);  // the contenders hold pointers into it: no reallocation
  std::vector<Contender> c;
  // Yardsticks.
  {
    keep.push_back(RowMat::Random(S, S));
    keep.push_back(RowMat::Random(S, S));
    const RowMat& A = keep[keep.size() - 2];
    const RowMat& B = keep.back();
    auto* C1 = &keep.emplace_back(S, S);
    c.push_back({fmt::format("Eigen SGEMM {}^3, Eigen's {} threads", S, threads), 2.0 * double(S) * S * S, [&A, &B, C1, threads] {
                   Eigen::setNbThreads(threads);
                   C1->noalias() = A * B;
                   Eigen::setNbThreads(1);
                 }, {}});
    std::vector<RowMat*> Cs;
    for (int t = 0; t < threads; ++t) Cs.push_back(&keep.emplace_back(S, S));
    c.push_back({fmt::format("Eigen SGEMM {}^3, one per thread x {}", S, threads), 2.0 * double(S) * S * S * threads,
                 [&A, &B, Cs, threads] {
                   Eigen::setNbThreads(1);
#pragma omp parallel num_threads(threads)
                   Cs[size_t(omp_get_thread_num())]->noalias() = A * B;
                 }, {}});
    // OpenBLAS at the same size on the same threads (the machine's best SGEMM is the faster library).
    if (const cpu::OpenBlas* blas = cpu::openblas()) {
      auto* C2 = &keep.emplace_back(S, S);
      c.push_back({fmt::format("OpenBLAS SGEMM {}^3, its {} threads", S, threads), 2.0 * double(S) * S * S,
                   [&A, &B, C2, blas, S, threads] {
                     blas->set_num_threads(threads);
                     cpu::sgemm_using(cpu::GemmLibrary::openblas, cpu::Op::none, cpu::Op::none, S, S, S, A.data(), S,
                                      B.data(), S, C2->data(), S, false);
                     blas->set_num_threads(1);
                   }, {}});
    } else {
      fmt::print("OpenBLAS yardstick left out: {}\n", cpu::openblas_unavailable());
    }
  }
  const size_t yardsticks = c.size();
  // The layer products (forward y = x·W, backward dx = dy·Wᵀ and dW += xᵀ·dy) of qkv, proj, fc, out.
  for (auto [name, in, out] : {std::tuple{"qkv", D, 3 * D}, {"proj", D, D}, {"fc", D, 4 * D}, {"out", 4 * D, D}}) {
    c.push_back(product(std::string(name) + " fwd  x·W", R, in, out, Op::none, Op::none, true, threads, keep));
    c.push_back(product(std::string(name) + " bwd dy·Wt", R, out, in, Op::none, Op::transpose, false, threads, keep));
    c.push_back(product(std::string(name) + " bwd xt·dy", in, R, out, Op::transpose, Op::none, true, threads, keep));
  }
  // The whole backbone: forward + backward of SasRec at B = R / N (V small: the loss is not part of it).
  ModelConfig mc;
  mc.V = 1000;
  mc.N = N;
  mc.D = D;
  mc.layers = layers;
  mc.heads = heads;
  mc.max_batch = std::max<int64_t>(1, R / N);
  mc.dropout = 0.1f;
  mc.threads = threads;
  CountingAllocator alloc;
  SasRec model(mc, alloc);
  model.init();
  std::vector<int32_t> ids(size_t(mc.max_batch * N));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(1 + i % 999);
  std::vector<float> d_hidden(size_t(mc.max_batch * N * D), 1e-3f);
  const double Rb = double(mc.max_batch * N), dh = double(D / heads);
  // Products per layer: forward 2·R·D·(3D + D + 4D + 4D), attention 2·(B·H·N²·dh)·2; backward twice that.
  const double layer_fwd = 2.0 * Rb * D * (12.0 * D) + 4.0 * double(mc.max_batch * heads) * N * N * dh;
  c.push_back({fmt::format("backbone fwd+bwd (B {} N {} D {} {} layers {} heads)", mc.max_batch, N, D, layers, heads),
               3.0 * layer_fwd * double(layers),
               [&] {
                 model.params().zero_grad();
                 model.forward(ids.data(), mc.max_batch, 1, true);
                 model.backward(ids.data(), mc.max_batch, 1, d_hidden.data());
               }, {}});

  for (auto& x : c) x.run();  // warm-up (first touch)
  for (int r = 0; r < reps; ++r)
    for (auto& x : c) {
      const double t0 = now_s();
      x.run();
      x.seconds.push_back(now_s() - t0);
    }
  // Two ratios: of medians (what a loaded machine gives every contender alike) and of fastest reps
  // (the rep in which the machine was closest to idle, for each contender and for the yardstick).
  double best = 0, best_fastest = 0;
  for (size_t i = 0; i < yardsticks; ++i) {
    best = std::max(best, c[i].flops / Samples{c[i].seconds}.median() / 1e9);
    best_fastest = std::max(best_fastest, c[i].flops / Samples{c[i].seconds}.min() / 1e9);
  }
  fmt::print("threads {}, {} reps each (interleaved); GFLOP/s median [slowest, fastest rep]; ratio of medians to the "
             "best yardstick's median ({:.1f} GFLOP/s), ratio of fastest reps to its fastest ({:.1f} GFLOP/s)\n",
             threads, reps, best, best_fastest);
  for (auto& x : c) {
    const Samples s{x.seconds};
    const double g = x.flops / s.median() / 1e9, fastest = x.flops / s.min() / 1e9;
    fmt::print("{:<66} {:8.1f} [{:6.1f}, {:6.1f}]  {:5.1f} %  {:5.1f} %\n", x.name, g, x.flops / s.max() / 1e9, fastest,
               100.0 * g / best, 100.0 * fastest / best_fastest);
  }
  return 0;
}
