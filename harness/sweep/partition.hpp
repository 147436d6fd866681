// One part of a sweep run as a job array: `--partition K/N` of `lobench run` and `lobench train-xmc`, and
// what `lobench merge` reads back from each part's `partition` attribute. Its own file so that the
// training library and the merge use it without the sweep engine.
#pragma once

#include <cstdint>
#include <string>

namespace lobench::sweep {

// Which rows of the product this process runs: those whose index i has i % count == index.
struct Partition {
  int64_t index = 0, count = 1;
  // Parses "K/N" (0 <= K < N); throws std::invalid_argument naming --partition.
  static Partition parse(const std::string& text);
  std::string str() const;
};

}  // namespace lobench::sweep
