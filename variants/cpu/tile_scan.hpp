// The schedule the tiled CPU variants (chunked, fused) share: position chunks outside, vocabulary
// blocks inside, dealt to the threads round-robin.
//
// For each chunk of block_p positions every vocabulary block of block_v entries is one tile: its logits
// [block_p, block_v] are made, used and forgotten by one thread. A vocabulary block belongs to one
// thread at a time, so each dE row has one writer. Consecutive vocabulary blocks form groups (a number
// of blocks fixed by V and block_v, never by the thread count), each made by one thread; a group's
// per-position float sums (loss, dA) are made in a result slot and added into the outputs in group order
// (block_ordered_sums.hpp). The order of every floating-point addition is fixed by the data and the
// block sizes, so outputs are bit-identical for 1, 2 or 64 threads. Counts are integers, summed per
// thread. Working memory is therefore O(threads·block_p·(block_v + D)) besides the
// sparse targets and a row scale per position (O(P·L) together), whatever V is; and a P of 10^5 or more
// is just more chunks.
#pragma once

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "variants/bce/bce_tile.hpp"
#include "variants/cpu/block_ordered_sums.hpp"
#include "variants/cpu/eigen_maps.hpp"
#include "variants/cpu/fixed_panels.hpp"
#include "variants/cpu/finite_outputs.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/sparse_targets.hpp"
#include "variants/cpu/tile_blocks.hpp"
#include "variants/cpu/tile_products.hpp"
#include "variants/cpu/tile_products_bf16.hpp"
#include "variants/fp8_scaling.hpp"
#include "variants/operand.hpp"
#include "variants/variant.hpp"

namespace lobench::cpu {

// What one thread works in while it handles a tile of the current chunk (row r is position p0 + r).
struct TileThread {
  int index = 0;
  float* tile = nullptr;          // [block_p, ld] logits, then logit gradients
  double* loss = nullptr;         // [block_p] Σ softplus − Σ_targets x over the current group's tiles
  int64_t* predicted = nullptr;   // [block_p] logits > 0, over this thread's tiles of the chunk
  int64_t* true_pos = nullptr;    // [block_p] targets with logit > 0, likewise
  float* dA = nullptr;            // [block_p, D] Σ G·E_b over the current group's tiles
  // (loss and dA point into the group's result slot, BlockOrderedSums, zeroed when the group starts;
  // with kFirstTileWritesGradient, dA is not zeroed and the group's first tile writes it)
  bool first_of_group = false;    // the tile is its group's first
};

// The working memory of a scan, all from the run's counting allocator: per thread a tile and the
// chunk's counts; the result slots the tiles' float sums wait in until they are added in block order.
// A thread's tile holds block_p rows of ld floats, or (transposed, the fused variant's products of our
// own: fused_tile.hpp) block_v rows of transposed_ld(block_p).
class TileScanWorkspace {
 public:
  TileScanWorkspace(const TileBlocks& b, int64_t D, CountingAllocator& alloc, bool transposed = false)
      : b_(b),
        tile_floats_(tile_floats(b, transposed)),
        tiles_(alloc, b.threads * tile_floats_),
        predicted_(alloc, b.threads * b.block_p),
        true_pos_(alloc, b.threads * b.block_p),
        sums_(b.threads, b.block_p, b.block_p * D, alloc) {}

  static int64_t tile_floats(const TileBlocks& b, bool transposed) {
    return transposed ? b.block_v * transposed_ld(b.block_p) : b.block_p * b.ld;
  }

  // Exactly what the constructor allocates.
  static int64_t bytes(const TileBlocks& b, int64_t D, bool transposed = false) {
    return b.threads * (tile_floats(b, transposed) * 4 + b.block_p * (8 + 8)) +
           BlockOrderedSums::bytes(b.threads, b.block_p, b.block_p * D);
  }

  TileThread thread(int t) {
    TileThread w;
    w.index = t;
    w.tile = tiles_.data() + t * tile_floats_;
    w.predicted = predicted_.data() + t * b_.block_p;
    w.true_pos = true_pos_.data() + t * b_.block_p;
    return w;
  }
  const int64_t* predicted(int t) const { return predicted_.data() + t * b_.block_p; }
  const int64_t* true_pos(int t) const { return true_pos_.data() + t * b_.block_p; }
  BlockOrderedSums& sums() { return sums_; }

 private:
  TileBlocks b_;
  int64_t tile_floats_;
  Buffer<float> tiles_;
  Buffer<int64_t> predicted_, true_pos_;
  BlockOrderedSums sums_;
};

// The rows of E of one vocabulary block as float32: E itself, or, when E is held in a narrower format
// (StepInputs::E_stored), the block decoded into this thread's buffer; with fp8 operands, the block
// rounded to the operand's format with E's per-tensor scale (variants/fp8_scaling.hpp; the scale from
// a pass over all of E at construction) into that buffer. Accumulation stays float32.
//
// A run whose tiles take E strip by strip (`strips`: the fused bf16 tiles, which only pair E's rows) reads
// the block through for_each_strip instead, and where E needs the buffer (stored narrower, or fp8
// operands) it holds kStripRows rows: each strip decoded and rounded there is paired from the L1 cache (one
// pass over the block from memory instead of a rounding pass and a pairing pass over a rounded copy in L2).
class EmbeddingBlocks {
 public:
  static constexpr int64_t kStripRows = 16;  // even: row pairs never straddle strips

  EmbeddingBlocks(const StepInputs& in, const TileBlocks& b, const RunOptions& o, CountingAllocator& alloc,
                  bool strips = false)
      : in_(in),
        buffer_rows_(buffer_rows(b, in.E_stored != nullptr, is_fp8(parse_operand(o.operand)), strips)),
        rows_(alloc, b.threads * buffer_rows_ * in.D) {
    const Operand op = parse_operand(o.operand);
    if (is_fp8(op)) fp8_.emplace(op, max_abs(b.threads));
  }

  // Exactly what the constructor allocates for a run with these options.
  static int64_t bytes(const TileBlocks& b, int64_t D, const RunOptions& o, bool strips = false) {
    return b.threads * buffer_rows(b, !o.e_is_float32(), is_fp8(parse_operand(o.operand)), strips) * D * 4;
  }

  // The block's rows (in a run without strips).
  const float* block(int thread, int64_t v0, int64_t n) {
    if (buffer_rows_ == 0) return in_.E + v0 * in_.D;  // float32 E read in place
    if (buffer_rows_ < n) throw std::logic_error("EmbeddingBlocks::block: this run reads E strip by strip");
    return into_buffer(thread, v0, n);
  }

  // fn(rows, r0, count) for pieces of the block [v0, v0+n) in order, rows[i] the block's row r0 + i (D floats
  // apart, r0 even): E's rows in one piece where E is float32 without fp8 operands, else pieces of the
  // buffer's rows.
  template <class Fn>
  void for_each_strip(int thread, int64_t v0, int64_t n, Fn&& fn) {
    if (buffer_rows_ == 0) return fn(block(thread, v0, n), int64_t(0), n);
    for (int64_t r0 = 0; r0 < n; r0 += buffer_rows_) {
      const int64_t count = std::min(buffer_rows_, n - r0);
      fn(static_cast<const float*>(into_buffer(thread, v0 + r0, count)), r0, count);
    }
  }

  // E's scaling with fp8 operands, else nothing.
  const std::optional<Fp8Scaling>& fp8() const { return fp8_; }

 private:
  // Rows of the per-thread buffer: none for float32 E without fp8 operands, else a block, or a strip in a
  // run with strips.
  static int64_t buffer_rows(const TileBlocks& b, bool e_stored, bool fp8, bool strips) {
    if (!e_stored && !fp8) return 0;
    return strips ? std::min(kStripRows, b.block_v) : b.block_v;
  }

  // E's rows [v0, v0+n) (n at most the buffer's rows) decoded and/or rounded into the thread's buffer.
  float* into_buffer(int thread, int64_t v0, int64_t n) {
    float* out = rows_.data() + thread * buffer_rows_ * in_.D;
    if (in_.E_stored) in_.E_stored->decode_rows(v0, n, out);
    if (fp8_) fp8_->round(in_.E_stored ? out : in_.E + v0 * in_.D, out, n * in_.D);
    return out;
  }

  // max |E| (E as stored decoded piece by piece into the threads' buffers).
  float max_abs(int threads) {
    if (!in_.E_stored) return lobench::max_abs(in_.E, in_.V * in_.D, threads);
    const int64_t pieces = (in_.V + buffer_rows_ - 1) / buffer_rows_;
    uint32_t top = 0;  // the largest magnitude's bits (max_abs's order: NaN above inf above every finite value)
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : top)
    for (int64_t i = 0; i < pieces; ++i) {
      float* out = rows_.data() + omp_get_thread_num() * buffer_rows_ * in_.D;
      const int64_t v0 = i * buffer_rows_, n = std::min(buffer_rows_, in_.V - v0);
      in_.E_stored->decode_rows(v0, n, out);
      top = std::max(top, std::bit_cast<uint32_t>(lobench::max_abs(out, n * in_.D)));
    }
    return std::bit_cast<float>(top);
  }

  const StepInputs& in_;
  int64_t buffer_rows_;
  Buffer<float> rows_;
  std::optional<Fp8Scaling> fp8_;
};

// Row scale s·w_p of the logit gradient g = s·w_p·(σ(x) − y), for every position.
inline void fill_row_scale(const StepInputs& in, float* row_scale) {
  const double s = in.gradient_scale();
  for (int64_t p = 0; p < in.P; ++p) row_scale[p] = float(s * in.weight(p));
}

// Which per-position sums a scan produces and adds into the outputs.
enum TileScanSums : unsigned {
  kLossAndCounts = 1,  // out.per_position_loss += each tile's loss; counts[kTP] += true_pos; counts[kFP] += predicted
  kInputGradient = 2,  // out.dA rows += each tile's dA (out.dA must start at 0)
  kFirstTileWritesGradient = 4,  // with kInputGradient: the group's first tile overwrites w.dA (not zeroed)
};

// Vocabulary blocks per group: about 6 groups per thread for up to 16 threads, at most 8 blocks (a
// group is then ~8 tiles of work, so that the threads meet at a result slot every few milliseconds, not
// at every tile). From the block count alone: the grouping fixes the order of the sums.
inline int64_t blocks_per_group(int64_t n_vblocks) { return std::clamp<int64_t>(n_vblocks / (6 * 16), 1, 8); }

// Where a scan adds its per-position sums: loss [P] (float64), dA [P, D], counts [P, 4]; a pointer may be
// null when `sums` does not select it. Plain pointers, so that a caller other than a variant (the XMC
// classifier's step, harness/train/classifier_step.cpp) scans into buffers of its own allocator.
struct TileScanTargets {
  double* per_position_loss = nullptr;
  float* dA = nullptr;
  int64_t* counts = nullptr;
};

// Runs tile(TileThread&, v0, n, p0, rows) for every vocabulary block [v0, v0+n) of every position chunk
// [p0, p0+rows) of a [P, V] logit matrix (D: the width of dA's rows), threads taking groups of
// consecutive blocks round-robin; tile() adds its loss terms and dA share into w.loss and w.dA. The sums
// selected by `sums` are added into `out` (raw: see finish_losses_and_counts): each group's loss and dA
// in group order as groups finish, the counts per thread when the chunk is done.
template <class TileFn>
void scan_tiles(int64_t P, int64_t V, int64_t D, const TileBlocks& b, TileScanWorkspace& ws, unsigned sums,
                const TileScanTargets& out, TileFn&& tile) {
  const int64_t n_vblocks = (V + b.block_v - 1) / b.block_v;
  const int64_t group = blocks_per_group(n_vblocks), n_groups = (n_vblocks + group - 1) / group;
  const int T = b.threads;
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    TileThread w = ws.thread(t);
    for (int64_t p0 = 0; p0 < P; p0 += b.block_p) {
      const int64_t rows = std::min(b.block_p, P - p0);
      if (sums & kLossAndCounts) {
        std::fill_n(w.predicted, rows, int64_t(0));
        std::fill_n(w.true_pos, rows, int64_t(0));
      }
      BlockOrderedSums& sums_in_order = ws.sums();
#pragma omp single
      sums_in_order.start_chunk((sums & kLossAndCounts) ? out.per_position_loss + p0 : nullptr, rows,
                                (sums & kInputGradient) ? out.dA + p0 * D : nullptr, rows * D);
      // (the single's barrier: every thread sees the chunk started)

      // Round-robin; which thread makes which group does not matter: the order in which the groups'
      // sums enter the outputs is the groups' order, whatever the thread count.
#pragma omp for schedule(static, 1)
      for (int64_t g = 0; g < n_groups; ++g) {
        sums_in_order.wait_for_slot(g);
        w.loss = sums_in_order.loss_slot(g);
        w.dA = sums_in_order.grad_slot(g);
        if (sums & kLossAndCounts) std::fill_n(w.loss, rows, 0.0);
        if ((sums & kInputGradient) && !(sums & kFirstTileWritesGradient)) std::fill_n(w.dA, rows * D, 0.0f);
        for (int64_t vb = g * group; vb < std::min(n_vblocks, (g + 1) * group); ++vb) {
          const int64_t v0 = vb * b.block_v;
          w.first_of_group = vb == g * group;
          tile(w, v0, std::min(b.block_v, V - v0), p0, rows);
        }
        sums_in_order.publish(g);
      }
      // (the implicit barrier above: every tile of the chunk is done)
#pragma omp single
      sums_in_order.finish_chunk();

      if (sums & kLossAndCounts) {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t p = p0 + r;
          for (int u = 0; u < T; ++u) {
            out.counts[p * 4 + kTP] += ws.true_pos(u)[r];
            out.counts[p * 4 + kFP] += ws.predicted(u)[r];
          }
        }
      }
      // (and the barrier after it: the next chunk may reset the per-thread counts)
    }
  }
}

// scan_tiles over a variant's inputs and outputs.
template <class TileFn>
void scan_tiles(const StepInputs& in, const TileBlocks& b, TileScanWorkspace& ws, unsigned sums,
                StepOutputs& out, TileFn&& tile) {
  scan_tiles(in.P, in.V, in.D, b, ws, sums,
             TileScanTargets{out.per_position_loss.data(), out.dA.data(), out.counts.data()},
             std::forward<TileFn>(tile));
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
// the sparse targets, the row scale s·w, the per-thread tiles and E blocks, and with bf16 operands the
// packed bf16 operands (tile_products_bf16.hpp); the outputs it accumulates into start at zero, and
// Eigen runs each product on its calling thread for the run's duration. Its methods are the steps the
// two variants' tiles are made of.
//
// With fp32 operands on an AVX-512 CPU the tiles' products are micro-kernels of our own (fused_tile.hpp,
// `own`): the tiles are held transposed and the run holds Aᵀ (made here) for them; the methods for
// transposed tiles are the steps of such a tile. Otherwise `own` is null and the products are cpu::sgemm's.
//
// With fp8 operands (e4m3, e5m2) the run is a bf16 run on A and E rounded to the fp8 format with their
// per-tensor scales (variants/fp8_scaling.hpp): A once into A_fp8, E per block (EmbeddingBlocks); the
// bf16 packing then finds them exact, and G is rounded to bf16 as in a bf16 run.
//
// With bf16 operands, a run that asks for fused bf16 tiles (the fused variant) gets them where their epilogue
// runs (bf16_tiles_fused: tile_products_bf16.hpp, the element-wise work in the logits' epilogue, the
// tile's steps in bf16_fused_tile()); otherwise its tiles are the library path's.
struct TiledRun {
  TiledRun(const StepInputs& in_, StepOutputs& out, RunContext& ctx, bool want_fused_bf16_tiles = false)
      : in(in_),
        bf16_tiles_fused(fused_bf16_tiles(ctx.options, want_fused_bf16_tiles)),
        own(own_products(ctx.options)),
        library(tile_products_library()),
        blocks(choose_blocks(in.P, in.V, in.D, ctx.options)),
        kernels(bce_tile_kernels_for(parse_epilogue(ctx.options.epilogue))),
        targets(in, ctx.alloc),
        row_scale(ctx.alloc, in.P),
        ws(blocks, in.D, ctx.alloc, own != nullptr),
        ldat(own ? transposed_ld(in.P) : 0),
        At(ctx.alloc, in.D * ldat),
        E_blocks(in, blocks, ctx.options, ctx.alloc, bf16_tiles_fused),
        A_fp8(ctx.alloc, fp8_A_floats(in.P, in.D, ctx.options)),
        bf16(uses_bf16(ctx.options) ? std::optional<Bf16TileProducts>(std::in_place, A_for_products(ctx.options), in.P,
                                                                      in.D, blocks, ctx.alloc, bf16_tiles_fused,
                                                                      parse_epilogue(ctx.options.epilogue) == Epilogue::fp16)
                                    : std::nullopt) {
    fill_row_scale(in, row_scale.data());
    if (own) transpose_rows(in.A, in.P, in.D, At.data(), ldat);
    std::fill(out.dA.begin(), out.dA.end(), 0.0f);
    std::fill(out.per_position_loss.begin(), out.per_position_loss.end(), 0.0);
    std::fill(out.counts.begin(), out.counts.end(), int64_t(0));
  }

  // Exactly what the constructor allocates: the variants' predicted working bytes.
  static int64_t bytes(const Shape& s, const RunOptions& o, bool want_fused_bf16_tiles = false) {
    const TileBlocks b = choose_blocks(s.P(), s.V, s.D, o);
    const bool transposed = own_products(o) != nullptr;
    const bool fused_tiles = fused_bf16_tiles(o, want_fused_bf16_tiles);
    return SparseTargets::bytes(s.P(), s.L) + s.P() * 4 /* row scale */ + TileScanWorkspace::bytes(b, s.D, transposed) +
           (transposed ? s.D * transposed_ld(s.P()) * 4 /* Aᵀ */ : 0) + EmbeddingBlocks::bytes(b, s.D, o, fused_tiles) +
           fp8_A_floats(s.P(), s.D, o) * 4 + (uses_bf16(o) ? Bf16TileProducts::bytes(s.P(), s.D, b, fused_tiles) : 0);
  }

  // The bf16 products make the tiles: bf16 operands, and fp8 operands (their values are exact in bf16).
  static bool uses_bf16(const RunOptions& o) { return products_in_bf16(parse_operand(o.operand)); }
  // fp8 operands: A rounded with its per-tensor scale, [P, D] (else nothing).
  static int64_t fp8_A_floats(int64_t P, int64_t D, const RunOptions& o) {
    return is_fp8(parse_operand(o.operand)) ? P * D : 0;
  }
  // The A the bf16 products pack: A itself, or, with fp8 operands, A_fp8 filled with A rounded (its scale
  // from max |A|; the products then read exactly these values).
  const float* A_for_products(const RunOptions& o) {
    const Operand op = parse_operand(o.operand);
    if (!is_fp8(op)) return in.A;
    A_scaling.emplace(Fp8Scaling::of(op, in.A, in.P * in.D, blocks.threads));
    A_scaling->round(in.A, A_fp8.data(), in.P * in.D, blocks.threads);
    return A_fp8.data();
  }

  // Whether a run that wants fused bf16 tiles gets them: bf16 operands, the tile's epilogue runs here
  // (AVX512_BF16), and the element-wise kernels are the AVX-512 ones (whose σ it reproduces). Every bf16
  // kernel then takes this path (the logits made in the epilogue's kernel with avx512_bf16, by the
  // products' kernel otherwise), so all give the same bits.
  // An fp16 epilogue gets them where the CPU has AVX512-FP16 (the binary16 tile reproduces the emulated
  // kernels' bits); a bf16 epilogue takes the library path (no kernel of the tile computes in bfloat16).
  static bool fused_bf16_tiles(const RunOptions& o, bool wanted) {
    const Epilogue e = parse_epilogue(o.epilogue);
    return wanted && uses_bf16(o) && e != Epilogue::bf16 && Bf16TileProducts::fused_tiles_run(e == Epilogue::fp16) &&
           active_bce_tile_kernels().path == SimdPath::avx512;
  }
  // The kernels of our own when a run with these options uses them, else nullptr (their element-wise work
  // is fp32's: an epilogue in another precision takes the library path, whose sweep is a separate kernel).
  static const OwnTileKernels* own_products(const RunOptions& o) {
    return uses_bf16(o) || !o.epilogue_is_fp32() ? nullptr : own_tile_kernels();
  }

  // ---- transposed tiles (own != nullptr) ----

  // The tile of vocabulary block [v0, v0+n) and positions [p0, p0+rows) in w.tile (E's rows decoded once).
  TransposedTile transposed_tile(TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows) {
    TransposedTile t;
    t.rows = rows, t.n = n, t.D = in.D;
    t.At = At.data() + p0, t.ldat = ldat;
    t.A = in.A + p0 * in.D;
    t.E = E_blocks.block(w.index, v0, n);
    t.Gt = w.tile, t.ldt = transposed_ld(rows);
    return t;
  }

  // The targets' terms, loss −x and true positives, their logits made again by the kernels' own chain (the
  // same bits as the tile's).
  void add_target_terms(const TransposedTile& t, TileThread& w, int64_t v0, int64_t p0) const {
    for_each_target_in_tile(targets, v0, t.n, p0, t.rows, [&](int64_t r, int64_t j) {
      const float x = logit_chain(t.E + j * t.D, t.A + r * t.D, t.D);
      w.loss[r] -= x;
      w.true_pos[r] += x > 0.0f;
    });
  }

  // With the tile holding s·w·σ(x): subtracts s·w at the targets, which leaves the logit gradient G, and
  // accumulates dE[v0, v0+n) += Gᵀ·A (overwritten by the first chunk) and w.dA += G·E_b (overwritten by
  // the group's first tile when the scan has kFirstTileWritesGradient).
  void add_gradients(const TransposedTile& t, TileThread& w, int64_t v0, int64_t p0, StepOutputs& out,
                     bool first_tile_writes_dA) const {
    for_each_target_in_tile(targets, v0, t.n, p0, t.rows, [&](int64_t r, int64_t j) {
      t.Gt[j * t.ldt + r] -= row_scale[p0 + r];
    });
    own->grad_E(t, out.dE.data() + v0 * t.D, /*accumulate=*/p0 != 0);
    own->grad_A(t, w.dA, /*accumulate=*/!(first_tile_writes_dA && w.first_of_group));
  }

  // ---- fused bf16 tiles (bf16_tiles_fused) ----

  // One tile: its logits with the loss terms, counts and G's pairs made in their epilogue, the targets'
  // terms (from the logits the epilogue stored at the targets in w.tile), the rows' softplus sums, then
  // dE[v0, v0+n) (= on the first chunk, else +=) and w.dA (= on the group's first tile, else +=). The same
  // bits, in the same order, as make_logits, add_target_terms, softplus_and_sigmoid and add_gradients, but
  // for the loss, which the tile sums from one logarithm per 16 logits of a lane (bf16_fused_tile.hpp).
  void fused_bf16_tile(TileThread& w, int64_t v0, int64_t n, int64_t p0, int64_t rows, StepOutputs& out) {
    const int64_t D = in.D;
    E_blocks.for_each_strip(w.index, v0, n, [&](const float* E_rows, int64_t r0, int64_t count) {
      bf16->pair_E(w.index, E_rows, r0, count);
    });
    // While the logits are made or their epilogue runs: this tile's rows of dE (read and written by the dE
    // product), and the rows of E of the block this thread most likely takes next (the next of its group;
    // the scan deals groups round-robin). In a step both come from DRAM.
    Bf16FusedTile::Prefetch prefetch[2];
    prefetch[0] = {out.dE.data() + v0 * D, n * D * 4, true};
    const int64_t vb = v0 / blocks.block_v, n_vblocks = (in.V + blocks.block_v - 1) / blocks.block_v;
    const int64_t group = blocks_per_group(n_vblocks);
    const int64_t next = (vb + 1) % group != 0 ? vb + 1 : vb + 1 + (blocks.threads - 1) * group;
    if (in.E_stored == nullptr && next < n_vblocks)
      prefetch[1] = {in.E + next * blocks.block_v * D, std::min(blocks.block_v, in.V - next * blocks.block_v) * D * 4, false};
    bf16->fused_logits(w.index, n, p0, rows, row_scale.data() + p0, w.tile, blocks.ld, w.predicted,
                       [&](auto&& fn) { for_each_target_in_tile(targets, v0, n, p0, rows, fn); }, prefetch);
    add_target_terms(w, v0, n, p0, rows);
    bf16->add_row_sums(w.index, rows, w.loss);
    bf16->gradient_products(w.index, /*E_rows=*/nullptr, n, p0, rows, out.dE.data() + v0 * D, w.dA,
                            !w.first_of_group, /*E_paired=*/true);
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
    if (bf16) bf16->logits(w.index, E_rows, n, p0, rows, w.tile, blocks.ld);
    else tile_logits(in.A + p0 * D, E_rows, rows, n, D, w.tile, blocks.ld, library);
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
  // accumulates dE[v0, v0+n) += Gᵀ·A (overwritten by the first chunk) and w.dA += G·E_rows, the tile's
  // share of dA (scan_tiles adds each group's into the output rows in group order).
  void add_gradients(TileThread& w, const float* E_rows, int64_t v0, int64_t n, int64_t p0, int64_t rows,
                     StepOutputs& out) const {
    const int64_t D = in.D;
    for_each_target_in_tile(targets, v0, n, p0, rows, [&](int64_t r, int64_t j) {
      w.tile[r * blocks.ld + j] -= row_scale[p0 + r];
    });
    if (bf16) bf16->gradients(w.index, w.tile, blocks.ld, E_rows, n, p0, rows, out.dE.data() + v0 * D, w.dA);
    else tile_gradients(w.tile, blocks.ld, in.A + p0 * D, E_rows, rows, n, D, out.dE.data() + v0 * D, p0 == 0, w.dA,
                        library);
  }

  const StepInputs& in;
  const bool bf16_tiles_fused;  // fused bf16 tiles (fused_bf16_tile), else the library path's with bf16
  const OwnTileKernels* own;  // the products of our own, or nullptr (cpu::sgemm)
  const GemmLibrary library;  // the library's products when own is null: taken once, for the whole run
  const TileBlocks blocks;
  const BceTileKernels& kernels;
  ProductsOnCallingThread products_on_calling_thread;
  SparseTargets targets;
  Buffer<float> row_scale;
  TileScanWorkspace ws;
  int64_t ldat;          // with own products: floats between Aᵀ's rows (else 0)
  Buffer<float> At;      // with own products: Aᵀ [D, ldat] (else empty)
  EmbeddingBlocks E_blocks;
  Buffer<float> A_fp8;                      // with fp8 operands: A rounded to them (else empty)
  std::optional<Fp8Scaling> A_scaling;      // with fp8 operands: A's scaling
  mutable std::optional<Bf16TileProducts> bf16;  // with bf16 operands only (per-thread scratch: mutable)
};

// What the tiled CPU variants have in common besides their scans: backend, what they support (any
// storage format of E, decoded per block) and their working memory (exactly TiledRun's).
class TiledVariant : public Variant {
 public:
  std::string backend() const override { return "cpu"; }
  std::string supports() const override {
    return "reductions mean|sum, weights, padding, duplicates; E in fp32 or any stored format (decoded per block); "
           "operands fp32, or bf16, e4m3, e5m2 (AVX512_BF16); epilogue fp32, bf16, fp16 (emulated; fused with bf16 "
           "or fp8 operands in fp16 natively on AVX512-FP16)";
  }
  // Any storage format of E; products in fp32, or with bf16 or fp8 operands where the CPU has AVX512_BF16
  // (tf32 is a GPU tensor-core format).
  // Any epilogue precision (variants/epilogue.hpp: the library path with the rounded kernels).
  std::optional<std::string> skip_reason(const Shape&, const RunOptions& o) const override {
    if (o.operand_is_fp32()) return std::nullopt;
    if (products_in_bf16(parse_operand(o.operand))) return bf16_products_unavailable();
    return "computes with fp32, bf16 or fp8 operands only (operand " + o.operand + " is a GPU tensor-core format)";
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override { return TiledRun::bytes(s, o); }
};

}  // namespace lobench::cpu
