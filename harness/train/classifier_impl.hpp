// The classifier head's state (private to classifier.cpp and classifier_step.cpp): the weights in their
// storage format, the buffers predicted_bytes() counts, and the element operations on them (decode,
// store, the rounded SGD update of a block of rows, the step's positives).
#pragma once

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/train/classifier.hpp"
#include "harness/train/head_products.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/stochastic.hpp"
#include "variants/bce/bce_tile.hpp"  // the element-wise BCE tile kernels the chunked/fused variants use (AVX-512/AVX2/portable)
#include "variants/fp8_scaling.hpp"
#include "variants/cpu/tile_scan.hpp"  // the tiled variants' schedule: label blocks in order, sums independent of the thread count

namespace lobench::train {

namespace lp = lobench::precision;

namespace classifier_detail {

enum class Storage { f32, u16, u8 };

inline Storage storage_of(const lp::Format& f) {
  switch (lp::code_bytes(f)) {
    case 1: return Storage::u8;
    case 2: return Storage::u16;
    default: return Storage::f32;
  }
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace classifier_detail

using classifier_detail::ceil_div;
using classifier_detail::Storage;
using classifier_detail::storage_of;

struct Classifier::Impl {
  Impl(const ClassifierConfig& c, int64_t tile, int64_t chunk_rows, CountingAllocator& a)
      : cfg(c), alloc(a), q(c.format), storage(storage_of(c.format)),
        identity(c.format.same_encoding(lp::formats::float32())), gq(c.grad_format),
        grad_identity(c.grad_format.same_encoding(lp::formats::float32())), tile(tile), chunk_rows(chunk_rows),
        T(c.threads), kernels(&cpu::active_bce_tile_kernels()) {
    const int64_t V = c.V, D = c.D, B = c.max_batch;
    switch (storage) {
      case Storage::f32: wf = Buffer<float>(a, V * D); break;
      case Storage::u16: w16 = Buffer<uint16_t>(a, V * D); break;
      case Storage::u8: w8 = Buffer<uint8_t>(a, V * D); break;
    }
    if (c.mode == UpdateMode::separate) grad_chunk = Buffer<float>(a, chunk_rows * D);
    else grad_tiles = Buffer<float>(a, T * tile * D);
    if (storage != Storage::f32) w_tiles = Buffer<float>(a, T * tile * D);
    scan = std::make_unique<cpu::TileScanWorkspace>(scan_blocks(c, tile, B), D, a);
    products = std::make_unique<StepProducts>(c.operand, D, scan_blocks(c, tile, B), a);
    row_loss = Buffer<double>(a, B);
    row_counts = Buffer<int64_t>(a, B * 4);
    ones = Buffer<float>(a, B);
    std::fill_n(ones.data(), B, 1.0f);
    loss_rows = Buffer<double>(a, T * tile);
    predicted_rows = Buffer<int64_t>(a, T * tile);
    pairs = Buffer<int64_t>(a, std::max<int64_t>(c.max_positives, 1));
  }

  // The tiles of the shared scan (variants/cpu/tile_scan.hpp): `tile` labels by the step's B rows, one
  // position chunk (so every weight row is used for dH before the tile that owns it updates it), rows
  // 16-float aligned, the configured thread count (the scan uses at most one thread per label block).
  static cpu::TileBlocks scan_blocks(const ClassifierConfig& c, int64_t tile, int64_t B) {
    cpu::TileBlocks b;
    b.block_v = tile;
    b.block_p = B;
    b.ld = (tile + 15) / 16 * 16;
    b.threads = c.threads;
    return b;
  }

  ClassifierConfig cfg;
  CountingAllocator& alloc;
  lp::Quantizer q;
  Storage storage;
  bool identity;  // float32 storage: rounding is the identity
  lp::Quantizer gq;    // the logit gradient's format (ClassifierConfig::grad_format)
  bool grad_identity;  // float32: the logit gradient is used as computed
  int64_t tile, chunk_rows;
  int T;
  const cpu::BceTileKernels* kernels;

  Buffer<float> wf;
  Buffer<uint16_t> w16;
  Buffer<uint8_t> w8;
  Buffer<float> grad_chunk, grad_tiles, w_tiles;
  std::unique_ptr<cpu::TileScanWorkspace> scan;  // the threads' logit tiles and the in-order sums of loss and dH
  std::unique_ptr<StepProducts> products;        // the tiles' products at the operand precision
  Buffer<double> row_loss;     // [B] the step's loss per row, summed in label-block order
  Buffer<int64_t> row_counts;  // [B, 4] the scan's counts (true positives, predicted), unused by training
  Buffer<float> ones;          // [B] the row scale of the logit gradient (sum reduction: 1)
  Buffer<double> loss_rows;       // evaluate(): per thread, [tile] loss per label row of its tile
  Buffer<int64_t> predicted_rows; // evaluate(): likewise, predicted counts
  Buffer<int64_t> pairs;  // label << 32 | row, sorted
  int64_t n_pairs = 0;

  // Rows [v0, v0+n) as float32: a pointer into the weights (float32 storage) or decoded into thread
  // t's tile.
  const float* rows(int t, int64_t v0, int64_t n) {
    const int64_t D = cfg.D;
    if (storage == Storage::f32) return wf.data() + v0 * D;
    float* out = w_tiles.data() + int64_t(t) * tile * D;
    decode(v0, n, out);
    return out;
  }
  // Rows from v0 on set from float32 values, rounded to the format by nearest-even.
  void store(int64_t v0, std::span<const float> in) {
    const int64_t D = cfg.D;
    switch (storage) {
      case Storage::f32: q.round(in, std::span<float>(wf.data() + v0 * D, in.size())); break;
      case Storage::u16: q.encode(in, std::span<uint16_t>(w16.data() + v0 * D, in.size())); break;
      case Storage::u8: q.encode(in, std::span<uint8_t>(w8.data() + v0 * D, in.size())); break;
    }
  }
  // max |W| over the whole head (decoded tile by tile into the threads' tiles when packed): the fp8
  // operands' weight scale (head_products.hpp). Bit order of magnitudes: NaN above inf above finite.
  float max_abs_weights() {
    const int64_t D = cfg.D;
    if (storage == Storage::f32) return max_abs(wf.data(), cfg.V * D, T);
    uint32_t top = 0;
#pragma omp parallel for num_threads(T) schedule(static) reduction(max : top)
    for (int64_t v0 = 0; v0 < cfg.V; v0 += tile) {
      float* out = w_tiles.data() + int64_t(omp_get_thread_num()) * tile * D;
      const int64_t n = std::min(tile, cfg.V - v0);
      decode(v0, n, out);
      top = std::max(top, std::bit_cast<uint32_t>(max_abs(out, n * D)));
    }
    return std::bit_cast<float>(top);
  }
  void decode(int64_t v0, int64_t n, float* out) const {
    const int64_t D = cfg.D;
    const size_t len = size_t(n * D);
    switch (storage) {
      case Storage::f32: std::memcpy(out, wf.data() + v0 * D, len * sizeof(float)); break;
      case Storage::u16: q.decode(std::span<const uint16_t>(w16.data() + v0 * D, len), std::span<float>(out, len)); break;
      case Storage::u8: q.decode(std::span<const uint8_t>(w8.data() + v0 * D, len), std::span<float>(out, len)); break;
    }
  }

  // ELMO's fp8 rounding, first half: add the low 23 − M bits of each element's random word to the
  // float32 pattern and clear them. The caller then rounds to nearest-even into the format.
  void elmo_truncate(float* u, int64_t len, uint64_t stream, uint64_t first) const {
    const int k = std::max(1, 23 - cfg.format.mantissa_bits);
    const uint32_t mask = k >= 32 ? 0xFFFFFFFFu : ((uint32_t(1) << k) - 1);
    uint32_t words[1024];
    for (int64_t i0 = 0; i0 < len; i0 += 1024) {
      const int64_t m = std::min<int64_t>(1024, len - i0);
      lp::random_words(cfg.seed, stream, first + uint64_t(i0), std::span<uint32_t>(words, size_t(m)));
      for (int64_t i = 0; i < m; ++i) {
        const uint32_t bits = std::bit_cast<uint32_t>(u[i0 + i]);
        u[i0 + i] = std::bit_cast<float>((bits + (words[i] & mask)) & ~mask);
      }
    }
  }

  // W[v0 .. v0+n) ← round(W − lr·g), g [n, D]. Element v·D + d uses random word (seed, step, v·D + d),
  // v counted in the whole head (label_offset + v).
  void apply_update(int t, int64_t v0, int64_t n, const float* g, float lr, uint64_t step) {
    const int64_t D = cfg.D;
    const int64_t len = n * D;
    lp::RoundingOptions opt;
    opt.mode = cfg.rounding.elmo ? lp::Rounding::nearest_even : cfg.rounding.mode;
    opt.sr_bits = cfg.rounding.elmo ? 0 : cfg.rounding.sr_bits;
    opt.seed = cfg.seed;
    opt.stream = step;
    opt.index_offset = uint64_t((cfg.label_offset + v0) * D);
    if (storage == Storage::f32) {
      float* w = wf.data() + v0 * D;
      for (int64_t i = 0; i < len; ++i) w[i] = std::fma(-lr, g[i], w[i]);
      if (identity) return;
      if (cfg.rounding.elmo) elmo_truncate(w, len, step, opt.index_offset);
      q.round(std::span<const float>(w, size_t(len)), std::span<float>(w, size_t(len)), opt);
      return;
    }
    float* u = w_tiles.data() + int64_t(t) * tile * D;
    decode(v0, n, u);
    for (int64_t i = 0; i < len; ++i) u[i] = std::fma(-lr, g[i], u[i]);
    if (cfg.rounding.elmo) elmo_truncate(u, len, step, opt.index_offset);
    const std::span<const float> in(u, size_t(len));
    if (storage == Storage::u16) q.encode(in, std::span<uint16_t>(w16.data() + v0 * D, size_t(len)), opt);
    else q.encode(in, std::span<uint8_t>(w8.data() + v0 * D, size_t(len)), opt);
  }

  // The logit gradient of one tile (B rows of labels [v0, v0+n), rows ld floats apart) rounded in place
  // into grad_format with the update's rounding; element (b, v) draws word b·2^32 + v of stream
  // kGradStreamTag | step (v in the whole head; V < 2^31), so any tiling or thread count rounds alike.
  void round_logit_gradient(float* G, int64_t ld, int64_t B, int64_t v0, int64_t n, uint64_t step) const {
    if (grad_identity) return;
    lp::RoundingOptions opt;
    opt.mode = cfg.rounding.mode;
    opt.sr_bits = cfg.rounding.sr_bits;
    opt.seed = cfg.seed;
    opt.stream = kGradStreamTag | step;
    for (int64_t b = 0; b < B; ++b) {
      opt.index_offset = (uint64_t(b) << 32) | uint64_t(cfg.label_offset + v0);
      const std::span<float> row(G + b * ld, size_t(n));
      gq.round(row, row, opt);
    }
  }

  void load_pairs(const BatchLabels& labels, int64_t B) {
    if (int64_t(labels.offsets.size()) != B + 1)
      throw std::invalid_argument("Classifier: labels.offsets must have B + 1 entries");
    n_pairs = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = labels.offsets[b]; i < labels.offsets[b + 1]; ++i) {
        const int32_t id = labels.ids[size_t(i)];
        if (id < 0 || id >= cfg.V)
          throw std::invalid_argument("Classifier: label id " + std::to_string(id) + " outside [0, " +
                                      std::to_string(cfg.V) + ")");
        if (n_pairs >= pairs.size())
          throw std::invalid_argument("Classifier: the batch has more positives than max_positives = " +
                                      std::to_string(cfg.max_positives));
        pairs[n_pairs++] = (int64_t(id) << 32) | b;
      }
    }
    std::sort(pairs.data(), pairs.data() + n_pairs);
    // A repeated (row, label) pair is one positive (the label set of a row is a set).
    n_pairs = std::unique(pairs.data(), pairs.data() + n_pairs) - pairs.data();
  }
  std::pair<int64_t, int64_t> pairs_in(int64_t v0, int64_t v1) const {
    const int64_t* lo = std::lower_bound(pairs.data(), pairs.data() + n_pairs, v0 << 32);
    const int64_t* hi = std::lower_bound(lo, pairs.data() + n_pairs, v1 << 32);
    return {lo - pairs.data(), hi - pairs.data()};
  }
};

}  // namespace lobench::train
