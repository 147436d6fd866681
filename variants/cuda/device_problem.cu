#include "variants/cuda/device_problem.cuh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/operand_type.cuh"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::cuda {


namespace {

// Every value of a format lies on bfloat16's grid: at most 7 mantissa bits, a range inside bfloat16's
// and a finest spacing no finer than bfloat16's smallest subnormal (2^-133).
bool exact_in_bf16(const precision::Format& f) {
  return f.mantissa_bits <= 7 && f.emax() <= 127 && f.min_positive() >= std::ldexp(1.0, -133);
}

struct EPlan {
  EStorage storage = EStorage::operand;
  std::string format;  // "" for float32
};

EPlan plan_e(const RunOptions& o, Operand op) {
  EPlan p;
  if (o.e_is_float32()) return p;
  const precision::Format f = precision::parse_format(o.e_format);  // throws with the valid names
  p.format = o.e_format;
  if (op == Operand::bf16 && !exact_in_bf16(f))
    throw std::invalid_argument("E format " + f.name + " has values bfloat16 cannot hold exactly (operand bf16)");
  if (f.bits() <= 8) p.storage = EStorage::codes8;
  return p;
}

__global__ void unique_targets_kernel(const int32_t* __restrict__ targets, int32_t* __restrict__ tgt, int64_t P,
                                      int64_t L, int64_t V) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= P) return;
  const int32_t* row = targets + p * L;
  for (int64_t l = 0; l < L; ++l) {
    const int32_t id = row[l];
    bool keep = id >= 0 && id < V;
    for (int64_t k = 0; keep && k < l; ++k) keep = row[k] != id;
    tgt[p * L + l] = keep ? id : -1;
  }
}

template <typename T>
__global__ void widen_codes_kernel(const uint8_t* __restrict__ codes, const float* __restrict__ table,
                                   T* __restrict__ out, int64_t n) {
  __shared__ float t[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) t[i] = table[i];
  __syncthreads();
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = to_operand<T>(t[codes[i]]);  // exact: the table's values are representable in T (plan_e)
}

constexpr int kFinishThreads = 1024;

__global__ void finish_loss_kernel(double* __restrict__ ppl, const float* __restrict__ w, int64_t P, int64_t V,
                                   int mean, double weight_sum, double* __restrict__ loss) {
  __shared__ double part[kFinishThreads];
  double acc = 0.0;
  for (int64_t p = threadIdx.x; p < P; p += blockDim.x) {
    double v = ppl[p];
    if (mean) {
      v /= double(V);
      ppl[p] = v;
    }
    acc += double(w[p]) * v;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {  // a fixed tree: the same sum every run
    if (int(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = mean ? (weight_sum == 0.0 ? 0.0 : part[0] / weight_sum) : part[0];
}

template <typename T>
void upload(DeviceBuffer<T>& dst, const T* src, int64_t n) {
  LOBENCH_CUDA_CHECK(cudaMemcpy(dst.data(), src, size_t(n) * sizeof(T), cudaMemcpyHostToDevice));
}

std::vector<__nv_bfloat16> to_bf16(const float* x, int64_t n) {
  std::vector<__nv_bfloat16> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = __float2bfloat16_rn(x[i]);  // nearest even (host path)
  return out;
}

}  // namespace

EStorage planned_e_storage(const RunOptions& o) { return plan_e(o, parse_operand(o.operand)).storage; }

std::string common_skip_reason(const RunOptions& o) {
  if (!o.epilogue_is_fp32())
    return "computes its element-wise work in fp32 (the epilogue precision " + o.epilogue + " is the CPU variants' emulation)";
  if (is_fp8(parse_operand(o.operand)))
    return "computes fp32, tf32 and bf16 operands (fp8 operands " + o.operand + " run on the CPU variants)";
  std::string why;
  if (!device_available(&why)) return why;
  try {
    plan_e(o, parse_operand(o.operand));
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

int64_t device_io_bytes(const Shape& s, const RunOptions& o) {
  const int64_t P = s.P(), V = s.V, D = s.D;
  const Operand op = parse_operand(o.operand);
  const EPlan e = plan_e(o, op);
  const int64_t e_bytes = e.storage == EStorage::codes8 ? V * D + 256 * 4 : V * D * operand_size(op);
  const int64_t inputs = P * D * operand_size(op) + e_bytes + P * s.L * 4 + P * 4;
  const int64_t outputs = P * 8 + 8 + (P * D + V * D) * 4 + P * 4 * 8;
  return inputs + outputs;
}

DeviceProblem::DeviceProblem(const StepInputs& in, const RunOptions& options, bool with_dE)
    : P(in.P), V(in.V), D(in.D), L(in.L), mean_V(in.mean_V()), reduction(in.reduction),
      operand(parse_operand(options.operand)) {
  const EPlan e = plan_e(options, operand);
  e_storage = e.storage;
  grad_scale = float(in.gradient_scale());
  weight_sum = in.weight_sum();

  // E's values as float32: given, or decoded from the storage format.
  std::vector<float> e_values;
  const float* e_src = in.E;
  if (in.E_stored) {
    e_values.resize(size_t(V * D));
    in.E_stored->decode_rows(0, V, e_values.data());
    e_src = e_values.data();
  } else if (!e.format.empty()) {
    throw std::invalid_argument("E format " + e.format + " asked for but the inputs carry no stored E");
  }
  if (!e_src || !in.A || !in.targets) throw std::invalid_argument("GPU step: inputs A, E and targets are required");

  if (operand == Operand::bf16) {
    A16 = DeviceBuffer<__nv_bfloat16>(io_alloc, P * D);
    upload(A16, to_bf16(in.A, P * D).data(), P * D);
  } else {
    A32 = DeviceBuffer<float>(io_alloc, P * D);
    upload(A32, in.A, P * D);
  }
  if (e_storage == EStorage::codes8) {
    const precision::Quantizer q(precision::parse_format(e.format));
    std::vector<uint8_t> codes(size_t(V * D));
    // The values lie on the format's grid, so nearest-even encoding returns their own codes.
    q.encode(std::span<const float>(e_src, size_t(V * D)), std::span<uint8_t>(codes));
    std::vector<float> table(256);
    for (uint32_t c = 0; c < 256; ++c) table[c] = q.decode(c & ((1u << q.format().bits()) - 1));
    Ecodes = DeviceBuffer<uint8_t>(io_alloc, V * D);
    upload(Ecodes, codes.data(), V * D);
    e_table = DeviceBuffer<float>(io_alloc, 256);
    upload(e_table, table.data(), 256);
  } else if (operand == Operand::bf16) {
    E16 = DeviceBuffer<__nv_bfloat16>(io_alloc, V * D);
    upload(E16, to_bf16(e_src, V * D).data(), V * D);
  } else {
    E32 = DeviceBuffer<float>(io_alloc, V * D);
    upload(E32, e_src, V * D);
  }
  targets = DeviceBuffer<int32_t>(io_alloc, P * L);
  upload(targets, in.targets, P * L);
  weights = DeviceBuffer<float>(io_alloc, P);
  std::vector<float> w(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; ++p) w[size_t(p)] = in.weight(p);
  upload(weights, w.data(), P);

  per_position_loss = DeviceBuffer<double>(io_alloc, P);
  loss = DeviceBuffer<double>(io_alloc, 1);
  dA = DeviceBuffer<float>(io_alloc, P * D);
  if (with_dE) dE = DeviceBuffer<float>(io_alloc, V * D);
  counts = DeviceBuffer<long long>(io_alloc, P * 4);
  // cudaMemcpy from pageable memory may return before the data has reached the device, and the steps
  // run on non-blocking streams that do not wait for the legacy stream.
  LOBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

CudaSession::CudaSession(const StepInputs& in, const RunOptions& options, std::unique_ptr<CudaStep> step)
    : problem_(in, options), step_(std::move(step)) {
  try {
    LOBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    LOBENCH_CUDA_CHECK(cudaEventCreate(&start_));
    LOBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
    if (step_->uses_cublas()) {
      LOBENCH_CUBLAS_CHECK(cublasCreate(&blas_));
      LOBENCH_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    }
    LOBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    // The device's own view of the working set: the drop in free memory across its allocation. The
    // driver maps memory in 2 MiB pages and may place small buffers in pages it already holds, so
    // this is a cross-check of large working sets, not of small ones.
    size_t free_before = 0, free_after = 0, total = 0;
    LOBENCH_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    if (blas_) {
      blas_workspace_ = DeviceBuffer<char>(work_alloc_, kCublasWorkspaceBytes);
      LOBENCH_CUBLAS_CHECK(cublasSetWorkspace(blas_, blas_workspace_.data(), size_t(kCublasWorkspaceBytes)));
    }
    step_->allocate(problem_, work_alloc_);
    LOBENCH_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    device_seen_bytes_ = int64_t(free_before) - int64_t(free_after);

    int device = 0, l2 = 0;
    LOBENCH_CUDA_CHECK(cudaGetDevice(&device));
    LOBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    flush_ = DeviceBuffer<char>(flush_alloc_, std::max<int64_t>(int64_t(2) * l2, int64_t(1) << 20));
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

void CudaSession::release() noexcept {
  if (stream_) cudaStreamSynchronize(stream_);
  if (blas_) cublasDestroy(blas_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
  blas_ = nullptr;
  start_ = stop_ = nullptr;
  stream_ = nullptr;
}

CudaSession::~CudaSession() { release(); }

void CudaSession::run_once() {
  step_->step(problem_, stream_, blas_);
  LOBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

double CudaSession::run_timed() {
  // Overwrite twice the L2's size so that the step starts from device memory, as a real step would.
  LOBENCH_CUDA_CHECK(cudaMemsetAsync(flush_.data(), 0, size_t(flush_.size()), stream_));
  LOBENCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
  step_->step(problem_, stream_, blas_);
  LOBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  LOBENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  LOBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return double(ms) * 1e-3;
}

void download_outputs(const DeviceProblem& pb, StepOutputs& out, bool with_dE) {
  out.resize(pb.P, pb.V, pb.D);
  LOBENCH_CUDA_CHECK(cudaMemcpy(out.per_position_loss.data(), pb.per_position_loss.data(), size_t(pb.P) * 8,
                                cudaMemcpyDeviceToHost));
  LOBENCH_CUDA_CHECK(cudaMemcpy(&out.loss, pb.loss.data(), 8, cudaMemcpyDeviceToHost));
  LOBENCH_CUDA_CHECK(cudaMemcpy(out.dA.data(), pb.dA.data(), size_t(pb.P * pb.D) * 4, cudaMemcpyDeviceToHost));
  if (with_dE) {
    LOBENCH_CUDA_CHECK(cudaMemcpy(out.dE.data(), pb.dE.data(), size_t(pb.V * pb.D) * 4, cudaMemcpyDeviceToHost));
  } else {
    out.dE.clear();  // not formed: an empty dE, not zeros that would read as a gradient
    out.dE.shrink_to_fit();
  }
  static_assert(sizeof(long long) == sizeof(int64_t));
  LOBENCH_CUDA_CHECK(cudaMemcpy(out.counts.data(), pb.counts.data(), size_t(pb.P) * 4 * 8, cudaMemcpyDeviceToHost));
}

void CudaSession::download(StepOutputs& out) {
  LOBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  download_outputs(problem_, out, true);
}

void run_on_device(const StepInputs& in, StepOutputs& out, const RunOptions& options, std::unique_ptr<CudaStep> step) {
  CudaSession session(in, options, std::move(step));
  session.run_once();
  session.download(out);
}

void launch_unique_targets(const int32_t* targets, int32_t* tgt, int64_t P, int64_t L, int64_t V, cudaStream_t s) {
  if (P == 0 || L == 0) return;
  const int threads = 256;
  unique_targets_kernel<<<unsigned((P + threads - 1) / threads), threads, 0, s>>>(targets, tgt, P, L, V);
  LOBENCH_CUDA_CHECK_LAUNCH();
}

template <typename T>
static void widen(const uint8_t* codes, const float* table, T* out, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 4096);
  widen_codes_kernel<T><<<unsigned(blocks), threads, 0, s>>>(codes, table, out, n);
  LOBENCH_CUDA_CHECK_LAUNCH();
}
void launch_widen_codes(const uint8_t* codes, const float* table, float* out, int64_t n, cudaStream_t s) {
  widen(codes, table, out, n, s);
}
void launch_widen_codes(const uint8_t* codes, const float* table, __nv_bfloat16* out, int64_t n, cudaStream_t s) {
  widen(codes, table, out, n, s);
}

void launch_finish_loss(DeviceProblem& pb, cudaStream_t s) {
  finish_loss_kernel<<<1, kFinishThreads, 0, s>>>(pb.per_position_loss.data(), pb.weights.data(), pb.P, pb.mean_V,
                                                  pb.reduction == Reduction::mean ? 1 : 0, pb.weight_sum,
                                                  pb.loss.data());
  LOBENCH_CUDA_CHECK_LAUNCH();
}

void gemm(cublasHandle_t h, Operand op, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
          const void* a, int64_t lda, const void* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const float alpha = 1.0f;
  const cudaDataType_t t = op == Operand::bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute = op == Operand::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  LOBENCH_CUBLAS_CHECK(cublasGemmEx(h, ta, tb, int(m), int(n), int(k), &alpha, a, t, int(lda), b, t, int(ldb), &beta,
                                    c, CUDA_R_32F, int(ldc), compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace lobench::cuda
