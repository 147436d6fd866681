// The largest embedding width the fused kernels (fused_kernels.cuh) compute correctly, and the check
// that refuses a wider problem where the kernels are launched. Plain C++, so that the check is also
// reachable (and tested) without a device.
//
// Why there is a limit: each warp keeps its share of the 64×Dp gradient accumulator in a fixed array of
// kMaxAccFrags 16×16 fragments sized for Dp = 256. Above that, the fragments past the array are never
// accumulated: the kernels would return a wrong dA/dE without any error (an emulation of the tf32 path
// at D = 272 gave a relative error of 8e2). skip_reason() declines such points in a sweep; this check
// covers every other caller (the fused SGD update, a future front end).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace lobench::cuda::fused {

constexpr int kMaxD = 256;  // D padded to a multiple of 16 must not exceed it; with D ≤ 256 it never does

// Throws std::invalid_argument naming `who` and the reason when the fused kernels cannot take D.
inline void require_supported_d(int64_t D, const char* who) {
  if (D < 1 || D > kMaxD)
    throw std::invalid_argument(std::string(who) + ": D = " + std::to_string(D) + " is outside 1.." +
                                std::to_string(kMaxD) +
                                ": the fused kernels keep a 64 x D gradient accumulator sized for D <= " +
                                std::to_string(kMaxD) + " (wider rows would be silently dropped)");
}

}  // namespace lobench::cuda::fused
