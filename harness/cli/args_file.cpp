#include "harness/cli/args_file.hpp"

#include "harness/io/output_path.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef LOBENCH_SOURCE_DIR
#define LOBENCH_SOURCE_DIR "."
#endif

namespace lobench {
namespace {

namespace fs = std::filesystem;

void expand_file(const fs::path& file, std::vector<std::string>& out, int depth) {
  if (depth > 8) throw std::runtime_error(fmt::format("sweep file '{}': @files nested more than 8 deep", file.string()));
  io::require_input_file(file.string(), "sweep file");  // a directory would read as empty, a FIFO block
  std::ifstream f(file);
  if (!f) throw std::runtime_error(fmt::format("cannot read sweep file '{}'", file.string()));
  std::string line;
  while (std::getline(f, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w.size() > 1 && w[0] == '@') {
        const fs::path inner(w.substr(1));
        expand_file(inner.is_absolute() ? inner : file.parent_path() / inner, out, depth + 1);
      } else {
        out.push_back(w);
      }
    }
  }
}

}  // namespace

std::string repository_path(const std::string& relative) {
  const fs::path p(relative);
  return p.is_absolute() ? relative : (fs::path(LOBENCH_SOURCE_DIR) / p).string();
}

std::vector<std::string> expand_args_files(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i == 0 || a.size() < 2 || a[0] != '@') {
      out.push_back(a);
      continue;
    }
    fs::path file(a.substr(1));
    std::error_code ec;
    if (file.is_relative() && !fs::exists(file, ec) && fs::exists(repository_path(file.string()), ec))
      file = repository_path(file.string());
    expand_file(file, out, 0);
  }
  return out;
}

}  // namespace lobench
