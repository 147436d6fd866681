// One part of a sweep run as a job array: `--partition K/N` of `lobench run`, `train-xmc` and
// `train-seqrec` (the sweep driver takes the points i with i % N == K), and what `lobench merge` reads
// back from each part's `partition` attribute and checks. Below the sweep engine, so that the merger
// (harness/io/merge_runs.hpp) uses it without it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lobench::io {

// Which points of the sweep this process runs: those whose index i has i % count == index.
struct Partition {
  int64_t index = 0, count = 1;
  // Parses "K/N" (0 <= K < N); throws std::invalid_argument naming --partition.
  static Partition parse(const std::string& text);
  std::string str() const;
};

// The parts given to `lobench merge`, each named (its file or folder) with its partition: refuses
// (std::invalid_argument naming the parts) parts of different N, a partition given twice, and a gap
// among the partitions 0..required−1 (required: N, or fewer when the last partitions made nothing).
void check_partitions(const std::vector<std::pair<std::string, Partition>>& parts, int64_t required);

}  // namespace lobench::io
