// CUDA kernels for round / encode / decode (quantize_device.hpp). Each element runs the library's
// scalar path (device_rounding.hpp) with the random word the CPU library gives it.
//
// Stochastic modes: one thread per Philox block. Block b = 16 g + j serves the 4 elements
// 64 g + j + 16 w (w = 0..3) of the global index space (stochastic.hpp), so one Philox call gives 4
// words, as on the CPU, and the words depend only on (seed, stream, index_offset + i).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "precision_sim/device/quantize_device.hpp"
#include "precision_sim/device_rounding.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision {

namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("precision_sim device: ") + call + " failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}
#define LOBENCH_CUDA_CHECK(call) check((call), #call)

// A device allocation freed on scope exit (errors while freeing are ignored: nothing to report them to).
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(size_t n) : n_(n) {
    if (n) LOBENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)));
  }
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return ptr_; }
  void upload(const T* host) {
    if (n_) LOBENCH_CUDA_CHECK(cudaMemcpy(ptr_, host, n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* host) const {
    if (n_) LOBENCH_CUDA_CHECK(cudaMemcpy(host, ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* ptr_ = nullptr;
  size_t n_;
};

struct RoundOut {
  __device__ static float make(float x, const DevicePlan& p, Rounding m, uint32_t w, int k) { return round_hd(x, p, m, w, k); }
};
struct EncodeOut {
  __device__ static uint16_t make(float x, const DevicePlan& p, Rounding m, uint32_t w, int k) {
    return static_cast<uint16_t>(encode_hd(x, p, m, w, k));
  }
};

// Deterministic modes: one element per thread, grid-stride.
template <typename Op, typename Out>
__global__ void deterministic_kernel(const float* __restrict__ in, Out* __restrict__ out, uint64_t n, DevicePlan p,
                                     Rounding mode) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = Op::make(in[i], p, mode, 0u, 1);
}

// Stochastic modes: thread t (grid-stride) takes Philox block 16 g0 + t, g0 = first_index / 64, and
// the up-to-4 elements of [first_index, first_index + n) it serves.
template <typename Op, typename Out>
__global__ void stochastic_kernel(const float* __restrict__ in, Out* __restrict__ out, uint64_t n, DevicePlan p,
                                  Rounding mode, int k, uint64_t seed, uint64_t stream, uint64_t first_index,
                                  uint64_t blocks) {
  const uint64_t g0 = first_index / 64;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t t = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < blocks; t += stride) {
    const uint64_t g = g0 + t / 16;
    const uint64_t j = t % 16;
    uint32_t w[4];
    detail::philox_block_words(seed, stream, 16 * g + j, w);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const uint64_t global = 64 * g + j + 16 * static_cast<uint64_t>(q);
      if (global < first_index) continue;
      const uint64_t i = global - first_index;
      if (i >= n) continue;
      out[i] = Op::make(in[i], p, mode, w[q], k);
    }
  }
}

__global__ void decode_kernel(const uint16_t* __restrict__ in, float* __restrict__ out, uint64_t n, DevicePlan p) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = decode_hd(in[i], p);
}

constexpr int kThreads = 256;

unsigned grid_for(uint64_t work) {
  const uint64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<uint64_t>(blocks, 1, uint64_t{1} << 16));  // grid-stride beyond
}

void require_device() {
  std::string why;
  if (!precision_device_available(&why)) throw std::runtime_error("precision_sim device: " + why);
}

template <typename Op, typename Out>
std::vector<Out> run_rounding(std::span<const float> in, const Format& f, const RoundingOptions& opt) {
  const int k = Quantizer(f, Isa::scalar).resolved_sr_bits(opt.sr_bits);  // the CPU library's validation
  const DevicePlan p = make_device_plan(f);
  std::vector<Out> result(in.size());
  if (in.empty()) return result;
  require_device();
  const uint64_t n = in.size();
  DeviceArray<float> d_in(n);
  DeviceArray<Out> d_out(n);
  d_in.upload(in.data());
  if (is_stochastic(opt.mode)) {
    const uint64_t g0 = opt.index_offset / 64;
    const uint64_t g1 = (opt.index_offset + n - 1) / 64;
    const uint64_t blocks = (g1 - g0 + 1) * 16;
    stochastic_kernel<Op, Out><<<grid_for(blocks), kThreads>>>(d_in.get(), d_out.get(), n, p, opt.mode, k, opt.seed,
                                                               opt.stream, opt.index_offset, blocks);
    LOBENCH_CUDA_CHECK(cudaGetLastError());
  } else {
    deterministic_kernel<Op, Out><<<grid_for(n), kThreads>>>(d_in.get(), d_out.get(), n, p, opt.mode);
    LOBENCH_CUDA_CHECK(cudaGetLastError());
  }
  LOBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  d_out.download(result.data());
  return result;
}

void require_16_bits(const Format& f, const char* what) {
  if (f.bits() > 16)
    throw std::invalid_argument(std::string(what) + ": format " + f.name + " has " + std::to_string(f.bits()) +
                                " bits: its codes do not fit uint16 (keep it in float32)");
}

}  // namespace

bool precision_device_available(std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it
    return fail(std::string("no usable CUDA driver or device: cudaGetDeviceCount failed: ") + cudaGetErrorName(e) +
                " (" + cudaGetErrorString(e) + ")");
  }
  if (count == 0) return fail("cudaGetDeviceCount found no CUDA device");
  // The kernels must be loadable on the current device (built for CMAKE_CUDA_ARCHITECTURES).
  cudaFuncAttributes attr{};
  const cudaError_t fe = cudaFuncGetAttributes(&attr, decode_kernel);
  if (fe != cudaSuccess) {
    (void)cudaGetLastError();
    int dev = 0, major = 0, minor = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    (void)cudaGetLastError();
    return fail("device " + std::to_string(dev) + " (sm_" + std::to_string(major) + std::to_string(minor) +
                ") cannot load this build's kernels (see CMAKE_CUDA_ARCHITECTURES): " + cudaGetErrorName(fe) + " (" +
                cudaGetErrorString(fe) + ")");
  }
  if (why) why->clear();
  return true;
}

std::vector<float> round_on_device(std::span<const float> in, const Format& f, const RoundingOptions& opt) {
  return run_rounding<RoundOut, float>(in, f, opt);
}

std::vector<uint16_t> encode_on_device(std::span<const float> in, const Format& f, const RoundingOptions& opt) {
  require_16_bits(f, "encode_on_device");
  return run_rounding<EncodeOut, uint16_t>(in, f, opt);
}

std::vector<float> decode_on_device(std::span<const uint16_t> codes, const Format& f) {
  require_16_bits(f, "decode_on_device");
  const DevicePlan p = make_device_plan(f);
  std::vector<float> result(codes.size());
  if (codes.empty()) return result;
  require_device();
  const uint64_t n = codes.size();
  DeviceArray<uint16_t> d_in(n);
  DeviceArray<float> d_out(n);
  d_in.upload(codes.data());
  decode_kernel<<<grid_for(n), kThreads>>>(d_in.get(), d_out.get(), n, p);
  LOBENCH_CUDA_CHECK(cudaGetLastError());
  LOBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  d_out.download(result.data());
  return result;
}

}  // namespace lobench::precision
