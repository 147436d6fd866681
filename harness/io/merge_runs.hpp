// `lobench merge`: the parts of a sweep run as a job array (`lobench run --partition K/N`, one file
// each) joined into one run file, after checking that they belong together: the same schema version,
// the same sweep (axes attribute), partitions 0..N−1 of the same N each exactly once, no row twice.
#pragma once

#include <string>
#include <vector>

#include "harness/io/results_file.hpp"
#include "harness/provenance.hpp"

namespace lobench::io {

struct MergeSummary {
  int64_t parts = 0, rows = 0;
};

// Writes `out` (refused if it exists, unless mode is OutMode::overwrite) with every part's rows and
// samples and, under /parts/NAME, each part's root attributes (its provenance). Throws
// std::invalid_argument naming the part and the problem; `out` is then not created.
MergeSummary merge_runs(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                        OutMode mode);

}  // namespace lobench::io
