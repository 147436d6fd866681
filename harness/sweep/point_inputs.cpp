#include "harness/sweep/point_inputs.hpp"

#include <vector>

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

void PointInputs::prepare(const StepPoint& pt, const SyntheticSpec& synthetic, bool want_reference) {
  const std::string key = pt.data_key();
  if (!data_ || data_key_ != key) {
    ref_.reset();
    stored_.reset();
    ref_stored_.reset();
    stored_key_.clear();
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
    ref_stored_.reset();
    stored_key_.clear();
    return;
  }
  const std::string skey = pt.options.e_format + "/" + pt.e_rounding;
  if (stored_key_ != skey) {  // E rounded into the format once, shared by the variants
    precision::RoundingOptions ro;
    ro.mode = precision::parse_rounding(pt.e_rounding);
    ro.seed = pt.seed;
    ref_stored_.reset();
    stored_.reset();
    stored_ = std::make_unique<PackedMatrix>(data_->E.data(), pt.shape.V, pt.shape.D, pt.options.e_format, ro,
                                             pt.options.threads);
    stored_key_ = skey;
  }
  if (want_reference && !ref_stored_) {
    const std::vector<float> Eq = stored_->decode_all();
    StepInputs in_q = data_->view();
    in_q.E = Eq.data();
    ref_stored_ = std::make_unique<cpu::ReferenceResult>();
    cpu::reference_step(in_q, *ref_stored_, ref_alloc_, pt.options.threads);
  }
}

StepInputs PointInputs::inputs() const {
  StepInputs in = data_->view();
  in.E_stored = stored_.get();
  return in;
}

}  // namespace lobench::sweep
