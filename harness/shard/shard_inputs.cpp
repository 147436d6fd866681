#include "harness/shard/shard_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lobench::shard {

StepInputs ShardData::view() const {
  StepInputs in;
  in.P = positions.size();
  in.V = vocab.size();
  in.D = D;
  in.L = L;
  in.A = A.data();
  in.E = E.data();
  in.targets = targets.data();
  in.weights = weighted ? weights.data() : nullptr;
  in.reduction = reduction;
  in.global_V = V;
  return in;
}

std::string check_shard(const ShardData& s) {
  const int64_t P = s.positions.size(), V = s.vocab.size();
  if (int64_t(s.A.size()) != P * s.D || int64_t(s.E.size()) != V * s.D || int64_t(s.targets.size()) != P * s.L ||
      int64_t(s.weights.size()) != (s.weighted ? P : 0))
    return fmt::format("shard arrays do not match its {} positions x {} rows (D = {}, L = {}): A {}, E {}, targets {}, weights {}",
                       P, V, s.D, s.L, s.A.size(), s.E.size(), s.targets.size(), s.weights.size());
  for (size_t i = 0; i < s.A.size(); ++i)
    if (!std::isfinite(s.A[i]))
      return fmt::format("A holds a non-finite value ({}) at [{}, {}]", s.A[i], s.positions.begin + int64_t(i) / s.D, int64_t(i) % s.D);
  for (size_t i = 0; i < s.E.size(); ++i)
    if (!std::isfinite(s.E[i]))
      return fmt::format("E holds a non-finite value ({}) at [{}, {}]", s.E[i], s.vocab.begin + int64_t(i) / s.D, int64_t(i) % s.D);
  for (size_t i = 0; i < s.weights.size(); ++i)
    if (!std::isfinite(s.weights[i]) || s.weights[i] < 0)
      return fmt::format("weights hold {} at [{}]; weights must be finite and >= 0", s.weights[i], s.positions.begin + int64_t(i));
  return {};
}

void rebase_targets(const int32_t* ids, int64_t count, Range vocab, int32_t* local) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t id = ids[i];  // int64: id − begin must not overflow for hostile ids near INT32_MIN
    local[i] = vocab.contains(id) ? int32_t(id - vocab.begin) : -1;
  }
}

namespace {

ShardData empty_shard(const ShardLayout& layout, int rank, int64_t D, int64_t L, Reduction r) {
  ShardData s;
  s.vocab = layout.vocab(rank);
  s.positions = layout.positions(rank);
  s.V = layout.V;
  s.P = layout.P;
  s.D = D;
  s.L = L;
  s.reduction = r;
  return s;
}

}  // namespace

ShardData synthetic_shard(const Shape& shape, const SyntheticSpec& spec, const ShardLayout& layout, int rank) {
  ShardData s = empty_shard(layout, rank, shape.D, shape.L, shape.reduction);
  SyntheticBlock b = make_synthetic_slice(shape, spec, {s.vocab.begin, s.vocab.end, s.positions.begin, s.positions.end});
  s.weighted = shape.weighted;
  s.A = std::move(b.A);
  s.E = std::move(b.E);
  s.weights = std::move(b.weights);
  s.targets.resize(b.targets.size());
  rebase_targets(b.targets.data(), int64_t(b.targets.size()), s.vocab, s.targets.data());
  return s;
}

ShardData shard_of(const StepData& whole, const ShardLayout& layout, int rank) {
  if (layout.V != whole.V || layout.P != whole.P)
    throw std::invalid_argument(fmt::format("a layout for V = {}, P = {} cannot shard a problem with V = {}, P = {}",
                                            layout.V, layout.P, whole.V, whole.P));
  ShardData s = empty_shard(layout, rank, whole.D, whole.L, whole.reduction);
  const int64_t D = whole.D, L = whole.L;
  s.A.assign(whole.A.begin() + s.positions.begin * D, whole.A.begin() + s.positions.end * D);
  s.E.assign(whole.E.begin() + s.vocab.begin * D, whole.E.begin() + s.vocab.end * D);
  s.weighted = !whole.weights.empty();
  if (s.weighted)
    s.weights.assign(whole.weights.begin() + s.positions.begin, whole.weights.begin() + s.positions.end);
  s.targets.resize(size_t(s.positions.size() * L));
  rebase_targets(whole.targets.data() + s.positions.begin * L, s.positions.size() * L, s.vocab, s.targets.data());
  return s;
}

}  // namespace lobench::shard
