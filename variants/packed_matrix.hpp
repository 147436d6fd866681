// E held in a number format from precision_sim: packed codes (1 or 2 bytes per value) where the format
// has at most 16 bits, float32 values on the format's grid otherwise. What the low-precision runs give
// the variants (StepInputs::E_stored), so that the memory saving is real and counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "precision_sim/quantizer.hpp"
#include "variants/step.hpp"

namespace lobench {

class PackedMatrix final : public StoredMatrix {
 public:
  // Rounds `values` ([rows, cols] float32) into `format` with `rounding` (stochastic modes draw their
  // bits from Philox keyed by `seed` and the element index) and keeps the codes.
  PackedMatrix(const float* values, int64_t rows, int64_t cols, const std::string& format,
               const precision::RoundingOptions& rounding, int threads);

  void decode_rows(int64_t first, int64_t count, float* out) const override;
  int64_t stored_bytes() const override;
  std::string format_name() const override { return quantizer_.format().name; }
  // All values decoded: what a float32 reference on "the quantized E" reads.
  std::vector<float> decode_all() const;

 private:
  precision::Quantizer quantizer_;
  int64_t rows_, cols_;
  std::vector<uint8_t> codes8_;
  std::vector<uint16_t> codes16_;
  std::vector<float> values_;  // formats wider than 16 bits: values on the grid, in float32
};

}  // namespace lobench
