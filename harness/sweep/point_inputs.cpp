#include "harness/sweep/point_inputs.hpp"

#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench::sweep {

int64_t input_bytes(const Shape& s) {
  const int64_t P = s.P();
  return (P * s.D + s.V * s.D + P * s.L + (s.weighted ? P : 0)) * 4;
}
int64_t io_bytes(const Shape& s) { return input_bytes(s) + StepOutputs::bytes(s.P(), s.V, s.D); }
int64_t reference_bytes(const Shape& s) {
  return cpu::ReferenceResult::bytes(s.P(), s.V, s.D) + cpu::reference_workspace_bytes(s.P(), s.V, s.D);
}

// The kernel reference's inputs: E as the variant reads it (decoded from its storage format), and A
// and E rounded to the operand type where the variant rounds them before any product. bf16 operands
// are rounded to nearest even on load (the GPU variants); fp32 and tf32 read the float32 inputs as they
// are (tf32 rounds inside the products, and cuBLAS may truncate instead: no exact input copy exists).
static std::string kernel_input_key(const StepPoint& pt) {
  const std::string e = pt.options.e_is_float32() ? std::string("fp32") : pt.options.e_format + "/" + pt.e_rounding;
  return pt.options.operand == "bf16" ? e + " operand bf16" : e;
}

void PointInputs::prepare(const StepPoint& pt, const SyntheticSpec& synthetic, bool want_reference) {
  const std::string key = pt.data_key();
  if (!data_ || data_key_ != key) {
    ref_.reset();
    stored_.reset();
    ref_kernel_.reset();
    stored_key_.clear();
    kernel_key_.clear();
    data_.reset();  // freed before the next shape's inputs are made
    SyntheticSpec syn = synthetic;
    syn.seed = pt.seed;
    data_ = std::make_unique<StepData>(make_synthetic(pt.shape, syn));
    data_key_ = key;
  }
  if (want_reference && !ref_) {
    ref_ = std::make_unique<cpu::ReferenceResult>();
    cpu::reference_step(data_->view(), *ref_, ref_alloc_, pt.options.threads);
  }
  if (pt.options.e_is_float32()) {
    stored_.reset();
    stored_key_.clear();
  } else {
    const std::string skey = pt.options.e_format + "/" + pt.e_rounding;
    if (stored_key_ != skey) {  // E rounded into the format once, shared by the variants
      precision::RoundingOptions ro;
      ro.mode = precision::parse_rounding(pt.e_rounding);
      ro.seed = pt.seed;
      stored_.reset();
      stored_ = std::make_unique<PackedMatrix>(data_->E.data(), pt.shape.V, pt.shape.D, pt.options.e_format, ro,
                                               pt.options.threads);
      stored_key_ = skey;
    }
  }
  const std::string kkey = kernel_input_key(pt);
  kernel_differs_ = kkey != "fp32";
  if (kernel_key_ != kkey) {
    ref_kernel_.reset();
    kernel_key_ = kkey;
  }
  if (want_reference && kernel_differs_ && !ref_kernel_) {
    std::vector<float> A = data_->A, E = stored_ ? stored_->decode_all() : data_->E;
    if (pt.options.operand == "bf16") {
      const precision::Quantizer bf16(precision::parse_format("bfloat16"));  // nearest even, as the kernels load
      bf16.round(A, A);
      bf16.round(E, E);
    }
    StepInputs in_k = data_->view();
    in_k.A = A.data();
    in_k.E = E.data();
    ref_kernel_ = std::make_unique<cpu::ReferenceResult>();
    cpu::reference_step(in_k, *ref_kernel_, ref_alloc_, pt.options.threads);
  }
}

StepInputs PointInputs::inputs() const {
  StepInputs in = data_->view();
  in.E_stored = stored_.get();
  return in;
}

}  // namespace lobench::sweep
