#include "harness/train/classifier.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "harness/train/classifier_impl.hpp"
#include "variants/cpu/sgemm.hpp"

namespace lobench::train {

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
  // The scan's workspace: the threads' logit tiles [B, ld] (the logits term), their per-row counts
  // and the in-order sums' slots (workspace).
  const cpu::TileBlocks blocks = Impl::scan_blocks(c, tile, B);
  m.logits = T * B * blocks.ld * 4;
  m.workspace = (lp::code_bytes(c.format) != 0 ? T * tile * D * 4 : 0) + StepProducts::bytes(c.operand, D, blocks) +
                cpu::TileScanWorkspace::bytes(blocks, D) - m.logits + B * (8 + 4 * 8 + 4) /* row loss, counts, ones */ +
                T * tile * (8 + 8) /* evaluate's per-tile rows */ + std::max<int64_t>(c.max_positives, 1) * 8;
  return m;
}

int64_t Classifier::predicted_eval_bytes(const ClassifierConfig& c, int64_t eval_batch, int k) {
  const int64_t tile = resolved_tile(c);
  return int64_t(c.threads) * (tile * eval_batch * 4 + eval_batch * k * (4 + 4)) +
         cpu::BlockOrderedSums::bytes(c.threads, 1, 0) + ScoreProducts::bytes(c.operand, eval_batch, c.D, c.threads, tile);
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
  if (cfg.rounding.elmo && !cfg.grad_format.same_encoding(lp::formats::float32()))
    throw std::invalid_argument("Classifier: elmo_sr rounds the packed weights; a logit-gradient format takes a "
                                "precision_sim rounding");
  if (cfg.operand == Operand::tf32)
    throw std::invalid_argument(
        "Classifier: operand tf32 is a GPU tensor-core format; the CPU head computes fp32, bf16, e4m3 or e5m2");
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

namespace {

// (score, id) ordering of the top-k lists: higher score first, then lower id.
bool ranks_above(float s, int32_t i, float s2, int32_t i2) { return s > s2 || (s == s2 && i < i2); }

// Inserts (s, id) into the sorted top-k list (rs, ri); false, leaving it as it is, when (s, id) ranks
// below all k.
bool insert_top_k(float* rs, int32_t* ri, int k, float s, int32_t id) {
  if (!ranks_above(s, id, rs[k - 1], ri[k - 1])) return false;
  int p = k - 1;
  while (p > 0 && ranks_above(s, id, rs[p - 1], ri[p - 1])) {
    rs[p] = rs[p - 1];
    ri[p] = ri[p - 1];
    --p;
  }
  rs[p] = s;
  ri[p] = id;
  return true;
}

// The threads' top-k lists of each row ([T, B, k] scores and ids) merged into out_scores / out_ids [B, k].
void merge_thread_top_k(const float* best_s, const int32_t* best_i, int T, int64_t B, int k, float* out_scores,
                        int32_t* out_ids) {
  for (int64_t b = 0; b < B; ++b) {
    float* os = out_scores + b * k;
    int32_t* oi = out_ids + b * k;
    std::copy_n(best_s + b * k, k, os);
    std::copy_n(best_i + b * k, k, oi);
    for (int t = 1; t < T; ++t) {
      const float* rs = best_s + (int64_t(t) * B + b) * k;
      const int32_t* ri = best_i + (int64_t(t) * B + b) * k;
      for (int j = 0; j < k; ++j)
        if (!insert_top_k(os, oi, k, rs[j], ri[j])) break;  // the thread's list is sorted: the rest rank lower
    }
  }
}

}  // namespace

double Classifier::evaluate(const float* H, int64_t B, int k, int32_t* top_ids, float* top_scores,
                            const BatchLabels* labels) {
  auto& m = *impl_;
  const int64_t V = cfg_.V, D = cfg_.D, T = m.T, tile = m.tile;
  if (B < 1) return 0.0;
  if (k < 1 || k > V) throw std::invalid_argument("Classifier::evaluate: k must be in [1, V]");
  if (labels) m.load_pairs(*labels, B);
  else m.n_pairs = 0;
  cpu::ProductsOnCallingThread products_on_calling_thread;
  Buffer<float> logit_tiles(m.alloc, T * tile * B);
  Buffer<float> best_s(m.alloc, T * B * k);
  Buffer<int32_t> best_i(m.alloc, T * B * k);
  std::fill_n(best_s.data(), T * B * k, -std::numeric_limits<float>::infinity());
  std::fill_n(best_i.data(), T * B * k, std::numeric_limits<int32_t>::max());
  double loss = 0.0;
  cpu::BlockOrderedSums sums(int(T), 1, 0, m.alloc);  // each tile's loss, added in tile order
  ScoreProducts products(cfg_.operand, H, B, D, int(T), tile, is_fp8(cfg_.operand) ? m.max_abs_weights() : 0.0f,
                         m.alloc);
  sums.start_chunk(&loss, 1, nullptr, 0);
  const int64_t n_tiles = ceil_div(V, tile);
  auto insert = [k](float* rs, int32_t* ri, float s, int32_t id) { return insert_top_k(rs, ri, k, s, id); };

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
      products.scores(t, W, n, Z);  // Z = W_t·Hᵀ
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
  merge_thread_top_k(best_s.data(), best_i.data(), int(T), B, k, top_scores, top_ids);
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
