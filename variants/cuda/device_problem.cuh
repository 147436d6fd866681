// One step's problem resident on the GPU, and the session that steps it (Variant::open_session).
//
// What lives where:
//   DeviceProblem   the inputs as the step receives them (A and E in the operand precision, or E as
//                   8-bit codes with their decode table) and the outputs. Counted by its own allocator:
//                   inputs and outputs are not working memory (docs/method.md#memory).
//   CudaStep        one variant's algorithm: it sizes and allocates its whole workspace once, through
//                   the working allocator, then `step` only launches work (no allocation in the timed
//                   region, so cudaMalloc/cudaFree never stall a sample).
//   CudaSession     owns both, a stream, a cuBLAS handle and the events; times one step per call.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "variants/cuda/device_allocator.hpp"
#include "variants/problem.hpp"
#include "variants/step.hpp"
#include "variants/operand.hpp"
#include "variants/variant.hpp"

namespace lobench::cuda {

// Operand, parse_operand, operand_size: variants/operand.hpp (the contract's).

// E as the step reads it.
enum class EStorage {
  operand,  // E in the operand type (float32 for fp32/tf32, bfloat16 for bf16)
  codes8,   // 8-bit codes of a narrower format, widened on chip through a 256-entry decode table
};

// How E will be held for these options (throws like common_skip_reason would explain).
EStorage planned_e_storage(const RunOptions& o);

// The skip reason shared by every GPU variant (no device, unknown operand, unsupported E format), or
// an empty string.
std::string common_skip_reason(const RunOptions& o);

struct DeviceProblem {
  int64_t P = 0, V = 0, D = 0, L = 0;
  int64_t mean_V = 0;  // the V a mean divides by: StepInputs::mean_V (the whole step's for a shard)
  Reduction reduction = Reduction::mean;
  Operand operand = Operand::fp32;
  EStorage e_storage = EStorage::operand;
  float grad_scale = 0.0f;  // s in g = s·w·(σ − y), from StepInputs::gradient_scale
  double weight_sum = 0.0;

  DeviceAllocator io_alloc;  // inputs and outputs (counted, reported apart from working memory)
  // Inputs. Exactly one of A32/A16 and one of E32/E16/Ecodes hold data.
  DeviceBuffer<float> A32, E32;
  DeviceBuffer<__nv_bfloat16> A16, E16;
  DeviceBuffer<uint8_t> Ecodes;   // [V, D] codes when e_storage == codes8
  DeviceBuffer<float> e_table;    // [256] decoded value of each code
  DeviceBuffer<int32_t> targets;  // [P, L] raw ids (padding and duplicates as given)
  DeviceBuffer<float> weights;    // [P], ones when the inputs have none
  // Outputs.
  DeviceBuffer<double> per_position_loss;  // [P]
  DeviceBuffer<double> loss;               // [1]
  DeviceBuffer<float> dA, dE;              // [P, D], [V, D]
  DeviceBuffer<long long> counts;          // [P, 4]

  // Uploads `in` converted to `operand` (round to nearest even for bf16) and, when options ask for a
  // storage format, E's codes. Synchronous: the data is on the device when it returns. Without
  // `with_dE` no dE buffer exists (the fused SGD update applies dW where it is formed).
  DeviceProblem(const StepInputs& in, const RunOptions& options, bool with_dE = true);
  int64_t io_bytes() const { return io_alloc.peak_bytes(); }
};

// Bytes the caller's inputs and outputs take on the device for this shape and options (the
// DeviceProblem above), for memory-limit checks before anything is allocated.
int64_t device_io_bytes(const Shape& s, const RunOptions& o);

// cuBLAS's workspace, handed to it explicitly so the counting allocator sees it.
constexpr int64_t kCublasWorkspaceBytes = int64_t(32) << 20;

class CudaStep {
 public:
  virtual ~CudaStep() = default;
  // Allocates everything `step` will use, through `alloc`; called once per session.
  virtual void allocate(const DeviceProblem& pb, DeviceAllocator& alloc) = 0;
  // Launches one step on `stream`: fills every output of `pb` (loss included). No allocation.
  virtual void step(DeviceProblem& pb, cudaStream_t stream, cublasHandle_t blas) = 0;
  // Whether the step calls cuBLAS (the session then gives cuBLAS a counted workspace).
  virtual bool uses_cublas() const { return true; }
};

class CudaSession final : public DeviceSession {
 public:
  CudaSession(const StepInputs& in, const RunOptions& options, std::unique_ptr<CudaStep> step);
  ~CudaSession() override;
  double run_timed() override;
  void download(StepOutputs& out) override;
  int64_t peak_working_bytes() const override { return work_alloc_.peak_bytes(); }
  int64_t peak_device_bytes() const override { return device_seen_bytes_; }
  int64_t io_device_bytes() const override { return problem_.io_bytes(); }
  // One step without timing or flushing (what Variant::run uses).
  void run_once();

 private:
  void release() noexcept;

  DeviceProblem problem_;
  DeviceAllocator work_alloc_;
  std::unique_ptr<CudaStep> step_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  DeviceBuffer<char> blas_workspace_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceAllocator flush_alloc_;  // the L2 flush buffer: neither input nor working memory
  DeviceBuffer<char> flush_;
  int64_t device_seen_bytes_ = -1;
};

// Copies the problem's outputs to `out` (resized); dE only when asked (the fused SGD update never forms it).
void download_outputs(const DeviceProblem& pb, StepOutputs& out, bool with_dE);

// Variant::run for a GPU variant: a session, one step, the outputs copied back.
void run_on_device(const StepInputs& in, StepOutputs& out, const RunOptions& options, std::unique_ptr<CudaStep> step);

// --- kernels shared by the variants (device_problem.cu) ---

// Valid, first-occurrence target ids per position: tgt[p, l] = targets[p, l] if it lies in [0, V) and
// does not repeat an earlier slot of the row, else -1. The BCE kernels then treat each slot as one
// positive without searching.
void launch_unique_targets(const int32_t* targets, int32_t* tgt, int64_t P, int64_t L, int64_t V, cudaStream_t s);

// out[i] = table[codes[i]] in the operand type (float or bfloat16), for n values.
void launch_widen_codes(const uint8_t* codes, const float* table, float* out, int64_t n, cudaStream_t s);
void launch_widen_codes(const uint8_t* codes, const float* table, __nv_bfloat16* out, int64_t n, cudaStream_t s);

// After per_position_loss holds Σ_v of the element loss: divides by mean_V for the mean reduction and
// writes loss = the position-weighted mean (or sum). One block; deterministic.
void launch_finish_loss(DeviceProblem& pb, cudaStream_t s);

// cuBLAS GEMM in the problem's operand precision with float32 accumulation and float32 C, column-major
// (cuBLAS's convention; the callers translate row-major shapes). `a`/`b` point at float or
// __nv_bfloat16 data as the operand says.
void gemm(cublasHandle_t h, Operand op, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
          const void* a, int64_t lda, const void* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace lobench::cuda
