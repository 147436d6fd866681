#include "harness/train/encoder.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/stochastic.hpp"
#include "variants/cpu/bf16_dot.hpp"

namespace lobench::train {

namespace lp = lobench::precision;

std::string to_string(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }
Activation parse_activation(const std::string& s) {
  if (s == "relu") return Activation::relu;
  if (s == "gelu") return Activation::gelu;
  throw std::invalid_argument("unknown activation '" + s + "' (valid: relu, gelu)");
}
std::string to_string(EncoderPrecision p) { return p == EncoderPrecision::fp32 ? "fp32" : "bf16"; }
EncoderPrecision parse_encoder_precision(const std::string& s) {
  if (s == "fp32" || s == "float32") return EncoderPrecision::fp32;
  if (s == "bf16" || s == "bfloat16") return EncoderPrecision::bf16;
  throw std::invalid_argument("unknown encoder precision '" + s + "' (valid: fp32, bf16)");
}

namespace {

constexpr uint64_t kDropoutStream = uint64_t(1) << 40;  // dropout words: stream = kDropoutStream + step
constexpr int kBlock = 1024;                             // elements per Adam block (stack buffers)


// GELU, tanh form (PyTorch approximate='tanh'), and its derivative.
inline float gelu(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}
inline float gelu_grad(float x) {
  const float k = 0.7978845608028654f;
  const float t = std::tanh(k * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * x * x);
}

// Debiased beta (optimi): beta (1 - beta^(t-1)) / (1 - beta^t). Written exactly as precision_sim's.
float debias(double beta, int64_t t) {
  return static_cast<float>(beta * (1.0 - std::pow(beta, static_cast<double>(t - 1))) /
                            (1.0 - std::pow(beta, static_cast<double>(t))));
}

}  // namespace

struct Encoder::Impl {
  Impl(const EncoderConfig& c, CountingAllocator& a) : cfg(c), bf16(lp::formats::bfloat16()) {
    const int64_t n = (c.F + 1) * c.D, BD = c.max_batch * c.D;
    if (c.precision == EncoderPrecision::fp32) {
      p32 = Buffer<float>(a, n);
      m32 = Buffer<float>(a, n);
      v32 = Buffer<float>(a, n);
    } else {
      p16 = Buffer<uint16_t>(a, n);
      m16 = Buffer<uint16_t>(a, n);
      v16 = Buffer<uint16_t>(a, n);
      c16 = Buffer<uint16_t>(a, n);
    }
    grad = Buffer<float>(a, n);
    pre = Buffer<float>(a, BD);
    H = Buffer<float>(a, BD);
    dpre = Buffer<float>(a, BD);
  }
  EncoderConfig cfg;
  lp::Quantizer bf16;
  Buffer<float> p32, m32, v32;
  Buffer<uint16_t> p16, m16, v16, c16;
  Buffer<float> grad, pre, H, dpre;
  int64_t t = 0;  // completed Adam steps

  bool is_bf16() const { return cfg.precision == EncoderPrecision::bf16; }
  float param(int64_t i) const { return is_bf16() ? cpu::bf16_value(p16[i]) : p32[i]; }
  uint32_t keep_threshold() const {
    // keep an element iff its word >= p * 2^32 (probability 1 - p up to 2^-32)
    return uint32_t(std::min(4294967295.0, std::floor(double(cfg.dropout) * 4294967296.0)));
  }
  // The dropout multipliers of row b (0 or 1/(1-p)) into out [D].
  void dropout_row(int64_t b, uint64_t step, float* out) const {
    const int64_t D = cfg.D;
    if (cfg.dropout <= 0.0f) {
      std::fill_n(out, D, 1.0f);
      return;
    }
    const float scale = 1.0f / (1.0f - cfg.dropout);
    const uint32_t thr = keep_threshold();
    uint32_t words[kBlock];
    for (int64_t d0 = 0; d0 < D; d0 += kBlock) {
      const int64_t m = std::min<int64_t>(kBlock, D - d0);
      lp::random_words(cfg.seed, kDropoutStream + step, uint64_t(b * D + d0), std::span<uint32_t>(words, size_t(m)));
      for (int64_t i = 0; i < m; ++i) out[d0 + i] = words[i] >= thr ? scale : 0.0f;
    }
  }
};

int64_t Encoder::predicted_bytes(const EncoderConfig& c) {
  const int64_t n = (c.F + 1) * c.D, BD = c.max_batch * c.D;
  const int64_t state = c.precision == EncoderPrecision::fp32 ? 3 * 4 * n : 4 * 2 * n;
  return state + 4 * n /* gradient */ + 3 * 4 * BD /* pre-activation, H, dpre */;
}

Encoder::Encoder(const EncoderConfig& cfg, CountingAllocator& alloc) : cfg_(cfg) {
  if (cfg.F <= 0 || cfg.D <= 0) throw std::invalid_argument("Encoder: F and D must be positive");
  if (cfg.max_batch < 1) throw std::invalid_argument("Encoder: max_batch must be >= 1");
  if (!(cfg.dropout >= 0.0f && cfg.dropout < 1.0f))
    throw std::invalid_argument("Encoder: dropout must be in [0, 1), got " + std::to_string(cfg.dropout));
  if (cfg.threads < 1) throw std::invalid_argument("Encoder: threads must be >= 1");
  impl_ = std::make_unique<Impl>(cfg, alloc);
  const int64_t n = num_parameters();
  std::fill_n(impl_->grad.data(), n, 0.0f);
  if (impl_->is_bf16()) {
    std::fill_n(impl_->p16.data(), n, uint16_t(0));
    std::fill_n(impl_->m16.data(), n, uint16_t(0));
    std::fill_n(impl_->v16.data(), n, uint16_t(0));
    std::fill_n(impl_->c16.data(), n, uint16_t(0));
  } else {
    std::fill_n(impl_->p32.data(), n, 0.0f);
    std::fill_n(impl_->m32.data(), n, 0.0f);
    std::fill_n(impl_->v32.data(), n, 0.0f);
  }
}

Encoder::~Encoder() = default;

void Encoder::init(uint64_t seed, double fan_in) {
  const int64_t nW = cfg_.F * cfg_.D;
  const double bound = 1.0 / std::sqrt(fan_in > 0 ? fan_in : double(cfg_.F));
  std::vector<float> p(size_t(num_parameters()), 0.0f);
  std::vector<uint32_t> w(static_cast<size_t>(nW));
  lp::random_words(seed, 0xE1C0, 0, std::span<uint32_t>(w.data(), w.size()));
  for (int64_t i = 0; i < nW; ++i) p[size_t(i)] = float((2.0 * lp::word_to_unit_float(w[size_t(i)]) - 1.0) * bound);
  set_parameters(p);
}

std::vector<float> Encoder::parameters() const {
  std::vector<float> out(static_cast<size_t>(num_parameters()));
  for (int64_t i = 0; i < num_parameters(); ++i) out[size_t(i)] = impl_->param(i);
  return out;
}

void Encoder::set_parameters(std::span<const float> p) {
  const size_t n = size_t(num_parameters());
  if (p.size() != n) throw std::invalid_argument("Encoder::set_parameters: expected (F+1)*D values");
  if (impl_->is_bf16()) impl_->bf16.encode(p, std::span<uint16_t>(impl_->p16.data(), n));
  else std::copy(p.begin(), p.end(), impl_->p32.data());
}

std::span<const float> Encoder::gradient() const {
  return {impl_->grad.data(), size_t(num_parameters())};
}

const float* Encoder::forward(const SparseRows& x, bool training, uint64_t step) {
  auto& m = *impl_;
  const int64_t B = x.rows(), D = cfg_.D, F = cfg_.F;
  if (B < 1 || B > cfg_.max_batch) throw std::invalid_argument("Encoder::forward: batch outside [1, max_batch]");
  const int64_t bias = F * D;
  for (int64_t j = x.offsets[0]; j < x.offsets[B]; ++j)  // (no exceptions inside the parallel region)
    if (x.indices[size_t(j)] < 0 || x.indices[size_t(j)] >= F)
      throw std::invalid_argument("Encoder: feature index " + std::to_string(x.indices[size_t(j)]) +
                                  " outside [0, " + std::to_string(F) + ")");
#pragma omp parallel for schedule(static) num_threads(cfg_.threads)
  for (int64_t b = 0; b < B; ++b) {
    float* a = m.pre.data() + b * D;
    for (int64_t d = 0; d < D; ++d) a[d] = m.param(bias + d);
    for (int64_t j = x.offsets[b]; j < x.offsets[b + 1]; ++j) {
      const int64_t f = x.indices[size_t(j)];
      const float v = x.values[size_t(j)];
      if (m.is_bf16()) {
        const uint16_t* row = m.p16.data() + f * D;
        for (int64_t d = 0; d < D; ++d) a[d] += v * cpu::bf16_value(row[d]);
      } else {
        const float* row = m.p32.data() + f * D;
        for (int64_t d = 0; d < D; ++d) a[d] += v * row[d];
      }
    }
    float* h = m.H.data() + b * D;
    if (cfg_.activation == Activation::relu)
      for (int64_t d = 0; d < D; ++d) h[d] = a[d] > 0.0f ? a[d] : 0.0f;
    else
      for (int64_t d = 0; d < D; ++d) h[d] = gelu(a[d]);
    if (training && cfg_.dropout > 0.0f) {
      float* mask = m.dpre.data() + b * D;  // scratch until backward
      m.dropout_row(b, step, mask);
      for (int64_t d = 0; d < D; ++d) h[d] *= mask[d];
    }
    if (m.is_bf16())  // ELMO's embedding is bf16
      m.bf16.round(std::span<const float>(h, size_t(D)), std::span<float>(h, size_t(D)));
  }
  return m.H.data();
}

void Encoder::backward(const SparseRows& x, const float* dH, uint64_t step) {
  auto& m = *impl_;
  const int64_t B = x.rows(), D = cfg_.D, F = cfg_.F;
  // dpre = dH ⊙ dropout ⊙ act'(pre)   (dH rounded to bf16 first in bf16 mode, as ELMO's grad_input)
#pragma omp parallel for schedule(static) num_threads(cfg_.threads)
  for (int64_t b = 0; b < B; ++b) {
    float* g = m.dpre.data() + b * D;
    const float* a = m.pre.data() + b * D;
    m.dropout_row(b, step, g);  // g holds the mask (all ones without dropout); multiplied in place below
    float* tmp = g;
    if (m.is_bf16()) {
      float row[kBlock];
      for (int64_t d0 = 0; d0 < D; d0 += kBlock) {
        const int64_t n = std::min<int64_t>(kBlock, D - d0);
        m.bf16.round(std::span<const float>(dH + b * D + d0, size_t(n)), std::span<float>(row, size_t(n)));
        for (int64_t i = 0; i < n; ++i) tmp[d0 + i] *= row[i];
      }
    } else {
      for (int64_t d = 0; d < D; ++d) tmp[d] *= dH[b * D + d];
    }
    if (cfg_.activation == Activation::relu)
      for (int64_t d = 0; d < D; ++d) tmp[d] = a[d] > 0.0f ? tmp[d] : 0.0f;
    else
      for (int64_t d = 0; d < D; ++d) tmp[d] *= gelu_grad(a[d]);
  }
  // grad_W[f] += x_f · dpre[b]; grad_b += Σ_b dpre[b]. Threads split the columns, so every element has
  // one writer and the summation order is fixed.
  float* gW = m.grad.data();
  float* gb = m.grad.data() + F * D;
  const int T = cfg_.threads;
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t d0 = D * t / nt, d1 = D * (t + 1) / nt;
    for (int64_t b = 0; b < B; ++b) {
      const float* g = m.dpre.data() + b * D;
      for (int64_t j = x.offsets[b]; j < x.offsets[b + 1]; ++j) {
        const int64_t f = x.indices[size_t(j)];
        const float v = x.values[size_t(j)];
        float* row = gW + f * D;
        for (int64_t d = d0; d < d1; ++d) row[d] += v * g[d];
      }
      for (int64_t d = d0; d < d1; ++d) gb[d] += g[d];
    }
  }
}

void Encoder::adam_step(float lr) {
  auto& m = *impl_;
  const int64_t n = num_parameters(), nW = cfg_.F * cfg_.D;
  const int64_t t = m.t + 1;
  const float b1 = debias(cfg_.adam.beta1, t), b2 = debias(cfg_.adam.beta2, t);
  const float eps = cfg_.adam.eps;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) num_threads(cfg_.threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t i0 = blk * kBlock, len = std::min<int64_t>(kBlock, n - i0);
    float* gr = m.grad.data() + i0;
    // Weight decay (L2) applies to W, not to the bias.
    float wdv[kBlock];
    for (int64_t i = 0; i < len; ++i) wdv[i] = i0 + i < nW ? cfg_.adam.weight_decay : 0.0f;
    if (!m.is_bf16()) {
      float* p = m.p32.data() + i0;
      float* mm = m.m32.data() + i0;
      float* vv = m.v32.data() + i0;
      for (int64_t i = 0; i < len; ++i) {
        const float g = wdv[i] != 0.0f ? gr[i] + wdv[i] * p[i] : gr[i];
        mm[i] = mm[i] + (1.0f - b1) * (g - mm[i]);
        vv[i] = b2 * vv[i] + (1.0f - b2) * (g * g);
        p[i] = p[i] - lr * mm[i] / (std::sqrt(vv[i]) + eps);
      }
    } else {
      // Exactly precision_sim::adam_kahan_step's arithmetic, on packed bf16 (round-to-nearest-even), one
      // element at a time in registers: decoding is cpu::bf16_value's shift and rounding cpu::bf16_nearest_even's
      // three integer operations, the same values as precision_sim's bfloat16 quantizer (tested bit for bit:
      // TrainEncoder.Bf16AdamEqualsPrecisionSimKahanAdam, and the rounding itself on every special value
      // in Bf16RoundingEqualsPrecisionSim). Through the quantizer's generic calls (four decodes, five
      // roundings and four encodes of whole blocks) this update cost about twice fp32's Adam on Bibtex.
      uint16_t *p16 = m.p16.data() + i0, *m16 = m.m16.data() + i0, *v16 = m.v16.data() + i0, *c16 = m.c16.data() + i0;
#pragma omp simd
      for (int64_t i = 0; i < len; ++i) {
        using cpu::bf16_nearest_even, cpu::bf16_value;
        const float p = bf16_value(p16[i]), m_old = bf16_value(m16[i]), v_old = bf16_value(v16[i]), c = bf16_value(c16[i]);
        const float g = wdv[i] != 0.0f ? gr[i] + wdv[i] * p : gr[i];
        const uint16_t m_new = bf16_nearest_even(m_old + (1.0f - b1) * (g - m_old));
        const uint16_t v_new = bf16_nearest_even(b2 * v_old + (1.0f - b2) * (g * g));
        const float pending = bf16_value(bf16_nearest_even(c - lr * bf16_value(m_new) / (std::sqrt(bf16_value(v_new)) + eps)));
        const uint16_t p_new = bf16_nearest_even(p + pending);
        const uint16_t c_new = bf16_nearest_even(pending + (p - bf16_value(p_new)));
        p16[i] = p_new, m16[i] = m_new, v16[i] = v_new, c16[i] = c_new;
      }
    }
    std::fill_n(gr, len, 0.0f);
  }
  m.t = t;
}

}  // namespace lobench::train
