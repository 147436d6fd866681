// quantize_device.hpp in a build without CUDA: the functions exist so that callers need no #ifdef;
// precision_device_available() says why they cannot run, the others throw.
#include <stdexcept>

#include "precision_sim/device/quantize_device.hpp"

namespace lobench::precision {

namespace {
constexpr const char* kNoCuda =
    "lobench_precision was built without CUDA (no nvcc found at configure time, or LOBENCH_CUDA=OFF)";
}

bool precision_device_available(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

std::vector<float> round_on_device(std::span<const float>, const Format&, const RoundingOptions&) {
  throw std::runtime_error(std::string("round_on_device: ") + kNoCuda);
}

std::vector<uint16_t> encode_on_device(std::span<const float>, const Format&, const RoundingOptions&) {
  throw std::runtime_error(std::string("encode_on_device: ") + kNoCuda);
}

std::vector<float> decode_on_device(std::span<const uint16_t>, const Format&) {
  throw std::runtime_error(std::string("decode_on_device: ") + kNoCuda);
}

}  // namespace lobench::precision
