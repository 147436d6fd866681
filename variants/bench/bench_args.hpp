// The positional sizes of the one-tile benchmarks (tile_bench, bf16_tile_bench): `--help` prints the
// usage and exits 0; a value that is not a positive integer, or too many values, prints the usage and
// exits 2, naming the value (a typo no longer runs a tile of 0 rows).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lobench::bench {

// The values of argv[1..], defaults for those not given.
inline std::vector<int64_t> positional_sizes(int argc, char** argv, const char* usage, std::vector<int64_t> values) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("%s\n", usage);
      std::exit(0);
    }
    char* end = nullptr;
    const long long v = std::strtoll(argv[i], &end, 10);
    if (size_t(i) > values.size() || end == argv[i] || *end != '\0' || v <= 0) {
      std::fprintf(stderr, "%s: %s: %s\n%s\n", argv[0], argv[i],
                   size_t(i) > values.size() ? "one value too many" : "not a positive integer", usage);
      std::exit(2);
    }
    values[size_t(i - 1)] = v;
  }
  return values;
}

}  // namespace lobench::bench
