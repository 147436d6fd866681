// How a sharded step's assembled outputs are judged: against the float64 reference by the accuracy
// rules (loss and per-position loss 1e-6 relative, dA and dE 1e-5 relative L2, counts exact outside
// the reference's near-zero band), and against the same variant run in one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "variants/accuracy.hpp"
#include "variants/step.hpp"
#include "variants/reference.hpp"

namespace lobench::shard {

constexpr double kLossTolerance = 1e-6;
constexpr double kGradTolerance = 1e-5;

struct Errors {
  double loss = 0, per_position_loss = 0, dA = 0, dE = 0;
  int64_t count_mismatches = 0;  // positions whose four counts differ
  bool within_tolerance() const {
    return loss <= kLossTolerance && per_position_loss <= kLossTolerance && dA <= kGradTolerance &&
           dE <= kGradTolerance && count_mismatches == 0;
  }
  std::string describe() const {
    return fmt::format("loss {:.2e}, per-position {:.2e}, dA {:.2e}, dE {:.2e}, count mismatches {}", loss,
                       per_position_loss, dA, dE, count_mismatches);
  }
};

inline Errors errors_against_reference(const StepOutputs& out, const cpu::ReferenceResult& ref, int64_t P, int64_t V,
                                       int64_t D) {
  Errors e;
  e.loss = relative_error(out.loss, ref.loss);
  e.per_position_loss = relative_l2_error(out.per_position_loss.data(), ref.per_position_loss.data(), P);
  e.dA = relative_l2_error(out.dA.data(), ref.dA.data(), P * D);
  e.dE = relative_l2_error(out.dE.data(), ref.dE.data(), V * D);
  e.count_mismatches = count_mismatches(out.counts.data(), ref.counts.data(), ref.near_zero.data(), P);
  return e;
}

// Against another float32 run (the single-process one): its outputs taken as the reference; counts
// compared exactly outside the reference's near-zero band (where the two runs' logits, summed in
// another order, may round to opposite signs).
inline Errors errors_against_run(const StepOutputs& out, const StepOutputs& single, const int64_t* near_zero) {
  const std::vector<double> dA(single.dA.begin(), single.dA.end()), dE(single.dE.begin(), single.dE.end());
  Errors e;
  e.loss = relative_error(out.loss, single.loss);
  e.per_position_loss = relative_l2_error(out.per_position_loss.data(), single.per_position_loss.data(),
                                          int64_t(single.per_position_loss.size()));
  e.dA = relative_l2_error(out.dA.data(), dA.data(), int64_t(dA.size()));
  e.dE = relative_l2_error(out.dE.data(), dE.data(), int64_t(dE.size()));
  e.count_mismatches = count_mismatches(out.counts.data(), single.counts.data(), near_zero,
                                        int64_t(single.per_position_loss.size()));
  return e;
}

// FNV-1a over every output's bytes: equal hashes, bit-identical outputs.
inline uint64_t outputs_hash(const StepOutputs& o) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(&o.loss, sizeof o.loss);
  mix(o.per_position_loss.data(), o.per_position_loss.size() * sizeof(double));
  mix(o.dA.data(), o.dA.size() * sizeof(float));
  mix(o.dE.data(), o.dE.size() * sizeof(float));
  mix(o.counts.data(), o.counts.size() * sizeof(int64_t));
  return h;
}

}  // namespace lobench::shard
