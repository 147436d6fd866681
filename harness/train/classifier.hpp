// The XMC classifier head of ELMO-style training: weights W [V, D] (label-major) stored in a number
// format (float32, bfloat16, fp8, any eXmY), binary cross-entropy over ALL labels with SUM reduction
// (Renee/ELMO: logit gradient σ(z) − y), and plain SGD (no momentum, no weight decay) whose result is
// rounded back into the format: nearest-even, stochastic with k random bits (Philox keyed by seed,
// step and element index), or ELMO's own fp8 stochastic rounding.
//
// One step, for each of k label chunks [c0, c1) in turn (notes/elmo.md §2), tile by tile on the tiled
// variants' scan and kernels (classifier_step.cpp; products with fp32, bf16 or fp8 operands, head_products.hpp): Z_t = H·W_tᵀ into the thread's logit tile [B, tile];
// loss; G_t = σ(Z_t) − Y_t in place; dH += G_t·W_t (added in tile order) and dW_t = G_tᵀ·H, both with
// the PRE-update weights; then
//           separate: dW_t is written into the chunk's weight-gradient buffer [V_c, D]; once the chunk is
//                     done, W_c ← round(W_c − lr·dW_c);
//           fused:    W_t ← round(W_t − lr·dW_t) at once (the update hook): the [V, D] gradient never
//                     exists, only a [tile, D] scratch per thread.
// Every element's update is fma(−lr, g, w) then rounding with the random word of its global index
// v·D + d in stream `step`, and each dW tile comes from the same product of the same shapes in both
// modes, so fused and separate give bit-identical weights (also for stochastic rounding).
// The chunks k set the separate mode's gradient buffer; the logits live only in the threads' tiles.
// Memory: every buffer comes from the CountingAllocator given at construction; predicted_bytes() is
// the exact analytic sum (tests hold the measured peak to it). Eigen's internal GEMM packing buffers
// (O(cache size)) are not counted, as in the rest of lobench.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"
#include "precision_sim/rounding.hpp"
#include "variants/operand.hpp"

namespace lobench::train {

enum class UpdateMode { separate, fused };

// The stream tag of the logit gradient's rounding words (the weights' update uses stream `step`).
inline constexpr uint64_t kGradStreamTag = uint64_t(1) << 63;
std::string to_string(UpdateMode m);
UpdateMode parse_update_mode(const std::string& s);  // throws std::invalid_argument

// How the updated weight w − lr·g is rounded into the storage format.
struct UpdateRounding {
  // Any precision_sim mode (nearest_even, stochastic, stochastic_exact, toward_zero, ...).
  precision::Rounding mode = precision::Rounding::nearest_even;
  // ELMO's fp8 path (notes/elmo.md §2): add the low 23 − M bits of the random word to the float32
  // pattern, clear them, then round-to-nearest-even (saturating) into the format. True stochastic
  // rounding in the format's normal range, nearest below it (the subnormal grid is coarser than
  // float32's exponent-relative one), and |v| ≤ min_subnormal/2 goes to 0. Overrides `mode`.
  bool elmo = false;
  int sr_bits = 0;  // k for `stochastic` (0 = 23 − M); ELMO mode always uses 23 − M
  std::string name() const;
};
// "rne"/"nearest_even", "sr"/"stochastic", "sr_exact", "rz", ..., or "elmo_sr". Throws
// std::invalid_argument listing the valid names.
UpdateRounding parse_update_rounding(const std::string& s, int sr_bits = 0);

struct ClassifierConfig {
  int64_t V = 0;  // labels
  int64_t D = 0;  // embedding width
  precision::Format format = precision::formats::float32();
  UpdateRounding rounding;
  // The logit gradient G = σ(Z) − Y of each tile is rounded into this format with `rounding` (its mode
  // and sr_bits; elmo is refused) before dH and dW use it; float32 leaves it unchanged. The random word
  // of element (row b, label v) is (seed, kGradStreamTag | step, b·2^32 + v), v in the whole head, so it
  // is independent of the tiling, the threads and the sharding.
  precision::Format grad_format = precision::formats::float32();
  UpdateMode mode = UpdateMode::fused;
  int64_t chunks = 1;      // k label chunks (the logits buffer and, in separate mode, the gradient buffer are one chunk)
  int64_t tile = 0;        // labels per tile (0: 256, or less for small chunks)
  int threads = 1;         // OpenMP threads; results depend on the count only through dH's summation order
  int64_t max_batch = 0;   // B: rows per step (buffers are sized for it)
  int64_t max_positives = 0;  // most (row, label) positives one step may carry
  uint64_t seed = 0;       // key of the stochastic-rounding words
  // The products' operands (head_products.hpp): fp32, or bf16 (H, the weights as stored and the logit
  // gradient rounded to bfloat16 for the logits, dW, dH and the evaluation scores; float32 accumulation),
  // or e4m3 / e5m2 (H and the weights rounded to the fp8 format with per-tensor power-of-two scales, the
  // logit gradient to bfloat16, the same bf16 products). Independent of `format`, which is how the weights
  // are stored and updated. tf32 is refused (a GPU tensor-core format). bf16, e4m3 and e5m2 need a CPU
  // with AVX512_BF16 or AMX-BF16 (or a kernel forced by a test).
  Operand operand = Operand::fp32;
  // A shard of a larger head (harness/shard/): these V labels are the whole head's [label_offset,
  // label_offset + V). Initial values and rounding words are keyed by the whole head's element index,
  // so a shard's weights are the whole head's rows bit for bit.
  int64_t label_offset = 0;
};

// Where the bytes go (exact, in bytes). Components follow the issue: weights, weight gradient,
// optimizer state, logits buffer, encoder, and the rest (workspace).
struct MemoryBreakdown {
  int64_t weights = 0;
  int64_t weight_gradient = 0;  // separate: one chunk [V/k, D] float32; fused: [tile, D] per thread
  int64_t optimizer_state = 0;  // classifier optimizer state (SGD without momentum: 0)
  int64_t logits = 0;           // the threads' logit / logit-gradient tiles [B, tile rounded up to 16] float32
  int64_t encoder = 0;          // encoder parameters, gradient, Adam state, activations
  int64_t workspace = 0;        // decode tiles, per-thread dH partials, the step's label pairs, eval buffers
  int64_t total() const { return weights + weight_gradient + optimizer_state + logits + encoder + workspace; }
};

// Receives every weight-gradient tile dW[v0 .. v0+n, 0 .. D) (row-major, n·D floats) of a step, on the
// thread that computed it (thread in [0, threads)). Used for gradient histograms and tests.
using GradientObserver = std::function<void(int thread, int64_t v0, int64_t n, const float* dW)>;
// Receives every tile of the logit gradient G = σ(Z) − Y (the B rows x labels [v0, v0+n), row-major with
// rows ld floats apart: G[b·ld + j] for label v0 + j) once it is formed, before its weights are updated.
using LogitGradientObserver =
    std::function<void(int thread, int64_t v0, int64_t n, int64_t B, const float* G, int64_t ld)>;

// The positives of one step: (row, label) pairs. Rows index the step's batch, labels are in [0, V).
struct BatchLabels {
  std::span<const int64_t> offsets;  // [B + 1]
  std::span<const int32_t> ids;      // labels of row b: ids[offsets[b] .. offsets[b+1])
};

struct StepResult {
  double loss = 0;  // Σ_b Σ_v softplus(z) − y·z over the batch (sum reduction), float64 accumulation
};

class Classifier {
 public:
  Classifier(const ClassifierConfig& cfg, CountingAllocator& alloc);
  ~Classifier();
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;

  const ClassifierConfig& config() const { return cfg_; }
  int64_t tile() const { return tile_; }
  int64_t chunk_rows() const { return chunk_rows_; }

  // Bytes per stored weight: 1 or 2 for packed formats (≤ 16 bits), else 4 (float32 container).
  static int64_t bytes_per_weight(const precision::Format& f);
  static int64_t resolved_tile(const ClassifierConfig& cfg);
  // Exactly what the constructor allocates (encoder = 0), and what evaluate() adds on top while it runs.
  static MemoryBreakdown predicted_bytes(const ClassifierConfig& cfg);
  static int64_t predicted_eval_bytes(const ClassifierConfig& cfg, int64_t eval_batch, int k);

  // W ~ N(0, std²) from a seeded generator (float64 Box–Muller from Philox words), rounded to the
  // format by nearest-even.
  void init_normal(double std, uint64_t seed);
  // Sets W from float32 values (rounded to the format by nearest-even).
  void set_weights(std::span<const float> w);
  // The weights as float32 values [V, D].
  std::vector<float> weights() const;
  // Rows [v0, v0+n) as float32 into out (n·D).
  void decode_rows(int64_t v0, int64_t n, float* out) const;

  // One training step on embeddings H [B, D] (row-major, B ≤ max_batch) with the batch's positives:
  // writes dH [B, D] (gradient of the summed loss w.r.t. H, computed with the pre-update weights) and
  // updates W with learning rate lr. `step` is the stream of the stochastic-rounding words (use a new
  // one every step). `observer` (optional) sees every weight-gradient tile, `logit_observer` every tile
  // of the logit gradient.
  StepResult step(const float* H, int64_t B, const BatchLabels& labels, float lr, uint64_t step, float* dH,
                  const GradientObserver& observer = nullptr, const LogitGradientObserver& logit_observer = nullptr);

  // Scores of rows H [B, D]: the k highest logits per row (ids and scores, descending, ties by lower
  // id), written to top_ids / top_scores [B, k]; and, when labels are given, the summed BCE loss of
  // these rows. Buffers it needs come from the allocator while it runs (predicted_eval_bytes).
  double evaluate(const float* H, int64_t B, int k, int32_t* top_ids, float* top_scores,
                  const BatchLabels* labels = nullptr);

  // Fraction of weights that are exactly zero, and the count of non-finite ones.
  struct WeightStats {
    double zero_fraction = 0;
    int64_t non_finite = 0;
    double mean_abs = 0;
  };
  WeightStats weight_stats() const;

  struct Impl;  // the state; defined in classifier_impl.hpp, for the implementation files only

 private:
  ClassifierConfig cfg_;
  int64_t tile_ = 0, chunk_rows_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lobench::train
