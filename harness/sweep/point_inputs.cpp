#include "harness/sweep/point_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/rounding.hpp"
#include "variants/fp8_scaling.hpp"

namespace lobench::sweep {
namespace {

// Why E as stored in `format` cannot stand for E: finite values beyond the format's largest finite
// one became inf or NaN (a non-saturating format); "" when every stored value is finite or E itself
// is not. Read back 256 rows at a time, so that no second [V, D] copy is made.
std::string overflow_in_storage(const std::vector<float>& E, const PackedMatrix& stored, int64_t V, int64_t D,
                             const std::string& format) {
  if (!std::all_of(E.begin(), E.end(), [](float x) { return std::isfinite(x); })) return "";
  constexpr int64_t kRows = 256;
  std::vector<float> rows(size_t(std::min(kRows, V) * D));
  int64_t overflowed = 0;
  for (int64_t v0 = 0; v0 < V; v0 += kRows) {
    const int64_t n = std::min(kRows, V - v0);
    stored.decode_rows(v0, n, rows.data());
    overflowed += std::count_if(rows.begin(), rows.begin() + n * D, [](float x) { return !std::isfinite(x); });
  }
  if (overflowed == 0) return "";
  return fmt::format("E does not fit {}: {} of its {} values lie beyond the format's largest finite value {:g} "
                     "and are inf or NaN as stored (a saturating format, e.g. `{}_sat`, keeps them finite)",
                     format, overflowed, V * D, precision::parse_format(format).max_finite(), format);
}

}  // namespace

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
// are rounded to nearest even on load (the GPU variants); fp8 operands with their per-tensor scales, as
// the CPU variants round them (variants/fp8_scaling.hpp, the same function); fp32 and tf32 read the
// float32 inputs as they are (tf32 rounds inside the products, and cuBLAS may truncate instead: no exact
// input copy exists).
static std::string kernel_input_key(const StepPoint& pt) {
  const std::string e = pt.options.e_is_float32() ? std::string("fp32") : pt.options.e_format + "/" + pt.e_rounding;
  const Operand op = parse_operand(pt.options.operand);
  return op == Operand::bf16 || is_fp8(op) ? e + " operand " + to_string(op) : e;
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
    stored_overflow_.clear();
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
      stored_overflow_ = overflow_in_storage(data_->E, *stored_, pt.shape.V, pt.shape.D, pt.options.e_format);
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
    const Operand op = parse_operand(pt.options.operand);
    if (op == Operand::bf16) {
      const precision::Quantizer bf16(precision::parse_format("bfloat16"));  // nearest even, as the kernels load
      bf16.round(A, A);
      bf16.round(E, E);
    } else if (is_fp8(op)) {  // each with its scale from its own max |value|, as the variants round them
      const int T = pt.options.threads;
      Fp8Scaling::of(op, A.data(), int64_t(A.size()), T).round(A.data(), A.data(), int64_t(A.size()), T);
      Fp8Scaling::of(op, E.data(), int64_t(E.size()), T).round(E.data(), E.data(), int64_t(E.size()), T);
    }
    StepInputs in_k = data_->view();
    in_k.A = A.data();
    in_k.E = E.data();
    ref_kernel_ = std::make_unique<cpu::ReferenceResult>();
    cpu::reference_step(in_k, *ref_kernel_, ref_alloc_, pt.options.threads);
  }
}

void PointInputs::discard() {
  ref_kernel_.reset();
  ref_.reset();
  stored_.reset();
  data_.reset();
  data_key_.clear();
  stored_key_.clear();
  stored_overflow_.clear();
  kernel_key_.clear();
  kernel_differs_ = false;
}

std::string PointInputs::fp8_scales_note(const StepPoint& pt) const {
  const Operand op = parse_operand(pt.options.operand);
  if (!is_fp8(op) || !data_) return "";
  const int T = pt.options.threads;
  const std::vector<float> decoded = stored_ ? stored_->decode_all() : std::vector<float>();
  const std::vector<float>& E = stored_ ? decoded : data_->E;
  return fmt::format("{} scales: A {}, E {}", to_string(op),
                     Fp8Scaling::of(op, data_->A.data(), int64_t(data_->A.size()), T).describe(),
                     Fp8Scaling::of(op, E.data(), int64_t(E.size()), T).describe());
}

StepInputs PointInputs::inputs() const {
  StepInputs in = data_->view();
  in.E_stored = stored_.get();
  return in;
}

}  // namespace lobench::sweep
