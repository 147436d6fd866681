#include "variants/packed_matrix.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

#include "variants/checked_math.hpp"

#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"

namespace lobench {

PackedMatrix::PackedMatrix(const float* values, int64_t rows, int64_t cols, const std::string& format,
                           const precision::RoundingOptions& rounding, int threads)
    : quantizer_(precision::parse_format(format)), rows_(rows), cols_(cols) {
  const auto elements = checked_mul(rows, cols);
  if (!elements) throw std::invalid_argument("PackedMatrix: rows x cols overflows int64 (or is negative)");
  const size_t n = size_t(*elements);
  std::span<const float> in(values, n);
  switch (precision::code_bytes(quantizer_.format())) {
    case 1:
      codes8_.resize(n);
      quantizer_.encode(in, std::span<uint8_t>(codes8_), rounding, threads);
      break;
    case 2:
      codes16_.resize(n);
      quantizer_.encode(in, std::span<uint16_t>(codes16_), rounding, threads);
      break;
    default:
      values_.resize(n);
      quantizer_.round(in, std::span<float>(values_), rounding, threads);
  }
}

void PackedMatrix::decode_rows(int64_t first, int64_t count, float* out) const {
  const size_t begin = size_t(first * cols_), n = size_t(count * cols_);
  std::span<float> dst(out, n);
  if (!codes8_.empty()) quantizer_.decode(std::span<const uint8_t>(codes8_).subspan(begin, n), dst);
  else if (!codes16_.empty()) quantizer_.decode(std::span<const uint16_t>(codes16_).subspan(begin, n), dst);
  else std::copy_n(values_.data() + begin, n, out);
}

int64_t PackedMatrix::stored_bytes() const {
  return int64_t(codes8_.size()) + 2 * int64_t(codes16_.size()) + 4 * int64_t(values_.size());
}

std::vector<float> PackedMatrix::decode_all() const {
  std::vector<float> out(size_t(rows_ * cols_));
  if (!out.empty()) decode_rows(0, rows_, out.data());
  return out;
}

}  // namespace lobench
