#include "harness/io/sweep_place.hpp"

namespace lobench::io {

void record_place(RunFileWriter& writer, const SweepPlace& place) {
  writer.set_attr("sweep", place.sweep);
  writer.set_attr("sweep_index", place.index);
  writer.set_attr("sweep_runs", place.runs);
  writer.set_attr("partition", place.partition);
}

}  // namespace lobench::io
