#include "harness/train/classifier.hpp"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <stdexcept>

#include "variants/bce/bce_tile.hpp"  // the element-wise BCE tile kernels the chunked/fused variants use (AVX-512/AVX2/portable)
#include "variants/cpu/block_ordered_sums.hpp"  // tile sums added in tile order: results independent of the thread count
#include "precision_sim/pack.hpp"
#include "precision_sim/stochastic.hpp"

namespace lobench::train {

namespace lp = lobench::precision;

std::string to_string(UpdateMode m) { return m == UpdateMode::fused ? "fused" : "separate"; }

UpdateMode parse_update_mode(const std::string& s) {
  if (s == "fused") return UpdateMode::fused;
  if (s == "separate") return UpdateMode::separate;
  throw std::invalid_argument("unknown update mode '" + s + "' (valid: separate, fused)");
}

std::string UpdateRounding::name() const {
  if (elmo) return "elmo_sr";
  std::string n(lp::rounding_name(mode));
  if (mode == lp::Rounding::stochastic && sr_bits != 0) n += "_k" + std::to_string(sr_bits);
  return n;
}

UpdateRounding parse_update_rounding(const std::string& s, int sr_bits) {
  UpdateRounding r;
  if (s == "elmo_sr" || s == "elmo") {
    r.elmo = true;
    return r;
  }
  try {
    r.mode = lp::parse_rounding(s);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) + "; or elmo_sr (ELMO's fp8 stochastic rounding)");
  }
  r.sr_bits = sr_bits;
  return r;
}

namespace {

// Eigen splits a product over its own OpenMP threads when the calling team has one thread; inside our
// own parallel regions every product must stay on the calling thread.
class EigenSequential {
 public:
  EigenSequential() : saved_(Eigen::nbThreads()) { Eigen::setNbThreads(1); }
  ~EigenSequential() { Eigen::setNbThreads(saved_); }

 private:
  int saved_;
};

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMat>;
using CMap = Eigen::Map<const RowMat>;

enum class Storage { f32, u16, u8 };

Storage storage_of(const lp::Format& f) {
  switch (lp::code_bytes(f)) {
    case 1: return Storage::u8;
    case 2: return Storage::u16;
    default: return Storage::f32;
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

struct Classifier::Impl {
  Impl(const ClassifierConfig& c, int64_t tile, int64_t chunk_rows, CountingAllocator& a)
      : cfg(c), alloc(a), q(c.format), storage(storage_of(c.format)),
        identity(c.format.same_encoding(lp::formats::float32())), tile(tile), chunk_rows(chunk_rows),
        T(c.threads), kernels(&cpu::active_bce_tile_kernels()) {
    const int64_t V = c.V, D = c.D, B = c.max_batch;
    switch (storage) {
      case Storage::f32: wf = Buffer<float>(a, V * D); break;
      case Storage::u16: w16 = Buffer<uint16_t>(a, V * D); break;
      case Storage::u8: w8 = Buffer<uint8_t>(a, V * D); break;
    }
    if (c.mode == UpdateMode::separate) grad_chunk = Buffer<float>(a, chunk_rows * D);
    else grad_tiles = Buffer<float>(a, T * tile * D);
    logits = Buffer<float>(a, chunk_rows * B);
    if (storage != Storage::f32) w_tiles = Buffer<float>(a, T * tile * D);
    tile_sums = std::make_unique<cpu::BlockOrderedSums>(T, 1, B * D, a);
    loss_rows = Buffer<double>(a, T * tile);
    predicted_rows = Buffer<int64_t>(a, T * tile);
    ones = Buffer<float>(a, tile);
    std::fill_n(ones.data(), tile, 1.0f);
    pairs = Buffer<int64_t>(a, std::max<int64_t>(c.max_positives, 1));
  }

  ClassifierConfig cfg;
  CountingAllocator& alloc;
  lp::Quantizer q;
  Storage storage;
  bool identity;  // float32 storage: rounding is the identity
  int64_t tile, chunk_rows;
  int T;
  const cpu::BceTileKernels* kernels;

  Buffer<float> wf;
  Buffer<uint16_t> w16;
  Buffer<uint8_t> w8;
  Buffer<float> grad_chunk, grad_tiles, logits, w_tiles;
  std::unique_ptr<cpu::BlockOrderedSums> tile_sums;  // each tile's loss and Gᵀ·W, added in tile order
  Buffer<double> loss_rows;
  Buffer<int64_t> predicted_rows;
  Buffer<float> ones;
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

int64_t Classifier::bytes_per_weight(const lp::Format& f) {
  const int b = lp::code_bytes(f);
  return b == 0 ? 4 : b;
}

int64_t Classifier::resolved_tile(const ClassifierConfig& cfg) {
  const int64_t chunk = ceil_div(cfg.V, std::max<int64_t>(cfg.chunks, 1));
  const int64_t t = cfg.tile > 0 ? cfg.tile : 256;
  return std::max<int64_t>(1, std::min(t, chunk));
}

MemoryBreakdown Classifier::predicted_bytes(const ClassifierConfig& c) {
  const int64_t tile = resolved_tile(c);
  const int64_t chunk = ceil_div(c.V, c.chunks);
  const int64_t T = c.threads, D = c.D, B = c.max_batch;
  MemoryBreakdown m;
  m.weights = c.V * D * bytes_per_weight(c.format);
  m.weight_gradient = c.mode == UpdateMode::separate ? chunk * D * 4 : T * tile * D * 4;
  m.optimizer_state = 0;
  m.logits = chunk * B * 4;
  m.workspace = (lp::code_bytes(c.format) != 0 ? T * tile * D * 4 : 0) + cpu::BlockOrderedSums::bytes(int(T), 1, B * D) +
                T * tile * (8 + 8) + tile * 4 + std::max<int64_t>(c.max_positives, 1) * 8;
  return m;
}

int64_t Classifier::predicted_eval_bytes(const ClassifierConfig& c, int64_t eval_batch, int k) {
  const int64_t tile = resolved_tile(c);
  return int64_t(c.threads) * (tile * eval_batch * 4 + eval_batch * k * (4 + 4)) +
         cpu::BlockOrderedSums::bytes(c.threads, 1, 0);
}

Classifier::Classifier(const ClassifierConfig& cfg, CountingAllocator& alloc) : cfg_(cfg) {
  if (cfg.V <= 0 || cfg.D <= 0) throw std::invalid_argument("Classifier: V and D must be positive");
  if (cfg.V >= (int64_t(1) << 31)) throw std::invalid_argument("Classifier: V must be below 2^31");
  if (cfg.chunks < 1 || cfg.chunks > cfg.V)
    throw std::invalid_argument("Classifier: chunks must be in [1, V], got " + std::to_string(cfg.chunks));
  if (cfg.threads < 1) throw std::invalid_argument("Classifier: threads must be >= 1");
  if (cfg.max_batch < 1) throw std::invalid_argument("Classifier: max_batch must be >= 1");
  if (cfg.tile < 0) throw std::invalid_argument("Classifier: tile must be >= 0");
  if (cfg.rounding.elmo && lp::code_bytes(cfg.format) == 0)
    throw std::invalid_argument("Classifier: elmo_sr rounding needs a packed format of at most 16 bits");
  if (cfg.rounding.sr_bits < 0 || cfg.rounding.sr_bits > 31)
    throw std::invalid_argument("Classifier: sr_bits must be in [0, 31]");
  tile_ = resolved_tile(cfg);
  chunk_rows_ = ceil_div(cfg.V, cfg.chunks);
  impl_ = std::make_unique<Impl>(cfg, tile_, chunk_rows_, alloc);
}

Classifier::~Classifier() = default;

void Classifier::init_normal(double std, uint64_t seed) {
  const int64_t V = cfg_.V, D = cfg_.D;
  auto& m = *impl_;
  const int64_t rows_per_block = std::max<int64_t>(1, 4096 / D);
  const int64_t blocks = ceil_div(V, rows_per_block);
#pragma omp parallel num_threads(m.T)
  {
    std::vector<float> vals(static_cast<size_t>(rows_per_block * D));
    std::vector<uint32_t> w1(vals.size()), w2(vals.size());
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t v0 = blk * rows_per_block, n = std::min(rows_per_block, V - v0);
      const size_t len = size_t(n * D);
      const uint64_t first = uint64_t((cfg_.label_offset + v0) * D);  // the whole head's element index
      lp::random_words(seed, 0x1A17, first, std::span<uint32_t>(w1.data(), len));
      lp::random_words(seed, 0x1A18, first, std::span<uint32_t>(w2.data(), len));
      for (size_t i = 0; i < len; ++i) {
        const double u1 = (double(w1[i]) + 1.0) * 0x1.0p-32;  // (0, 1]
        const double u2 = double(w2[i]) * 0x1.0p-32;
        vals[i] = float(std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
      }
      m.store(v0, std::span<const float>(vals.data(), len));
    }
  }
}

void Classifier::set_weights(std::span<const float> w) {
  if (w.size() != size_t(cfg_.V * cfg_.D)) throw std::invalid_argument("Classifier::set_weights: expected V*D values");
  impl_->store(0, w);
}

std::vector<float> Classifier::weights() const {
  std::vector<float> out(static_cast<size_t>(cfg_.V * cfg_.D));
  impl_->decode(0, cfg_.V, out.data());
  return out;
}

void Classifier::decode_rows(int64_t v0, int64_t n, float* out) const { impl_->decode(v0, n, out); }

StepResult Classifier::step(const float* H, int64_t B, const BatchLabels& labels, float lr, uint64_t step,
                            float* dH, const GradientObserver& observer, const LogitGradientObserver& logit_observer) {
  auto& m = *impl_;
  const int64_t V = cfg_.V, D = cfg_.D, T = m.T, tile = m.tile;
  if (B < 1 || B > cfg_.max_batch)
    throw std::invalid_argument("Classifier::step: B must be in [1, max_batch]");
  m.load_pairs(labels, B);
  std::fill_n(dH, B * D, 0.0f);
  EigenSequential eigen_sequential;
  double loss = 0.0;
  cpu::BlockOrderedSums& sums = *m.tile_sums;
  const bool fused = cfg_.mode == UpdateMode::fused;
  const auto H_mat = CMap(H, B, D);

#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    double* loss_rows = m.loss_rows.data() + int64_t(t) * tile;
    int64_t* predicted = m.predicted_rows.data() + int64_t(t) * tile;

    for (int64_t c0 = 0; c0 < V; c0 += m.chunk_rows) {
      const int64_t c1 = std::min(V, c0 + m.chunk_rows);
      const int64_t n_tiles = ceil_div(c1 - c0, tile);
#pragma omp single
      sums.start_chunk(&loss, 1, dH, B * D);

      // Pass 1: logits, loss, G = σ(Z) − Y in the chunk's buffer, dH += Gᵀ·W (old weights). Each tile's
      // loss and Gᵀ·W enter `loss` and dH in tile order, whatever the thread count.
#pragma omp for schedule(static, 1)
      for (int64_t it = 0; it < n_tiles; ++it) {
        const int64_t v0 = c0 + it * tile, n = std::min(tile, c1 - v0);
        const float* W = m.rows(t, v0, n);
        float* Z = m.logits.data() + (v0 - c0) * B;
        Map(Z, n, B).noalias() = CMap(W, n, D) * H_mat.transpose();
        double tile_loss = 0.0;
        const auto [lo, hi] = m.pairs_in(v0, v0 + n);
        for (int64_t i = lo; i < hi; ++i) {  // −z at the positives, while Z still holds logits
          const int64_t j = (m.pairs[i] >> 32) - v0, b = m.pairs[i] & 0xffffffff;
          tile_loss -= Z[j * B + b];
        }
        std::fill_n(loss_rows, n, 0.0);
        std::fill_n(predicted, n, int64_t(0));
        m.kernels->softplus_and_sigmoid(Z, n, B, B, loss_rows, predicted, m.ones.data());
        for (int64_t j = 0; j < n; ++j) tile_loss += loss_rows[j];
        for (int64_t i = lo; i < hi; ++i) {
          const int64_t j = (m.pairs[i] >> 32) - v0, b = m.pairs[i] & 0xffffffff;
          Z[j * B + b] -= 1.0f;
        }
        if (logit_observer) logit_observer(t, v0, n, B, Z);
        sums.wait_for_slot(it);  // tiles are numbered from 0 in every chunk (start_chunk)
        *sums.loss_slot(it) = tile_loss;
        Map(sums.grad_slot(it), B, D).noalias() = CMap(Z, n, B).transpose() * CMap(W, n, D);
        sums.publish(it);
      }
      // (implicit barrier: the whole chunk's G is ready and every dH contribution used the old weights)
#pragma omp single
      sums.finish_chunk();

      // Pass 2: dW tiles; fused applies each at once, separate stores the chunk's gradient.
#pragma omp for schedule(static, 1)
      for (int64_t it = 0; it < n_tiles; ++it) {
        const int64_t v0 = c0 + it * tile, n = std::min(tile, c1 - v0);
        const float* G = m.logits.data() + (v0 - c0) * B;
        float* dW = fused ? m.grad_tiles.data() + int64_t(t) * tile * D : m.grad_chunk.data() + (v0 - c0) * D;
        Map(dW, n, D).noalias() = CMap(G, n, B) * H_mat;
        if (observer) observer(t, v0, n, dW);
        if (fused) m.apply_update(t, v0, n, dW, lr, step);
      }
      if (!fused) {
#pragma omp for schedule(static, 1)
        for (int64_t it = 0; it < n_tiles; ++it) {
          const int64_t v0 = c0 + it * tile, n = std::min(tile, c1 - v0);
          m.apply_update(t, v0, n, m.grad_chunk.data() + (v0 - c0) * D, lr, step);
        }
      }
    }
  }
  StepResult r;
  r.loss = loss;
  return r;
}

double Classifier::evaluate(const float* H, int64_t B, int k, int32_t* top_ids, float* top_scores,
                            const BatchLabels* labels) {
  auto& m = *impl_;
  const int64_t V = cfg_.V, D = cfg_.D, T = m.T, tile = m.tile;
  if (B < 1) return 0.0;
  if (k < 1 || k > V) throw std::invalid_argument("Classifier::evaluate: k must be in [1, V]");
  if (labels) m.load_pairs(*labels, B);
  else m.n_pairs = 0;
  EigenSequential eigen_sequential;
  Buffer<float> logit_tiles(m.alloc, T * tile * B);
  Buffer<float> best_s(m.alloc, T * B * k);
  Buffer<int32_t> best_i(m.alloc, T * B * k);
  std::fill_n(best_s.data(), T * B * k, -std::numeric_limits<float>::infinity());
  std::fill_n(best_i.data(), T * B * k, std::numeric_limits<int32_t>::max());
  double loss = 0.0;
  cpu::BlockOrderedSums sums(int(T), 1, 0, m.alloc);  // each tile's loss, added in tile order
  sums.start_chunk(&loss, 1, nullptr, 0);
  const auto H_mat = CMap(H, B, D);
  const int64_t n_tiles = ceil_div(V, tile);
  // (score, id) ordering: higher score first, then lower id.
  auto better = [](float s, int32_t i, float s2, int32_t i2) { return s > s2 || (s == s2 && i < i2); };
  // Inserts (s, id) into the sorted top-k list (rs, ri); false, leaving it as it is, when (s, id) ranks
  // below all k.
  auto insert = [k, &better](float* rs, int32_t* ri, float s, int32_t id) {
    if (!better(s, id, rs[k - 1], ri[k - 1])) return false;
    int p = k - 1;
    while (p > 0 && better(s, id, rs[p - 1], ri[p - 1])) {
      rs[p] = rs[p - 1];
      ri[p] = ri[p - 1];
      --p;
    }
    rs[p] = s;
    ri[p] = id;
    return true;
  };

#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    float* Z = logit_tiles.data() + int64_t(t) * tile * B;
    float* bs = best_s.data() + int64_t(t) * B * k;
    int32_t* bi = best_i.data() + int64_t(t) * B * k;
    double* loss_rows = m.loss_rows.data() + int64_t(t) * tile;
    int64_t* predicted = m.predicted_rows.data() + int64_t(t) * tile;
#pragma omp for schedule(static, 1)
    for (int64_t it = 0; it < n_tiles; ++it) {
      const int64_t v0 = it * tile, n = std::min(tile, V - v0);
      const float* W = m.rows(t, v0, n);
      Map(Z, n, B).noalias() = CMap(W, n, D) * H_mat.transpose();
      for (int64_t j = 0; j < n; ++j) {
        const int32_t id = int32_t(v0 + j);
        for (int64_t b = 0; b < B; ++b) insert(bs + b * k, bi + b * k, Z[j * B + b], id);
      }
      double tile_loss = 0.0;
      if (labels) {
        const auto [lo, hi] = m.pairs_in(v0, v0 + n);
        for (int64_t i = lo; i < hi; ++i) tile_loss -= Z[((m.pairs[i] >> 32) - v0) * B + (m.pairs[i] & 0xffffffff)];
        std::fill_n(loss_rows, n, 0.0);
        std::fill_n(predicted, n, int64_t(0));
        m.kernels->softplus_rows(Z, n, B, B, loss_rows, predicted);
        for (int64_t j = 0; j < n; ++j) tile_loss += loss_rows[j];
      }
      sums.wait_for_slot(it);
      *sums.loss_slot(it) = tile_loss;
      sums.publish(it);
    }
  }
  sums.finish_chunk();
  // Merge the threads' lists.
  for (int64_t b = 0; b < B; ++b) {
    float* os = top_scores + b * k;
    int32_t* oi = top_ids + b * k;
    std::copy_n(best_s.data() + b * k, k, os);
    std::copy_n(best_i.data() + b * k, k, oi);
    for (int t = 1; t < T; ++t) {
      const float* rs = best_s.data() + (int64_t(t) * B + b) * k;
      const int32_t* ri = best_i.data() + (int64_t(t) * B + b) * k;
      for (int j = 0; j < k; ++j)
        if (!insert(os, oi, rs[j], ri[j])) break;  // the thread's list is sorted: the rest rank lower
    }
  }
  return loss;
}

Classifier::WeightStats Classifier::weight_stats() const {
  const int64_t V = cfg_.V, D = cfg_.D;
  const int64_t rows_per_block = std::max<int64_t>(1, 16384 / D);
  std::vector<float> buf(static_cast<size_t>(rows_per_block * D));
  int64_t zeros = 0, bad = 0;
  double abs_sum = 0;
  for (int64_t v0 = 0; v0 < V; v0 += rows_per_block) {
    const int64_t n = std::min(rows_per_block, V - v0);
    impl_->decode(v0, n, buf.data());
    for (int64_t i = 0; i < n * D; ++i) {
      const float w = buf[size_t(i)];
      zeros += w == 0.0f;
      if (!std::isfinite(w)) ++bad;
      else abs_sum += std::fabs(double(w));
    }
  }
  WeightStats s;
  s.zero_fraction = double(zeros) / double(V * D);
  s.non_finite = bad;
  s.mean_abs = abs_sum / double(V * D);
  return s;
}

}  // namespace lobench::train
