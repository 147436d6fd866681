// `lobench merge OUT PARTS...` for the run files of `train-xmc --frontier --partition K/N`: one frontier
// file with every part's lines, as one process of the whole search would have written it. Checked before
// anything is written: every part a frontier file of the same search (its `frontier` identity), the
// partitions 0..N−1 each once (io::check_partitions), every line of the search in exactly one part, the
// one that owns it (line % N == K), and the fp32 baseline the same in every part bit for bit (each part
// trains it; the same seeds give the same runs). The baseline's cells are kept once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/provenance.hpp"

namespace lobench::train {

// Whether `path` is a frontier run file (its `schema` attribute says so).
bool is_frontier_file(const std::string& path);

// Writes `out` (refused if it exists, unless overwrite). Throws std::invalid_argument naming the part and
// the problem; `out` is then not created. Returns the summary line.
std::string merge_frontier_parts(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                                 bool overwrite);

}  // namespace lobench::train
