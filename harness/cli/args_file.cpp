#include "args_file.hpp"

#include "harness/io/output_path.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lobench {

std::vector<std::string> expand_args_files(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i == 0 || a.size() < 2 || a[0] != '@') {
      out.push_back(a);
      continue;
    }
    io::require_input_file(a.substr(1), "sweep file");  // a directory would read as empty, a FIFO block
    std::ifstream f(a.substr(1));
    if (!f) throw std::runtime_error(fmt::format("cannot read sweep file '{}'", a.substr(1)));
    std::string line;
    while (std::getline(f, line)) {
      const auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      std::istringstream words(line);
      std::string w;
      while (words >> w) out.push_back(w);
    }
  }
  return out;
}

}  // namespace lobench
