// The fuzz suite's way into the loaders that no command reads yet (sequence files) and a direct way
// into the others: `fuzz_read_file KIND PATH [NAME]` reads PATH with one loader and exits 0 (read),
// or 2 with "fuzz_read_file: <message>" on stderr (refused), like the lobench commands do.
//   KIND: seqrec PATH | xc PATH | arff-last PATH N (the last N columns are labels) | mulan DIR NAME
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "datasets/arff.hpp"
#include "datasets/seqrec.hpp"
#include "datasets/xc_format.hpp"

int main(int argc, char** argv) {
  using namespace lobench::data;
  if (argc < 3) {
    fmt::print(stderr, "usage: fuzz_read_file seqrec|xc|arff-last|mulan PATH [N|NAME]\n");
    return 2;
  }
  const std::string kind = argv[1], path = argv[2];
  try {
    if (kind == "seqrec") {
      const SequenceDataset d = read_sequences(path);
      fmt::print("{} users, {} interactions, {} items\n", d.num_users(), d.num_interactions(), d.num_items);
    } else if (kind == "xc") {
      const SparseDataset d = read_xc(path);
      fmt::print("{} rows, {} features, {} labels\n", d.rows(), d.num_features, d.num_labels);
    } else if (kind == "arff-last" && argc == 4) {
      const SparseDataset d = read_arff(path, ArffLabelSpec::last(std::stoi(argv[3])));
      fmt::print("{} rows, {} features, {} labels\n", d.rows(), d.num_features, d.num_labels);
    } else if (kind == "mulan" && argc == 4) {
      const TrainTest d = read_mulan(path, argv[3]);
      fmt::print("{} + {} rows\n", d.train.rows(), d.test.rows());
    } else {
      fmt::print(stderr, "fuzz_read_file: unknown kind '{}'\n", kind);
      return 2;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "fuzz_read_file: {}\n", e.what());
    return 2;
  }
  return 0;
}
