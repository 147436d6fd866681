// `--partition K/N` in the sweep engine's namespace: the one Partition is io::Partition
// (harness/io/partition.hpp), below the engine so that the merger uses it too.
#pragma once

#include "harness/io/partition.hpp"

namespace lobench::sweep {

using io::Partition;

}  // namespace lobench::sweep
