// The schedule the tiled CPU variants (chunked, fused) share: position chunks outside, vocabulary
// blocks inside, dealt to the threads round-robin.
//
// For each chunk of block_p positions every vocabulary block of block_v entries is one tile: its logits
// [block_p, block_v] are made, used and forgotten by one thread. A vocabulary block belongs to one
// thread at a time, so each dE row has one writer; the per-position sums (loss, counts, dA) are kept per
// thread for the current chunk only and added into the outputs when the chunk is done. Working memory
// is therefore O(threads·block_p·(block_v + D)) besides the sparse targets and a row scale per
// position (O(P·L) together), whatever V is; and a P of 10^5 or more is just more chunks.
#pragma once

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <utility>

#include "bce_tile.hpp"
#include "eigen_maps.hpp"
#include "sparse_targets.hpp"
#include "tile_blocks.hpp"
#include "variant.hpp"

namespace lobench::cpu {

// Eigen splits a product over its own threads whenever the caller's team has one thread (it checks only
// omp_get_num_threads()), which would nest its parallelism under ours and make a one-thread run use
// every core. For the duration of a run, every product runs on the thread that calls it.
class EigenOnCallingThread {
 public:
  EigenOnCallingThread() : saved_(Eigen::nbThreads()) { Eigen::setNbThreads(1); }
  ~EigenOnCallingThread() { Eigen::setNbThreads(saved_); }
  EigenOnCallingThread(const EigenOnCallingThread&) = delete;
  EigenOnCallingThread& operator=(const EigenOnCallingThread&) = delete;

 private:
  int saved_;
};

// What one thread works in while it handles a tile of the current chunk (row r is position p0 + r).
struct TileThread {
  int index = 0;
  float* tile = nullptr;          // [block_p, ld] logits, then logit gradients
  double* loss = nullptr;         // [block_p] Σ softplus − Σ_targets x over this thread's tiles
  int64_t* predicted = nullptr;   // [block_p] logits > 0
  int64_t* true_pos = nullptr;    // [block_p] targets with logit > 0
  float* dA = nullptr;            // [block_p, D] this thread's share of dA (thread 0: the output rows)
};

// The per-thread working memory of a scan, all from the run's counting allocator.
class TileScanWorkspace {
 public:
  TileScanWorkspace(const TileBlocks& b, int64_t D, CountingAllocator& alloc)
      : b_(b), D_(D),
        tiles_(alloc, b.threads * b.block_p * b.ld),
        loss_(alloc, b.threads * b.block_p),
        predicted_(alloc, b.threads * b.block_p),
        true_pos_(alloc, b.threads * b.block_p),
        dA_(alloc, (b.threads - 1) * b.block_p * D) {}

  // Exactly what the constructor allocates.
  static int64_t bytes(const TileBlocks& b, int64_t D) {
    return b.threads * b.block_p * (b.ld * 4 + 8 + 8 + 8) + (b.threads - 1) * b.block_p * D * 4;
  }

  TileThread thread(int t, float* out_dA_rows) {
    TileThread w;
    w.index = t;
    w.tile = tiles_.data() + t * b_.block_p * b_.ld;
    w.loss = loss_.data() + t * b_.block_p;
    w.predicted = predicted_.data() + t * b_.block_p;
    w.true_pos = true_pos_.data() + t * b_.block_p;
    w.dA = t == 0 ? out_dA_rows : dA_.data() + (t - 1) * b_.block_p * D_;
    return w;
  }
  const float* dA_partial(int t) const { return dA_.data() + (t - 1) * b_.block_p * D_; }
  const double* loss(int t) const { return loss_.data() + t * b_.block_p; }
  const int64_t* predicted(int t) const { return predicted_.data() + t * b_.block_p; }
  const int64_t* true_pos(int t) const { return true_pos_.data() + t * b_.block_p; }

 private:
  TileBlocks b_;
  int64_t D_;
  Buffer<float> tiles_;
  Buffer<double> loss_;
  Buffer<int64_t> predicted_, true_pos_;
  Buffer<float> dA_;
};

// The rows of E of one vocabulary block as float32: E itself, or, when E is held in a narrower format
// (StepInputs::E_stored), the block decoded into this thread's buffer. Accumulation stays float32.
class EmbeddingBlocks {
 public:
  EmbeddingBlocks(const StepInputs& in, const TileBlocks& b, CountingAllocator& alloc)
      : in_(in), block_v_(b.block_v), rows_(alloc, in.E_stored ? b.threads * b.block_v * in.D : 0) {}

  // Exactly what the constructor allocates for a run with these options.
  static int64_t bytes(const TileBlocks& b, int64_t D, const RunOptions& o) {
    return o.e_is_float32() ? 0 : b.threads * b.block_v * D * 4;
  }

  const float* block(int thread, int64_t v0, int64_t n) {
    if (!in_.E_stored) return in_.E + v0 * in_.D;
    float* out = rows_.data() + thread * block_v_ * in_.D;
    in_.E_stored->decode_rows(v0, n, out);
    return out;
  }

 private:
  const StepInputs& in_;
  int64_t block_v_;
  Buffer<float> rows_;
};

// Row scale s·w_p of the logit gradient g = s·w_p·(σ(x) − y), for every position.
inline void fill_row_scale(const StepInputs& in, float* row_scale) {
  const double s = in.gradient_scale();
  for (int64_t p = 0; p < in.P; ++p) row_scale[p] = float(s * in.weight(p));
}

// Which per-position sums a scan produces and adds into the outputs after each chunk.
enum TileScanSums : unsigned {
  kLossAndCounts = 1,  // out.per_position_loss += Σ loss; counts[kTP] += true_pos; counts[kFP] += predicted
  kInputGradient = 2,  // out.dA rows += Σ dA (out.dA must start at 0)
};

// Runs tile(TileThread&, v0, n, p0, rows) for every vocabulary block [v0, v0+n) of every position chunk
// [p0, p0+rows), threads taking vocabulary blocks dynamically. The per-thread sums selected by `sums`
// start each chunk at 0 and are added into `out` (raw: see finish_losses_and_counts).
template <class TileFn>
void scan_tiles(const StepInputs& in, const TileBlocks& b, TileScanWorkspace& ws, unsigned sums,
                StepOutputs& out, TileFn&& tile) {
  const int64_t P = in.P, V = in.V, D = in.D;
  const int64_t n_vblocks = (V + b.block_v - 1) / b.block_v;
  const int T = b.threads;
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    for (int64_t p0 = 0; p0 < P; p0 += b.block_p) {
      const int64_t rows = std::min(b.block_p, P - p0);
      TileThread w = ws.thread(t, out.dA.data() + p0 * D);
      if (sums & kLossAndCounts) {
        std::fill_n(w.loss, rows, 0.0);
        std::fill_n(w.predicted, rows, int64_t(0));
        std::fill_n(w.true_pos, rows, int64_t(0));
      }
      if ((sums & kInputGradient) && t > 0) std::fill_n(w.dA, rows * D, 0.0f);

      // Round-robin, not dynamic: which thread sums which block into its dA share must not depend on
      // timing, so that a run's outputs are bit-reproducible for a given thread count.
#pragma omp for schedule(static, 1)
      for (int64_t vb = 0; vb < n_vblocks; ++vb) {
        const int64_t v0 = vb * b.block_v;
        tile(w, v0, std::min(b.block_v, V - v0), p0, rows);
      }
      // (the implicit barrier above: every tile of the chunk is done)

      if (sums & kInputGradient) {
        float* dA = out.dA.data() + p0 * D;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < rows * D; ++i)
          for (int u = 1; u < T; ++u) dA[i] += ws.dA_partial(u)[i];
      }
      if (sums & kLossAndCounts) {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t p = p0 + r;
          for (int u = 0; u < T; ++u) {
            out.per_position_loss[p] += ws.loss(u)[r];
            out.counts[p * 4 + kTP] += ws.true_pos(u)[r];
            out.counts[p * 4 + kFP] += ws.predicted(u)[r];
          }
        }
      }
      // (and the barriers after the reductions: the next chunk may reset the per-thread sums)
    }
  }
}

// Turns the raw sums of kLossAndCounts into the contract's outputs: per-position loss by the
// reduction, the four counts from (predicted, true positives, positives), and the scalar loss.
inline void finish_losses_and_counts(const StepInputs& in, const SparseTargets& targets, StepOutputs& out) {
  const double V_div = in.reduction == Reduction::mean ? double(in.mean_V()) : 1.0;
  for (int64_t p = 0; p < in.P; ++p) {
    const int64_t tp = out.counts[p * 4 + kTP], predicted = out.counts[p * 4 + kFP];
    const int64_t positives = targets.positives(p);
    out.per_position_loss[p] /= V_div;
    out.counts[p * 4 + kFP] = predicted - tp;
    out.counts[p * 4 + kFN] = positives - tp;
    out.counts[p * 4 + kTN] = in.V - predicted - (positives - tp);
  }
  out.reduce_loss(in);
}

// The sparse correction at the targets of one tile: calls fn(r, j) for every target (position p0 + r,
// id v0 + j) inside the tile. Pairs are sorted by id, so the block's pairs are one range; positions
// outside the chunk are skipped.
template <class Fn>
void for_each_target_in_tile(const SparseTargets& targets, int64_t v0, int64_t n, int64_t p0, int64_t rows, Fn&& fn) {
  const auto [lo, hi] = targets.pairs_in(v0, v0 + n);
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t r = targets.pair_pos(i) - p0;
    if (r >= 0 && r < rows) fn(r, targets.pair_id(i) - v0);
  }
}

// What a tiled run (chunked, fused) sets up before its scans, all from the run's counting allocator:
// the sparse targets, the row scale s·w, the per-thread tiles and E blocks; the outputs it accumulates
// into start at zero, and Eigen runs each product on its calling thread for the run's duration. Its
// methods are the steps the two variants' tiles are made of.
struct TiledRun {
  TiledRun(const StepInputs& in_, StepOutputs& out, RunContext& ctx)
      : in(in_),
        blocks(choose_blocks(in.P, in.V, in.D, ctx.options)),
        kernels(active_bce_tile_kernels()),
        targets(in, ctx.alloc),
        row_scale(ctx.alloc, in.P),
        ws(blocks, in.D, ctx.alloc),
        E_blocks(in, blocks, ctx.alloc) {
    fill_row_scale(in, row_scale.data());
    std::fill(out.dA.begin(), out.dA.end(), 0.0f);
    std::fill(out.per_position_loss.begin(), out.per_position_loss.end(), 0.0);
    std::fill(out.counts.begin(), out.counts.end(), int64_t(0));
  }

  // Exactly what the constructor allocates: the variants' predicted working bytes.
  static int64_t bytes(const Shape& s, const RunOptions& o) {
    const TileBlocks b = choose_blocks(s.P(), s.V, s.D, o);
    return SparseTargets::bytes(s.P(), s.L) + s.P() * 4 /* row scale */ + TileScanWorkspace::bytes(b, s.D) +
           EmbeddingBlocks::bytes(b, s.D, o);
  }

  // scan_tiles over this run's inputs, blocks and workspace.
  template <class TileFn>
  void scan(unsigned sums, StepOutputs& out, TileFn&& tile) {
    scan_tiles(in, blocks, ws, sums, out, std::forward<TileFn>(tile));
  }

  // The tile's logits A[p0, p0+rows) · E[v0, v0+n)ᵀ into w.tile. Returns the block's rows of E as
  // float32 (decoded once per tile) for the gradient products.
  const float* make_logits(TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
    const int64_t D = in.D;
    const float* E_rows = E_blocks.block(w.index, v0, n);
    mat(w.tile, rows, n, blocks.ld).noalias() = cmat(in.A + p0 * D, rows, D, D) * cmat(E_rows, n, D, D).transpose();
    return E_rows;
  }

  // The targets' terms, read while w.tile still holds logits: loss −x, true positives.
  void add_target_terms(TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) const {
    for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
      const float x = w.tile[r * blocks.ld + j];
      w.loss[r] -= x;
      w.true_pos[r] += x > 0.0f;
    });
  }

  // With w.tile holding s·w·σ(x): subtracts s·w at the targets, which leaves the logit gradient G, and
  // accumulates dE[v0, v0+n) += Gᵀ·A (overwritten by the first chunk) and w.dA += G·E_rows.
  void add_gradients(TileThread& w, const float* E_rows, int64_t v0, int64_t n, int64_t p0, int64_t rows,
                     StepOutputs& out) const {
    const int64_t D = in.D;
    for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
      w.tile[r * blocks.ld + j] -= row_scale[p0 + r];
    });
    auto Ab = cmat(in.A + p0 * D, rows, D, D);
    auto Eb = cmat(E_rows, n, D, D);
    auto X = mat(w.tile, rows, n, blocks.ld);
    auto dEb = mat(out.dE.data() + v0 * D, n, D, D);
    if (p0 == 0) dEb.noalias() = X.transpose() * Ab;
    else dEb.noalias() += X.transpose() * Ab;
    mat(w.dA, rows, D, D).noalias() += X * Eb;
  }

  const StepInputs& in;
  const TileBlocks blocks;
  const BceTileKernels& kernels;
  EigenOnCallingThread eigen_sequential;
  SparseTargets targets;
  Buffer<float> row_scale;
  TileScanWorkspace ws;
  EmbeddingBlocks E_blocks;
};

// What the tiled CPU variants have in common besides their scans: backend, what they support (any
// storage format of E, decoded per block) and their working memory (exactly TiledRun's).
class TiledVariant : public Variant {
 public:
  std::string backend() const override { return "cpu"; }
  std::string supports() const override {
    return "reductions mean|sum, weights, padding, duplicates; E in fp32 or any stored format (decoded per block)";
  }
  // Any storage format of E; products always in fp32 (a tf32 or bf16 operand is a GPU option).
  std::optional<std::string> skip_reason(const Shape&, const RunOptions& o) const override {
    if (!o.operand_is_fp32()) return "computes in fp32 only (operand " + o.operand + " not supported)";
    return std::nullopt;
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override { return TiledRun::bytes(s, o); }
};

}  // namespace lobench::cpu
