#include "harness/shard/sharded_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "variants/operand.hpp"

namespace lobench::shard {

ShardComms::ShardComms(MPI_Comm w, const ShardLayout& layout) : world(w) {
  int size = 0;
  MPI_Comm_size(world, &size);
  MPI_Comm_rank(world, &rank);
  if (size != layout.ranks)
    throw std::invalid_argument(fmt::format("layout '{}' is for {} ranks but the communicator has {}", layout.describe(),
                                            layout.ranks, size));
  MPI_Comm_split(world, layout.position_index(rank), layout.vocab_index(rank), &across_vocab);
  MPI_Comm_split(world, layout.vocab_index(rank), layout.position_index(rank), &across_positions);
}

ShardComms::~ShardComms() {
  if (across_vocab != MPI_COMM_NULL) MPI_Comm_free(&across_vocab);
  if (across_positions != MPI_COMM_NULL) MPI_Comm_free(&across_positions);
}

Shape shard_shape(const Shape& whole, const ShardLayout& layout, int rank) {
  Shape s = whole;
  s.B = 1;
  s.N = layout.positions(rank).size();
  s.V = layout.vocab(rank).size();
  return s;
}

namespace {
bool holds_work(const Shape& s) { return s.N > 0 && s.V > 0; }
}  // namespace

int64_t predicted_rank_working_bytes(const Variant& v, const Shape& whole, const ShardLayout& layout, int rank,
                                     const RunOptions& options) {
  const Shape s = shard_shape(whole, layout, rank);
  const int64_t variant = holds_work(s) ? v.predicted_working_bytes(s, options) : 0;
  // (the rank's place in across_vocab is its vocab_index, in across_positions its position_index)
  const int vi = layout.vocab_index(rank), pi = layout.position_index(rank);
  const int64_t comm = std::max({ordered_sum_buffer_bytes(s.N * s.D, layout.vocab_parts, 4, vi),
                                 ordered_sum_buffer_bytes(s.N, layout.vocab_parts, 8, vi),
                                 ordered_sum_buffer_bytes(s.V * s.D, layout.position_parts, 4, pi)});
  return std::max(variant, comm);
}

int64_t rank_io_bytes(const Shape& whole, const ShardLayout& layout, int rank) {
  const Shape s = shard_shape(whole, layout, rank);
  const int64_t inputs = (s.N * s.D + s.V * s.D + s.N * s.L + (whole.weighted ? s.N : 0)) * 4;
  const int64_t gathered = layout.position_parts > 1 ? whole.P() * (8 + (whole.weighted ? 4 : 0)) : 0;
  return inputs + StepOutputs::bytes(s.N, s.V, s.D) + gathered;
}

std::string rank_preflight(const Variant& v, const Shape& whole, const ShardLayout& layout, int rank,
                           const RunOptions& options, int64_t mem_limit) {
  if (v.backend() != "cpu")
    return fmt::format("variant '{}/{}' cannot run sharded: the sharded step runs CPU variants", v.backend(), v.name());
  if (!options.e_is_float32())
    return fmt::format("E in {}: the sharded step holds E in float32 only (no storage format per shard yet)", options.e_format);
  if (is_fp8(parse_operand(options.operand)))
    return fmt::format("operand {}: the per-tensor scales of A and E come from the whole tensors' max |value|, which "
                       "the ranks do not gather (a shard's own scale would change the result)", options.operand);
  const Shape s = shard_shape(whole, layout, rank);
  if (holds_work(s))
    if (auto why = v.skip_reason(s, options)) return fmt::format("variant '{}' cannot run its shard: {}", v.name(), *why);
  if (mem_limit > 0) {
    const int64_t need = predicted_rank_working_bytes(v, whole, layout, rank, options) + rank_io_bytes(whole, layout, rank);
    if (need > mem_limit)
      return fmt::format("OOM predicted: {} bytes (rows [{}, {}), positions [{}, {})) > rank limit {} bytes", need,
                         layout.vocab(rank).begin, layout.vocab(rank).end, layout.positions(rank).begin,
                         layout.positions(rank).end, mem_limit);
  }
  return {};
}

namespace {

// The whole step's weights in position order (all ones: empty), and Σw summed the way
// StepInputs::weight_sum sums them, so a sharded step's scale is the single-process one bit for bit.
double whole_weight_sum(const std::vector<float>& whole_weights, int64_t P) {
  if (whole_weights.empty()) return double(P);
  double s = 0.0;
  for (float w : whole_weights) s += w;
  return s;
}

}  // namespace

void sharded_step(const ShardComms& comms, const ShardLayout& layout, const ShardData& data, const Variant& variant,
                  RunContext& ctx, ShardResult& out, ShardTimes& times) {
  times = ShardTimes{};
  const int64_t P = data.positions.size(), V = data.vocab.size(), D = data.D;
  StepInputs in = data.view();

  // The whole step's weights: each position shard holds only its own.
  std::vector<float> whole_weights;
  if (data.weighted) {
    // (its own count, not P: a shard whose sizes are wrong is refused at the checkpoint, never overread)
    if (layout.position_parts > 1)
      all_gather(comms.across_positions, data.weights.data(), int64_t(data.weights.size()), whole_weights, times.comm);
    else whole_weights = data.weights;
  }
  if (layout.position_parts > 1) in.global_weight_sum = whole_weight_sum(whole_weights, layout.P);

  out.local.resize(P, V, D);
  const double t0 = MPI_Wtime();
  std::string error = check_shard(data);
  try {
    if (error.empty() && P > 0 && V > 0) variant.run(in, out.local, ctx);  // else its share of every sum is the zeros resize left
  } catch (const std::exception& e) {
    error = fmt::format("variant '{}' failed on rows [{}, {}), positions [{}, {}): {}", variant.name(), data.vocab.begin,
                        data.vocab.end, data.positions.begin, data.positions.end, e.what());
  }
  const double t1 = MPI_Wtime();
  times.compute_s = t1 - t0;
  agree_or_throw(comms.world, error, comms.rank);
  times.wait_s = MPI_Wtime() - t1;

  // Hoisted collectives: one per output, after the whole local step.
  ordered_sum(comms.across_vocab, out.local.per_position_loss.data(), P, ctx.alloc, times.comm);
  exact_sum(comms.across_vocab, out.local.counts.data(), P * 4, times.comm);
  ordered_sum(comms.across_vocab, out.local.dA.data(), P * D, ctx.alloc, times.comm);
  ordered_sum(comms.across_positions, out.local.dE.data(), V * D, ctx.alloc, times.comm);

  // The scalar loss, by StepOutputs::reduce_loss over the whole step's per-position losses in position order.
  StepOutputs whole;
  if (layout.position_parts > 1) all_gather(comms.across_positions, out.local.per_position_loss.data(), P, whole.per_position_loss, times.comm);
  else whole.per_position_loss = out.local.per_position_loss;
  StepInputs whole_in;
  whole_in.P = layout.P;
  whole_in.V = layout.V;
  whole_in.reduction = data.reduction;
  whole_in.weights = whole_weights.empty() ? nullptr : whole_weights.data();
  whole.reduce_loss(whole_in);
  out.loss = whole.loss;
  out.local.loss = whole.loss;
}

namespace {

template <typename T>
void gather_blocks(MPI_Comm world, int R, const T* mine, int64_t count, bool contributes, int64_t begin, T* all,
                   MPI_Datatype type) {
  if (count > INT_MAX || begin > INT_MAX) throw std::runtime_error("gather_whole: a block exceeds an MPI count");
  const int c = contributes ? int(count) : 0, b = int(begin);
  std::vector<int> counts(static_cast<size_t>(R)), begins(static_cast<size_t>(R));
  MPI_Gather(&c, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world);
  MPI_Gather(&b, 1, MPI_INT, begins.data(), 1, MPI_INT, 0, world);
  MPI_Gatherv(mine, c, type, all, counts.data(), begins.data(), type, 0, world);
}

}  // namespace

StepOutputs gather_whole(const ShardComms& comms, const ShardLayout& layout, const ShardResult& r, int64_t D) {
  const int me = comms.rank, R = layout.ranks;
  const Range pos = layout.positions(me), voc = layout.vocab(me);
  const bool per_position = layout.vocab_index(me) == 0, rows = layout.position_index(me) == 0;
  StepOutputs whole;
  if (me == 0) whole.resize(layout.P, layout.V, D);
  whole.loss = r.loss;
  gather_blocks(comms.world, R, r.local.per_position_loss.data(), pos.size(), per_position, pos.begin,
                whole.per_position_loss.data(), MPI_DOUBLE);
  gather_blocks(comms.world, R, r.local.counts.data(), pos.size() * 4, per_position, pos.begin * 4, whole.counts.data(),
                MPI_INT64_T);
  gather_blocks(comms.world, R, r.local.dA.data(), pos.size() * D, per_position, pos.begin * D, whole.dA.data(), MPI_FLOAT);
  gather_blocks(comms.world, R, r.local.dE.data(), voc.size() * D, rows, voc.begin * D, whole.dE.data(), MPI_FLOAT);
  return whole;
}

}  // namespace lobench::shard
