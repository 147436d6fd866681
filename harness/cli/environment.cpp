#include "harness/cli/environment.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "harness/cli/numbers.hpp"
#include "harness/cli/option_checks.hpp"
#include "harness/meters/products_choice.hpp"

namespace lobench::cli {

std::string environment_help() {
  return "Environment (checked at start; a malformed value is a usage error, exit 2):\n"
         "  LOBENCH_ISA=portable|avx2|avx512   force one CPU kernel path (default: the best this CPU runs)\n"
         "  LOBENCH_GEMM=eigen|openblas|onednn the GEMM library of the dense products (default: OpenBLAS where built)\n"
         "  LOBENCH_PRODUCTS=own|library|onednn|auto\n"
         "                                     the products of fp32 fused/chunked tiles: lobench's AVX-512 micro-kernels,\n"
         "                                     the library's, oneDNN's, or (auto, default) the fastest as measured and\n"
         "                                     cached on this machine (`lobench tune`)\n"
         "  OMP_NUM_THREADS=N[,N...]           not read for thread counts (--threads decides, default all cores);\n"
         "                                     must still be positive integers, as OpenMP would ignore others\n"
         "  LOBENCH_DATA=DIR                   the data folder when --data-dir is not given (train-xmc, train-seqrec);\n"
         "                                     must be an existing folder\n"
         "  LOBENCH_NO_VERIFY=0|1              1: as --no-verify (public data sets not checked against SHA-256)\n"
         "  LOBENCH_PLUGIN_PATH=P1:P2          plug-in libraries (or folders of *.so) loaded before any command, as\n"
         "                                     --plugin; a library that is missing or wrong is a usage error\n"
         "  LOBENCH_PYTHON=PATH                the Python that `lobench compare` runs (default python3)\n"
         "Numbers: counts take 100000, 1e5, 100k, 1.5M (k = 10^3, M = 10^6, G = 10^9; whole numbers only); sizes\n"
         "need a unit: 512M, 2G, 1.5GiB, 4096B (binary, case-insensitive). Every option: docs/options.md.";
}

namespace {

const char* set_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

void check_omp_num_threads() {
  const char* v = set_value("OMP_NUM_THREADS");
  if (!v) return;
  const std::string text = v;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t n = 0;
    try {
      n = parse_count("OMP_NUM_THREADS", item);
    } catch (const OptionError&) {
      n = 0;
    }
    if (n < 1 || n > kMaxThreads || item.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(fmt::format("OMP_NUM_THREADS={}: must be a positive integer, or a comma list of "
                                              "them, each at most {} (lobench's own thread count is --threads)",
                                              text, kMaxThreads));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

}  // namespace

void check_environment() {
  check_omp_num_threads();
  if (const char* v = std::getenv("LOBENCH_NO_VERIFY"); v && *v && std::string(v) != "0" && std::string(v) != "1")
    throw std::invalid_argument(fmt::format("LOBENCH_NO_VERIFY={}: must be 1 (do not verify public data sets) or 0", v));
  if (const char* v = set_value("LOBENCH_DATA")) {
    std::error_code ec;
    if (!std::filesystem::is_directory(v, ec))
      throw std::invalid_argument(
          fmt::format("LOBENCH_DATA={}: not an existing folder (the data folder; unset it or give --data-dir)", v));
  }
  meters::forced_products();  // LOBENCH_PRODUCTS: a bad value, `own` where the micro-kernels cannot run, `onednn` where not built in
}

}  // namespace lobench::cli
