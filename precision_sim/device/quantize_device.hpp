// Rounding, encoding and decoding on a CUDA device, bit-identical to Quantizer (quantizer.hpp).
//
// The kernels (device/quantize.cu) run the library's own scalar path, device_rounding.hpp, and give
// element i the random word random_word(seed, stream, index_offset + i) (stochastic.hpp), the word the
// CPU library gives it. So for the same Format and RoundingOptions the results equal Quantizer's bit
// for bit, in every mode, stochastic ones included, at any thread count or ISA on the CPU side.
//
// Plain C++: no CUDA type appears here. The functions exist in every build; when lobench_precision is
// built without CUDA (LOBENCH_PRECISION_HAS_CUDA undefined), precision_device_available() says so and
// the others throw std::runtime_error. Every CUDA call is checked: a failure throws std::runtime_error
// naming the call and the CUDA error. Arguments the CPU library rejects are rejected the same way
// (std::invalid_argument: sr_bits outside 0..31, codes too wide for uint16).
//
// These copy host arrays to the device and back (one synchronous round trip per call): meant for
// tests and one-off conversions. Kernels of your own can call round_hd / encode_hd / decode_hd /
// random_word_hd with a DevicePlan directly (device_rounding.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"

namespace lobench::precision {

// Whether the device functions can run here: built with CUDA, a device present, and this build's
// kernels loadable on it. When not, *why (if given) says what is missing.
bool precision_device_available(std::string* why = nullptr);

// Values on the format's grid in float32 (== Quantizer(f).round(in, out, opt)).
std::vector<float> round_on_device(std::span<const float> in, const Format& f, const RoundingOptions& opt = {});

// Codes in uint16 (== Quantizer(f).encode(in, codes, opt)); formats of at most 16 bits.
std::vector<uint16_t> encode_on_device(std::span<const float> in, const Format& f, const RoundingOptions& opt = {});

// Values of codes (bits above the format's width are ignored; == Quantizer(f).decode(codes, out));
// formats of at most 16 bits.
std::vector<float> decode_on_device(std::span<const uint16_t> codes, const Format& f);

}  // namespace lobench::precision
