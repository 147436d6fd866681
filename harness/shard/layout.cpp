#include "harness/shard/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace lobench::shard {

std::string to_string(Split s) { return s == Split::balanced ? "balanced" : "blocked"; }

Split parse_split(const std::string& s) {
  if (s == "balanced") return Split::balanced;
  if (s == "blocked") return Split::blocked;
  throw std::invalid_argument(fmt::format("shard split must be 'balanced' or 'blocked', got '{}'", s));
}

Range split_range(int64_t n, int parts, int index, Split split) {
  if (n < 0) throw std::invalid_argument(fmt::format("cannot split a negative extent {}", n));
  if (parts < 1) throw std::invalid_argument(fmt::format("cannot split into {} parts", parts));
  if (index < 0 || index >= parts)
    throw std::invalid_argument(fmt::format("part {} does not exist in a split into {} parts", index, parts));
  if (split == Split::blocked) {
    const int64_t block = n / parts + (n % parts != 0);
    const int64_t begin = std::min(n, block * index);  // block·index ≤ n + block: no overflow for int64 extents
    return {begin, std::min(n, begin + block)};
  }
  const int64_t base = n / parts, extra = n % parts;
  const int64_t begin = base * index + std::min<int64_t>(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

std::string to_string(ShardKind k) {
  switch (k) {
    case ShardKind::vocab: return "vocab";
    case ShardKind::positions: return "positions";
    case ShardKind::grid: return "vocab,positions";
  }
  return "?";
}

ShardKind parse_shard_kind(const std::string& s) {
  if (s == "vocab") return ShardKind::vocab;
  if (s == "positions") return ShardKind::positions;
  if (s == "vocab,positions" || s == "positions,vocab") return ShardKind::grid;
  throw std::invalid_argument(fmt::format("--shard must be 'vocab', 'positions' or 'vocab,positions', got '{}'", s));
}

std::string ShardLayout::describe() const {
  return fmt::format("{} {}x{} {}", to_string(kind), vocab_parts, position_parts, to_string(split));
}

ShardLayout make_layout(ShardKind kind, int ranks, int64_t V, int64_t P, int vocab_parts, Split split) {
  if (ranks < 1) throw std::invalid_argument(fmt::format("a sharded step needs at least 1 rank, got {}", ranks));
  if (V < 1 || P < 1) throw std::invalid_argument(fmt::format("a sharded step needs V >= 1 and P >= 1, got V = {}, P = {}", V, P));
  ShardLayout l;
  l.kind = kind;
  l.split = split;
  l.ranks = ranks;
  l.V = V;
  l.P = P;
  switch (kind) {
    case ShardKind::vocab:
      l.vocab_parts = ranks;
      l.position_parts = 1;
      break;
    case ShardKind::positions:
      l.vocab_parts = 1;
      l.position_parts = ranks;
      break;
    case ShardKind::grid:
      if (vocab_parts == 0) {
        vocab_parts = ranks;
        for (int f = 1; int64_t(f) * f <= ranks; ++f)
          if (ranks % f == 0) vocab_parts = ranks / f;  // the largest f ≤ √R dividing R: closest to square
      }
      if (vocab_parts < 1 || ranks % vocab_parts != 0)
        throw std::invalid_argument(
            fmt::format("a vocab x positions grid of {} ranks cannot have {} vocabulary parts (it must divide the ranks)", ranks, vocab_parts));
      l.vocab_parts = vocab_parts;
      l.position_parts = ranks / vocab_parts;
      break;
  }
  return l;
}

}  // namespace lobench::shard
