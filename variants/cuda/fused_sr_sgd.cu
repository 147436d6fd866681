#include "variants/cuda/fused_sr_sgd.hpp"

#include <stdexcept>

#include "variants/cuda/cuda_check.hpp"
#include "variants/cuda/fused_launch.cuh"
#include "variants/cuda/fused_limits.hpp"
#include "precision_sim/device_rounding.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::cuda {
namespace {

// The epilogue of the cols kernel: the finished dE tile (shared memory) is applied to the weights
// of the block's 64 rows, which only this block reads (the rows kernel, which reads all of W, has
// finished before the cols kernel starts: same stream).
struct SgdUpdateRows {
  precision::DevicePlan plan;
  precision::Rounding mode = precision::Rounding::nearest_even;
  int sr_bits = 0;
  uint64_t seed = 0, stream = 0;
  float lr = 0.0f;
  uint8_t* codes8 = nullptr;      // W as 8-bit codes, or
  __nv_bfloat16* w16 = nullptr;   // W as bfloat16 (its bits are the bfloat16 codes)
  const float* table = nullptr;   // decode table of the 8-bit codes (device memory)

  __device__ void operator()(const float* staging, int sld, int64_t v0, int64_t V, int D) const {
    for (int i = threadIdx.x; i < fused::kTile * D; i += fused::kThreads) {
      const int r = i / D, k = i % D;
      const int64_t v = v0 + r;
      if (v >= V) continue;
      const int64_t at = v * D + k;
      const float w = codes8 ? table[codes8[at]] : __bfloat162float(w16[at]);
      const float x = __fmaf_rn(-lr, staging[r * sld + k], w);
      const uint32_t word = precision::random_word_hd(seed, stream, uint64_t(at));
      const uint32_t code = precision::encode_hd(x, plan, mode, word, sr_bits);
      if (codes8) codes8[at] = uint8_t(code);
      else w16[at] = __ushort_as_bfloat16(static_cast<unsigned short>(code));
    }
  }
};

// W's values as the DeviceProblem reads a stored E.
class ValuesAsStored final : public StoredMatrix {
 public:
  ValuesAsStored(const std::vector<float>& w, int64_t cols, std::string format)
      : w_(w), cols_(cols), format_(std::move(format)) {}
  void decode_rows(int64_t first, int64_t count, float* out) const override {
    std::copy_n(w_.data() + first * cols_, count * cols_, out);
  }
  int64_t stored_bytes() const override { return 0; }
  std::string format_name() const override { return format_; }

 private:
  const std::vector<float>& w_;
  int64_t cols_;
  std::string format_;
};

}  // namespace

SrSgdReport fused_sr_sgd_step(const StepInputs& in_, std::vector<float>& W, const SrSgdOptions& o, float lr,
                              uint64_t step, StepOutputs& out) {
  const precision::Format format = precision::parse_format(o.format);
  if (!(format.bits() <= 8 || format.same_encoding(precision::parse_format("bfloat16"))))
    throw std::invalid_argument("fused SR-SGD stores W in bfloat16 or a format of at most 8 bits, not " + format.name);
  if (int64_t(W.size()) != in_.V * in_.D) throw std::invalid_argument("fused SR-SGD: W must hold V·D values");
  fused::require_supported_d(in_.D, "fused SR-SGD");  // before the first CUDA call
  const precision::Quantizer q(format);
  const int sr_bits = q.resolved_sr_bits(o.sr_bits);

  ValuesAsStored stored(W, in_.D, o.format);
  StepInputs in = in_;
  in.E = nullptr;
  in.E_stored = &stored;
  RunOptions options;
  options.operand = "bf16";
  options.e_format = o.format;
  DeviceProblem pb(in, options, /*with_dE=*/false);  // W becomes pb.E16 (bfloat16) or pb.Ecodes (8-bit)

  DeviceAllocator work;
  const int64_t splits = fused::choose_splits(pb.P, pb.V);
  DeviceBuffer<int32_t> tgt(work, pb.P * pb.L);
  DeviceBuffer<float> dA_part(work, splits * pb.P * pb.D);
  DeviceBuffer<double> loss_part(work, splits * pb.P);
  DeviceBuffer<long long> counts_part(work, splits * pb.P * 4);

  SgdUpdateRows update;
  update.plan = precision::make_device_plan(format);
  update.mode = o.rounding;
  update.sr_bits = sr_bits;
  update.seed = o.seed;
  update.stream = step;
  update.lr = lr;
  if (pb.e_storage == EStorage::codes8) {
    update.codes8 = pb.Ecodes.data();
    update.table = pb.e_table.data();
  } else {
    update.w16 = pb.E16.data();
  }

  // Stream and events released however the step ends.
  struct Resources {
    cudaStream_t s = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Resources() {
      if (s) cudaStreamSynchronize(s);
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
      if (s) cudaStreamDestroy(s);
    }
  } r;
  LOBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  LOBENCH_CUDA_CHECK(cudaEventCreate(&r.start));
  LOBENCH_CUDA_CHECK(cudaEventCreate(&r.stop));
  LOBENCH_CUDA_CHECK(cudaEventRecord(r.start, r.s));
  launch_unique_targets(pb.targets.data(), tgt.data(), pb.P, pb.L, pb.V, r.s);
  fused::launch_fused<fused::OpsBf16>(pb, tgt.data(), splits, dA_part.data(), loss_part.data(), counts_part.data(),
                                      update, r.s);
  launch_finish_loss(pb, r.s);
  LOBENCH_CUDA_CHECK(cudaEventRecord(r.stop, r.s));
  LOBENCH_CUDA_CHECK(cudaEventSynchronize(r.stop));
  float ms = 0.0f;
  LOBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));

  download_outputs(pb, out, false);
  // The updated weights, decoded on the host through the same format.
  if (pb.e_storage == EStorage::codes8) {
    std::vector<uint8_t> codes(W.size());
    LOBENCH_CUDA_CHECK(cudaMemcpy(codes.data(), pb.Ecodes.data(), codes.size(), cudaMemcpyDeviceToHost));
    q.decode(codes, W);
  } else {
    std::vector<uint16_t> codes(W.size());
    LOBENCH_CUDA_CHECK(cudaMemcpy(codes.data(), pb.E16.data(), codes.size() * 2, cudaMemcpyDeviceToHost));
    q.decode(codes, W);
  }
  return {work.peak_bytes(), double(ms) * 1e-3};
}

}  // namespace lobench::cuda
