// Variant `dense`: what frameworks do. Materialise the [P, V] logits, a dense multi-hot target tensor
// and the [P, V] logit gradient, then two GEMMs for dA and dE. It needs 3·P·V·4 bytes of working
// memory: the baseline that runs out of memory. With bf16 operands (--operand bf16) the three products
// read A, E and the gradient rounded to bf16, accumulating in float32 (bf16_products.hpp), from packed
// copies: P·V·4 more bytes for the gradient's two pairings, (V + P)·D·4 for A's and E's. With fp8
// operands (--operand e4m3|e5m2) the same bf16 products read A and E rounded to the format with their
// per-tensor scales (variants/fp8_scaling.hpp), from rounded float32 copies: (P + V)·D·4 bytes more.

#include <algorithm>
#include <cmath>
#include <optional>

#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/bf16_products.hpp"
#include "variants/cpu/finite_outputs.hpp"
#include "variants/cpu/fixed_panels.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/fp8_scaling.hpp"
#include "variants/operand.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {
namespace {

// Per position: the element loss softplus(x) − y·x summed over V (float64), the logit gradient
// s·w·(σ(x) − y) and the counts at logit > 0, from the materialised logits and multi-hot targets. The
// softplus/σ background runs in the vectorised tile kernels (bce_tile.hpp) over column chunks small
// enough for L1/L2 (copied from the logits into the gradient and overwritten there); y, zero except at
// the targets, then enters at the target ids only, each distinct id once (y holds 1 there, so a
// repeated id finds it already counted: it is marked 2 while the position is processed).
void dense_element_pass(const StepInputs& in, const float* logits, float* multi_hot, float* grad, StepOutputs& out,
                        const RunOptions& o) {
  constexpr int64_t kChunk = 4096;  // 16 KiB of logits
  const int64_t V = in.V, L = in.L;
  const int threads = o.threads;
  const BceTileKernels& kernels = bce_tile_kernels_for(parse_epilogue(o.epilogue));
  const double s = in.gradient_scale();
  const double V_div = in.reduction == Reduction::mean ? double(in.mean_V()) : 1.0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < in.P; ++p) {
    const float* x = logits + p * V;
    float* g = grad + p * V;
    float* y = multi_hot + p * V;
    const float gw = float(s * in.weight(p));
    double loss = 0;
    int64_t predicted = 0;
    for (int64_t v0 = 0; v0 < V; v0 += kChunk) {
      const int64_t n = std::min(kChunk, V - v0);
      std::copy_n(x + v0, n, g + v0);
      kernels.softplus_and_sigmoid(g + v0, 1, n, V, &loss, &predicted, &gw);
    }
    double target_logits = 0;
    int64_t positives = 0, tp = 0;
    for (int64_t l = 0; l < L; ++l) {
      const int32_t t = in.targets[p * L + l];
      if (t < 0 || t >= V || y[t] != 1.0f) continue;  // padding, or an id already counted
      y[t] = 2.0f;
      target_logits += double(x[t]);
      g[t] -= gw;
      ++positives;
      tp += x[t] > 0.0f;
    }
    for (int64_t l = 0; l < L; ++l) {
      const int32_t t = in.targets[p * L + l];
      if (t >= 0 && t < V) y[t] = 1.0f;
    }
    out.per_position_loss[p] = (loss - target_logits) / V_div;
    out.counts[p * 4 + kTP] = tp;
    out.counts[p * 4 + kFP] = predicted - tp;
    out.counts[p * 4 + kFN] = positives - tp;
    out.counts[p * 4 + kTN] = V - predicted - (positives - tp);
  }
}

// The bf16 products make the logits and gradients: bf16 operands, and fp8 operands (exact in bf16).
bool uses_bf16(const RunOptions& o) { return products_in_bf16(parse_operand(o.operand)); }
bool uses_fp8(const RunOptions& o) { return is_fp8(parse_operand(o.operand)); }

int64_t words(int64_t n) { return (n + 1) / 2; }  // bf16 pairs holding n values

// Logits, dA and dE with bf16 operands, each product split into fixed panels of whole outputs (each
// output's sum is one chain: results do not depend on the threads). `grad` holds G when called for the
// gradients; `logits` receives the logits.
class DenseBf16Products {
 public:
  DenseBf16Products(const StepInputs& in, CountingAllocator& alloc)
      : kernel_(active_bf16_kernel()), P_(in.P), V_(in.V), D_(in.D),
        A_by_dim_(alloc, P_ * words(D_)), E_by_dim_(alloc, words(D_) * V_), E_by_voc_(alloc, words(V_) * D_),
        At_by_pos_(alloc, D_ * words(P_)), G_by_voc_(alloc, P_ * words(V_)), G_by_pos_(alloc, words(P_) * V_) {}

  void logits(const StepInputs& in, float* logits, int threads) {
    pair_columns(in.A, D_, P_, D_, A_by_dim_.data(), words(D_));
    for_each_fixed_panel(V_, threads, [&](int64_t v0, int64_t n) {
      pair_columns_transposed(in.E + v0 * D_, D_, n, D_, E_by_dim_.data() + v0, V_);
    }, 256);
    for_each_fixed_panel(P_, threads, [&](int64_t p0, int64_t rows) {
      for (int64_t v0 = 0; v0 < V_; v0 += kColumns) {  // E's pairs a cache-sized block at a time
        Bf16Product x{rows, std::min(kColumns, V_ - v0), words(D_), A_by_dim_.data() + p0 * words(D_), words(D_),
                      E_by_dim_.data() + v0, V_, logits + p0 * V_ + v0, V_, false, false};
        bf16_product(kernel_, x);
      }
    });
  }

  void gradients(const StepInputs& in, const float* grad, StepOutputs& out, int threads) {
    for_each_fixed_panel(P_, threads, [&](int64_t p0, int64_t rows) {  // G paired both ways (p0 is even)
      pair_columns(grad + p0 * V_, V_, rows, V_, G_by_voc_.data() + p0 * words(V_), words(V_));
      pair_rows(grad + p0 * V_, V_, rows, V_, G_by_pos_.data() + (p0 / 2) * V_, V_);
    });
    pair_rows(in.E, D_, V_, D_, E_by_voc_.data(), D_);
    pair_rows_transposed(in.A, D_, P_, D_, At_by_pos_.data(), words(P_));
    for_each_fixed_panel(P_, threads, [&](int64_t p0, int64_t rows) {  // dA = G·E
      // The inner index a cache-sized block at a time: each block continues the chains from the float32
      // values the previous one stored, so the blocking changes no bit.
      for (int64_t k0 = 0; k0 < words(V_); k0 += kPairs) {
        Bf16Product dA{rows, D_, std::min(kPairs, words(V_) - k0), G_by_voc_.data() + p0 * words(V_) + k0, words(V_),
                       E_by_voc_.data() + k0 * D_, D_, out.dA.data() + p0 * D_, D_, false, k0 > 0};
        bf16_product(kernel_, dA);
      }
    });
    for_each_fixed_panel(V_, threads, [&](int64_t v0, int64_t n) {  // dEᵀ = Aᵀ·G, into dE's rows
      Bf16Product dE{D_, n, words(P_), At_by_pos_.data(), words(P_), G_by_pos_.data() + v0, V_,
                     out.dE.data() + v0 * D_, D_, true, false};
      bf16_product(kernel_, dE);
    }, 256);
  }

  static int64_t bytes(int64_t P, int64_t V, int64_t D) {
    return 4 * (P * words(D) + words(D) * V + words(V) * D + D * words(P) + P * words(V) + words(P) * V);
  }

 private:
  static constexpr int64_t kColumns = 256;  // logit columns per product: E's block of pairs stays in L2
  static constexpr int64_t kPairs = 1024;   // inner pairs per dA product: E's block of pairs stays in L2
  Bf16Kernel kernel_;  // chosen once, before the threads start
  int64_t P_, V_, D_;
  Buffer<uint32_t> A_by_dim_, E_by_dim_, E_by_voc_, At_by_pos_, G_by_voc_, G_by_pos_;
};

class DenseVariant final : public Variant {
 public:
  std::string name() const override { return "dense"; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override {
    return "materialized [P,V] logits, multi-hot targets and logit gradient; BLAS products in fixed panels";
  }
  std::string supports() const override {
    return "reductions mean|sum, weights, padding, duplicates; E in fp32; operands fp32, or bf16, e4m3, e5m2 "
           "(AVX512_BF16); epilogue fp32, bf16, fp16 (emulated)";
  }
  // Any epilogue precision (variants/epilogue.hpp: its element pass takes the rounded kernels).
  std::optional<std::string> skip_reason(const Shape& s, const RunOptions& options) const override {
    RunOptions o = options;
    o.epilogue = "fp32";
    if (!o.e_is_float32() || !uses_bf16(o)) return Variant::skip_reason(s, o);
    return bf16_products_unavailable();
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    return 3 * s.P() * s.V * int64_t(sizeof(float)) + (uses_bf16(o) ? DenseBf16Products::bytes(s.P(), s.V, s.D) : 0) +
           (uses_fp8(o) ? (s.P() + s.V) * s.D * int64_t(sizeof(float)) : 0);
  }

  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    const int64_t P = in.P, V = in.V, D = in.D, L = in.L;
    const int threads = ctx.options.threads;
    ProductsOnCallingThread products_on_calling_thread;  // products in fixed panels: results independent of threads
    Buffer<float> logits(ctx.alloc, P * V), multi_hot(ctx.alloc, P * V), grad(ctx.alloc, P * V);
    std::optional<DenseBf16Products> bf16;
    if (uses_bf16(ctx.options)) bf16.emplace(in, ctx.alloc);
    // fp8 operands: the bf16 products read A and E rounded with their scales (`rounded`); else the inputs.
    Buffer<float> A_fp8(ctx.alloc, uses_fp8(ctx.options) ? P * D : 0), E_fp8(ctx.alloc, uses_fp8(ctx.options) ? V * D : 0);
    StepInputs rounded = in;
    if (uses_fp8(ctx.options)) {
      const Operand op = parse_operand(ctx.options.operand);
      Fp8Scaling::of(op, in.A, P * D, threads).round(in.A, A_fp8.data(), P * D, threads);
      Fp8Scaling::of(op, in.E, V * D, threads).round(in.E, E_fp8.data(), V * D, threads);
      rounded.A = A_fp8.data(), rounded.E = E_fp8.data();
    }

    if (bf16) bf16->logits(rounded, logits.data(), threads);
    else for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {  // logits = A·Eᵀ
      sgemm(Op::none, Op::transpose, rows, V, D, in.A + p0 * D, D, in.E, D, logits.data() + p0 * V, V, false);
    });

    // Multi-hot targets: padding ids are dropped, a repeated id sets the same 1.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < P; ++p) {
      float* y = multi_hot.data() + p * V;
      std::fill_n(y, V, 0.0f);
      for (int64_t l = 0; l < L; ++l) {
        const int32_t t = in.targets[p * L + l];
        if (t >= 0 && t < V) y[t] = 1.0f;
      }
    }

    dense_element_pass(in, logits.data(), multi_hot.data(), grad.data(), out, ctx.options);
    out.reduce_loss(in);

    if (bf16) {
      bf16->gradients(rounded, grad.data(), out, threads);
      require_finite_outputs(in, out, name(), false, parse_epilogue(ctx.options.epilogue));
      return;
    }
    for_each_fixed_panel(P, threads, [&](int64_t p0, int64_t rows) {  // dA = G·E
      sgemm(Op::none, Op::none, rows, D, V, grad.data() + p0 * V, V, in.E, D, out.dA.data() + p0 * D, D, false);
    });
    for_each_fixed_panel(V, threads, [&](int64_t v0, int64_t rows) {  // dE = Gᵀ·A
      sgemm(Op::transpose, Op::none, rows, D, P, grad.data() + v0, V, in.A, D, out.dE.data() + v0 * D, D, false);
    }, /*panel_rows=*/256);
    require_finite_outputs(in, out, name(), false, parse_epilogue(ctx.options.epilogue));
  }
};

LOBENCH_REGISTER_VARIANT(DenseVariant);

}  // namespace
}  // namespace lobench::cpu
