// What every GPU variant shares: skipping where it cannot run, run() through a session, and the
// session itself. A variant supplies its name, its memory model and a CudaStep.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "variants/cuda/bce_rows.cuh"
#include "variants/cuda/device_problem.cuh"
#include "variants/variant.hpp"

namespace lobench::cuda {

class CudaVariant : public Variant {
 public:
  std::string backend() const override { return "cuda"; }
  std::string supports() const override {
    return "reductions mean|sum, weights, padding, duplicates; operands fp32|tf32|bf16; E in fp32 or any format "
           "exact in the operand type (8-bit formats read as codes)";
  }
  std::optional<std::string> skip_reason(const Shape& s, const RunOptions& o) const override {
    std::string why = common_skip_reason(o);
    if (!why.empty()) return why;
    if (s.L > kMaxTargetsPerPosition) return "L > " + std::to_string(kMaxTargetsPerPosition) + " not supported";
    return variant_skip_reason(s, o);
  }
  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    run_on_device(in, out, ctx.options, make_step(in, ctx.options));
  }
  std::unique_ptr<DeviceSession> open_session(const StepInputs& in, const RunOptions& o) const override {
    return std::make_unique<CudaSession>(in, o, make_step(in, o));
  }

 protected:
  virtual std::optional<std::string> variant_skip_reason(const Shape&, const RunOptions&) const { return std::nullopt; }
  virtual std::unique_ptr<CudaStep> make_step(const StepInputs& in, const RunOptions& o) const = 0;
};

// The element-wise kernel's arguments for a [P, cols] logit block starting at vocabulary id v0 (row
// stride cols), accumulating into the problem's outputs (overwriting them for the first block).
inline BceRowsArgs bce_rows_args(const DeviceProblem& pb, const int32_t* tgt, const float* logits, int64_t cols,
                                 int64_t v0) {
  BceRowsArgs a;
  a.logits = logits;
  a.ld = cols;
  a.P = pb.P;
  a.cols = cols;
  a.v0 = v0;
  a.tgt = tgt;
  a.L = pb.L;
  a.weights = pb.weights.data();
  a.scale = pb.grad_scale;
  a.per_position_loss = pb.per_position_loss.data();
  a.counts = pb.counts.data();
  a.first = v0 == 0;
  return a;
}

}  // namespace lobench::cuda
