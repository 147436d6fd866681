#include "harness/seqrec/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::seqrec {

namespace lp = lobench::precision;

std::string to_string(OptimizerPrecision p) { return p == OptimizerPrecision::fp32 ? "fp32" : "bf16_kahan"; }

OptimizerPrecision parse_optimizer_precision(const std::string& s) {
  if (s == "fp32" || s == "float32") return OptimizerPrecision::fp32;
  if (s == "bf16" || s == "bf16_kahan" || s == "bfloat16") return OptimizerPrecision::bf16_kahan;
  throw std::invalid_argument("unknown optimizer precision '" + s + "' (valid: fp32, bf16)");
}

namespace {
constexpr int64_t kBlock = 1024;
float debias(double beta, int64_t t) {
  return float(beta * (1.0 - std::pow(beta, double(t - 1))) / (1.0 - std::pow(beta, double(t))));
}
const lp::Quantizer& bf16() {
  static const lp::Quantizer q(lp::formats::bfloat16());
  return q;
}
}  // namespace

AdamW::AdamW(const AdamWConfig& cfg, ParameterSet& params, CountingAllocator& alloc) : cfg_(cfg) {
  if (!(cfg.lr > 0.0f) || !(cfg.beta1 >= 0 && cfg.beta1 < 1) || !(cfg.beta2 >= 0 && cfg.beta2 < 1) || cfg.warmup_steps < 0 ||
      !(cfg.eps >= 0.0f && std::isfinite(cfg.eps)))
    throw std::invalid_argument("AdamW: lr must be > 0, betas in [0, 1), eps finite and >= 0, warmup >= 0");
  const int64_t n = params.size();
  if (cfg.precision == OptimizerPrecision::fp32) {
    m32_ = Buffer<float>(alloc, n);
    v32_ = Buffer<float>(alloc, n);
    std::fill_n(m32_.data(), n, 0.0f);
    std::fill_n(v32_.data(), n, 0.0f);
  } else {
    m16_ = Buffer<uint16_t>(alloc, n);
    v16_ = Buffer<uint16_t>(alloc, n);
    c16_ = Buffer<uint16_t>(alloc, n);
    std::fill_n(m16_.data(), n, uint16_t(0));
    std::fill_n(v16_.data(), n, uint16_t(0));
    std::fill_n(c16_.data(), n, uint16_t(0));
  }
  decay_ = Buffer<uint8_t>(alloc, n);
  for (const ParamInfo& t : params.tensors())
    std::fill_n(decay_.data() + t.ref.offset, t.ref.size, uint8_t(t.decay ? 1 : 0));
}

float AdamW::lr_at(int64_t t) const {
  if (cfg_.warmup_steps <= 0 || t >= cfg_.warmup_steps) return cfg_.lr;
  return cfg_.lr * float(std::max<int64_t>(t, 1)) / float(cfg_.warmup_steps);
}

void AdamW::prepare(ParameterSet& params) const {
  if (cfg_.precision != OptimizerPrecision::bf16_kahan) return;
  const std::span<float> p(params.values(), size_t(params.size()));
  bf16().round(p, p);
}

void AdamW::step(ParameterSet& params, int threads) {
  const int64_t n = params.size(), t = t_ + 1;
  const float b1 = debias(cfg_.beta1, t), b2 = debias(cfg_.beta2, t), eps = cfg_.eps, wd = cfg_.weight_decay;
  const float lr = lr_at(t);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const bool fp32 = cfg_.precision == OptimizerPrecision::fp32;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t i0 = blk * kBlock, len = std::min(kBlock, n - i0);
    float* p = params.values() + i0;
    const float* g = params.grads() + i0;
    const uint8_t* dec = decay_.data() + i0;
    if (fp32) {
      float* m = m32_.data() + i0;
      float* v = v32_.data() + i0;
      for (int64_t i = 0; i < len; ++i) {
        m[i] = m[i] + (1.0f - b1) * (g[i] - m[i]);
        v[i] = b2 * v[i] + (1.0f - b2) * (g[i] * g[i]);
        const float u = m[i] / (std::sqrt(v[i]) + eps) + (dec[i] ? wd * p[i] : 0.0f);
        p[i] = p[i] - lr * u;
      }
      continue;
    }
    const lp::Quantizer& q = bf16();
    float m[kBlock], v[kBlock], c[kBlock], buf[kBlock];
    const auto span = [&](float* a) { return std::span<float>(a, size_t(len)); };
    q.decode(std::span<const uint16_t>(m16_.data() + i0, size_t(len)), span(m));
    q.decode(std::span<const uint16_t>(v16_.data() + i0, size_t(len)), span(v));
    q.decode(std::span<const uint16_t>(c16_.data() + i0, size_t(len)), span(c));
    for (int64_t i = 0; i < len; ++i) buf[i] = m[i] + (1.0f - b1) * (g[i] - m[i]);
    q.round(span(buf), span(m));
    for (int64_t i = 0; i < len; ++i) buf[i] = b2 * v[i] + (1.0f - b2) * (g[i] * g[i]);
    q.round(span(buf), span(v));
    for (int64_t i = 0; i < len; ++i)
      buf[i] = c[i] - lr * (m[i] / (std::sqrt(v[i]) + eps) + (dec[i] ? wd * p[i] : 0.0f));
    q.round(span(buf), span(c));
    for (int64_t i = 0; i < len; ++i) buf[i] = p[i] + c[i];
    q.round(span(buf), span(buf));  // p'
    for (int64_t i = 0; i < len; ++i) {
      const float p_new = buf[i];
      buf[i] = c[i] + (p[i] - p_new);
      p[i] = p_new;
    }
    q.round(span(buf), span(c));
    q.encode(span(m), std::span<uint16_t>(m16_.data() + i0, size_t(len)));
    q.encode(span(v), std::span<uint16_t>(v16_.data() + i0, size_t(len)));
    q.encode(span(c), std::span<uint16_t>(c16_.data() + i0, size_t(len)));
  }
  t_ = t;
}

AdamWState AdamW::state() const {
  AdamWState s;
  s.precision = cfg_.precision;
  s.steps = t_;
  const auto copy = [](const auto& b) { return std::vector(b.data(), b.data() + b.size()); };
  if (cfg_.precision == OptimizerPrecision::fp32) {
    s.m = copy(m32_);
    s.v = copy(v32_);
  } else {
    s.m16 = copy(m16_);
    s.v16 = copy(v16_);
    s.c16 = copy(c16_);
  }
  return s;
}

void AdamW::restore(const AdamWState& s) {
  if (s.precision != cfg_.precision)
    throw std::invalid_argument("AdamW state: precision " + to_string(s.precision) + ", this optimizer's is " +
                                to_string(cfg_.precision));
  if (s.steps < 0) throw std::invalid_argument("AdamW state: negative step count");
  // Every length checked before anything is copied: a refused state leaves this optimizer as it was.
  const auto check = [](const auto& from, const auto& to, const char* name) {
    if (int64_t(from.size()) != to.size())
      throw std::invalid_argument(std::string("AdamW state: ") + name + " holds " + std::to_string(from.size()) +
                                  " values, the parameters are " + std::to_string(to.size()));
  };
  const auto put = [](const auto& from, auto& to) { std::copy(from.begin(), from.end(), to.data()); };
  if (cfg_.precision == OptimizerPrecision::fp32) {
    check(s.m, m32_, "m");
    check(s.v, v32_, "v");
    put(s.m, m32_);
    put(s.v, v32_);
  } else {
    check(s.m16, m16_, "m");
    check(s.v16, v16_, "v");
    check(s.c16, c16_, "the compensation");
    put(s.m16, m16_);
    put(s.v16, v16_);
    put(s.c16, c16_);
  }
  t_ = s.steps;
}

}  // namespace lobench::seqrec
