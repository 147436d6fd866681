// How a sharded step cuts the problem over R ranks: a range of E's rows per rank (vocab), a range of
// the positions per rank (positions), or a vocab x positions grid. Pure functions, no MPI.
#pragma once

#include <cstdint>
#include <string>

namespace lobench::shard {

// The half-open index range [begin, end).
struct Range {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end == begin; }
  bool contains(int64_t i) const { return i >= begin && i < end; }
  bool operator==(const Range&) const = default;
};

// How [0, n) is cut into parts.
enum class Split {
  balanced,  // sizes differ by at most one: the first n % parts get one more (empty only when n < parts)
  blocked,   // ceil(n / parts) each, the last one ragged and any after it empty (Cut BCE's
             // vocab_offset = index · local V)
};
std::string to_string(Split s);
Split parse_split(const std::string& s);  // "balanced" | "blocked"; throws std::invalid_argument

// Part `index` of [0, n) cut into `parts`. Throws std::invalid_argument unless n >= 0, parts >= 1 and
// 0 <= index < parts.
Range split_range(int64_t n, int parts, int index, Split split = Split::balanced);

enum class ShardKind {
  vocab,      // rank r holds rows [v0_r, v1_r) of E and every position
  positions,  // rank r holds positions [p0_r, p1_r) and all of E
  grid,       // vocab_parts x position_parts ranks, each one block of both
};
std::string to_string(ShardKind k);  // "vocab", "positions", "vocab,positions"
ShardKind parse_shard_kind(const std::string& s);  // the same names; throws std::invalid_argument

// The layout of one sharded step. Rank r is the block (vocab_index(r), position_index(r)), numbered
// r = vocab_index · position_parts + position_index: `vocab` is the grid R x 1, `positions` 1 x R.
struct ShardLayout {
  ShardKind kind = ShardKind::vocab;
  Split split = Split::balanced;
  int ranks = 1, vocab_parts = 1, position_parts = 1;
  int64_t V = 1, P = 1;

  int vocab_index(int rank) const { return rank / position_parts; }
  int position_index(int rank) const { return rank % position_parts; }
  Range vocab(int rank) const { return split_range(V, vocab_parts, vocab_index(rank), split); }
  Range positions(int rank) const { return split_range(P, position_parts, position_index(rank), split); }
  std::string describe() const;  // e.g. "vocab 3x1 balanced" (vocab parts x position parts)
};

// The layout of `kind` over `ranks` ranks for a step with V rows of E and P positions. For a grid,
// vocab_parts (which must divide ranks) sets the split; 0 chooses the factorisation closest to square
// with vocab_parts >= position_parts. Throws std::invalid_argument naming the bad value.
ShardLayout make_layout(ShardKind kind, int ranks, int64_t V, int64_t P, int vocab_parts = 0,
                        Split split = Split::balanced);

}  // namespace lobench::shard
