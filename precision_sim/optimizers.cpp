#include "precision_sim/optimizers.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lobench::precision {

namespace {

// Elementwise work goes through a float32 chunk buffer so the rounding uses the vector kernels;
// chunks are independent, so they are shared among threads.
constexpr size_t kChunk = size_t{1} << 14;

template <typename Fn>
void for_chunks(size_t n, int threads, Fn&& fn) {
  if (threads <= 0) threads = omp_get_max_threads();
  const size_t chunks = (n + kChunk - 1) / kChunk;
  if (threads <= 1 || chunks <= 1) {
    std::vector<float> buf(std::min(n, kChunk));
    for (size_t c = 0; c < chunks; ++c) fn(c * kChunk, std::min(kChunk, n - c * kChunk), buf.data());
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> buf(kChunk);
#pragma omp for schedule(static)
    for (size_t c = 0; c < chunks; ++c) fn(c * kChunk, std::min(kChunk, n - c * kChunk), buf.data());
  }
}

void check(size_t a, size_t b, const char* what) {
  if (a != b)
    throw std::invalid_argument(std::string(what) + ": sizes differ (" + std::to_string(a) + " vs " +
                                std::to_string(b) + ")");
}

RoundingOptions at(const RoundingOptions& opt, size_t begin) {
  RoundingOptions o = opt;
  o.index_offset += begin;
  return o;
}

template <typename Code>
void sgd_packed(std::span<Code> w, std::span<const float> grad, float lr, const Quantizer& q,
                const RoundingOptions& opt, int threads) {
  check(w.size(), grad.size(), "sgd_step");
  for_chunks(w.size(), threads, [&](size_t begin, size_t len, float* buf) {
    std::span<float> u(buf, len);
    q.decode(std::span<const Code>(w.data() + begin, len), u);
    for (size_t i = 0; i < len; ++i) u[i] = std::fma(-lr, grad[begin + i], u[i]);
    q.encode(u, w.subspan(begin, len), at(opt, begin));
  });
}

}  // namespace

void sgd_step(std::span<float> w, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads) {
  check(w.size(), grad.size(), "sgd_step");
  for_chunks(w.size(), threads, [&](size_t begin, size_t len, float* buf) {
    for (size_t i = 0; i < len; ++i) buf[i] = std::fma(-lr, grad[begin + i], w[begin + i]);
    q.round(std::span<const float>(buf, len), w.subspan(begin, len), at(opt, begin));
  });
}

void sgd_step(std::span<uint8_t> w, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads) {
  sgd_packed(w, grad, lr, q, opt, threads);
}

void sgd_step(std::span<uint16_t> w, std::span<const float> grad, float lr, const Quantizer& q,
              const RoundingOptions& opt, int threads) {
  sgd_packed(w, grad, lr, q, opt, threads);
}

void adam_kahan_step(std::span<float> params, std::span<const float> grad, KahanAdamState& state,
                     const AdamOptions& opt, const Quantizer& q, int threads) {
  const size_t n = params.size();
  check(n, grad.size(), "adam_kahan_step (grad)");
  check(n, state.m.size(), "adam_kahan_step (state)");
  const int64_t t = state.step + 1;
  // Debiased betas (optimi): beta * (1 - beta^(t-1)) / (1 - beta^t); 0 at t = 1, so m = g, v = g^2.
  auto debias = [t](double beta) {
    return static_cast<float>(beta * (1.0 - std::pow(beta, static_cast<double>(t - 1))) /
                              (1.0 - std::pow(beta, static_cast<double>(t))));
  };
  const float b1 = debias(opt.beta1);
  const float b2 = debias(opt.beta2);
  const RoundingOptions rne{};
  float* m = state.m.data();
  float* v = state.v.data();
  float* c = state.comp.data();
  for_chunks(n, threads, [&](size_t begin, size_t len, float* buf) {
    auto round_into = [&](float* dst) { q.round(std::span<const float>(buf, len), std::span<float>(dst, len), rne); };
    float* p = params.data() + begin;
    const float* gr = grad.data() + begin;
    float* mm = m + begin;
    float* vv = v + begin;
    float* cc = c + begin;
    // The L2-coupled gradient is recomputed where needed rather than stored (one buffer).
    auto g_at = [&](size_t i) { return opt.weight_decay != 0.0f ? gr[i] + opt.weight_decay * p[i] : gr[i]; };
    for (size_t i = 0; i < len; ++i) buf[i] = mm[i] + (1.0f - b1) * (g_at(i) - mm[i]);
    round_into(mm);
    for (size_t i = 0; i < len; ++i) {
      const float g = g_at(i);
      buf[i] = b2 * vv[i] + (1.0f - b2) * (g * g);
    }
    round_into(vv);
    for (size_t i = 0; i < len; ++i) buf[i] = cc[i] - opt.lr * mm[i] / (std::sqrt(vv[i]) + opt.eps);
    round_into(cc);  // c now holds the pending update
    // p_new = round(p + c); then c = round(c + (p_old - p_new)). Keep p_old in the output slots of c's
    // computation: compute p_new into buf, form the new compensation before overwriting p.
    for (size_t i = 0; i < len; ++i) buf[i] = p[i] + cc[i];
    q.round(std::span<const float>(buf, len), std::span<float>(buf, len), rne);  // buf = p_new
    for (size_t i = 0; i < len; ++i) {
      const float p_new = buf[i];
      buf[i] = cc[i] + (p[i] - p_new);
      p[i] = p_new;
    }
    round_into(cc);
  });
  state.step = t;
}

}  // namespace lobench::precision
