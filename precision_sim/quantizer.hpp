// Quantizer: one format, ready to round and encode float32 values, one at a time or over arrays.
//
// It precomputes everything the kernels need from the Format (detail::Plan), picks the kernels for an
// instruction set (simd.hpp), and keeps a decode table. Cheap to copy; safe to share between threads.
//
//   Quantizer q(parse_format("e4m3fn"));
//   q.round(x, y, {.mode = Rounding::stochastic, .seed = 1, .stream = step}, /*threads=*/2);
//   q.encode(x, codes);  q.decode(codes, y);
//
// round() returns values on the format's grid in float32; encode() returns their codes; always
// decode(encode(x)) == round(x) bit for bit (rounding.hpp lists what happens to inf, NaN, overflow).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"
#include "precision_sim/simd.hpp"

namespace lobench::precision {

namespace detail {
struct Plan;
struct KernelTable;
struct DecodeTable;
}  // namespace detail

class Quantizer {
 public:
  explicit Quantizer(Format format, Isa isa = default_isa());

  const Format& format() const { return format_; }
  Isa isa() const { return isa_; }

  // --- one value. `word` is the random word for stochastic modes (see stochastic.hpp for the word an
  // array element gets); sr_bits = 0 means default_sr_bits(format).
  float round(float x, Rounding mode = Rounding::nearest_even, uint32_t word = 0, int sr_bits = 0) const;
  uint32_t encode(float x, Rounding mode = Rounding::nearest_even, uint32_t word = 0, int sr_bits = 0) const;
  float decode(uint32_t code) const;
  bool is_nan_code(uint32_t code) const;

  // --- arrays. Sizes must match. threads: 1 = this thread, 0 = OpenMP's default, n = n threads; the
  // results never depend on it. round() may work in place (in.data() == out.data()).
  void round(std::span<const float> in, std::span<float> out, const RoundingOptions& opt = {}, int threads = 1) const;
  // Codes in uint8 need a format of at most 8 bits, in uint16 at most 16 bits (throws otherwise).
  void encode(std::span<const float> in, std::span<uint8_t> out, const RoundingOptions& opt = {}, int threads = 1) const;
  void encode(std::span<const float> in, std::span<uint16_t> out, const RoundingOptions& opt = {},
              int threads = 1) const;
  void decode(std::span<const uint8_t> in, std::span<float> out, int threads = 1) const;
  void decode(std::span<const uint16_t> in, std::span<float> out, int threads = 1) const;

  // The k a stochastic call with these options uses (validates sr_bits: 0 or 1..31).
  int resolved_sr_bits(int sr_bits) const;

 private:
  Format format_;
  Isa isa_;
  std::shared_ptr<const detail::Plan> plan_;
  const detail::KernelTable* kernels_;
  std::shared_ptr<detail::DecodeTable> decode_table_;
};

}  // namespace lobench::precision
