#include "variants/cpu/cpu_model.hpp"

#include <fstream>

namespace lobench::cpu {

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace lobench::cpu
