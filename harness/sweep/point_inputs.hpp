// The inputs of the current group of rows and what is derived from them, each computed once and shared
// by every variant (and option) that reads them: the synthetic A, E, targets and weights; the float64
// reference on them (what the format costs); E rounded into a storage format; and the reference on the
// inputs as the variant reads them, E decoded and, for bf16 operands, A and E rounded to bfloat16 (what
// the kernel costs: the rows' kernel errors and count mismatches are judged against it).
#pragma once

#include <memory>
#include <string>

#include "harness/sweep/step_point.hpp"
#include "variants/counting_allocator.hpp"
#include "variants/packed_matrix.hpp"
#include "variants/reference.hpp"
#include "variants/step.hpp"

namespace lobench::sweep {

// Bytes of a point's float32/int32 inputs (A, E, targets, weights), of its inputs and outputs, and
// of the float64 reference's result and working set.
int64_t input_bytes(const Shape& s);
int64_t io_bytes(const Shape& s);
int64_t reference_bytes(const Shape& s);

class PointInputs {
 public:
  // Makes `pt`'s inputs current, reusing what the previous point left when it has the same inputs.
  // With `want_reference`, the float64 reference(s) are computed too (on pt.options.threads threads).
  void prepare(const StepPoint& pt, const SyntheticSpec& synthetic, bool want_reference);

  StepInputs inputs() const;  // E_stored set when the point's E is in a storage format
  const cpu::ReferenceResult* reference() const { return ref_.get(); }
  // The reference on the inputs as the variant reads them: E decoded from its storage format, and A and
  // E rounded to bfloat16 for bf16 operands (what the kernel costs); the same as reference() for fp32 E
  // with fp32 or tf32 operands.
  const cpu::ReferenceResult* kernel_reference() const { return kernel_differs_ ? ref_kernel_.get() : ref_.get(); }
  int64_t e_stored_bytes() const { return stored_ ? stored_->stored_bytes() : 0; }
  // Why the point cannot run as asked: finite E overflowed its storage format (inf or NaN as stored),
  // so every variant's loss would be inf or NaN by construction. "" when it fits. Such a row is
  // skipped with this reason, as a format that cannot hold the data is an expected outcome of a
  // format sweep, not a failure of the variant.
  const std::string& storage_overflow() const { return stored_overflow_; }
  // With fp8 operands, the per-tensor scales the variants apply to this point's A and E (the same
  // function on the same inputs, variants/fp8_scaling.hpp), as a row records them: "e4m3 scales: A 2^7,
  // E 2^12"; "" for other operands.
  std::string fp8_scales_note(const StepPoint& pt) const;
  // Forgets everything: the next prepare() makes the inputs again (a variant wrote into them).
  void discard();

 private:
  std::unique_ptr<StepData> data_;
  std::string data_key_;
  CountingAllocator ref_alloc_;
  std::unique_ptr<cpu::ReferenceResult> ref_;
  std::unique_ptr<PackedMatrix> stored_;
  std::string stored_key_;
  std::string stored_overflow_;
  std::unique_ptr<cpu::ReferenceResult> ref_kernel_;  // on the kernel's inputs, when they differ from the originals
  std::string kernel_key_;
  bool kernel_differs_ = false;
};

}  // namespace lobench::sweep
