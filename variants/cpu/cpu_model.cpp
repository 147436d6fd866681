#include "variants/cpu/cpu_model.hpp"

#include <fstream>
#include <map>

namespace lobench::cpu {
namespace {

// The first processor's fields of /proc/cpuinfo (x86 names; other machines leave them empty), read once
// per process (the three descriptions below and every products-cache key read them).
std::map<std::string, std::string> read_cpuinfo_fields() {
  std::map<std::string, std::string> fields;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line) && !line.empty()) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    fields[name] = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return fields;
}

std::map<std::string, std::string> cpuinfo_fields() {
  static const std::map<std::string, std::string> fields = read_cpuinfo_fields();
  return fields;
}

}  // namespace

std::string cpu_model_name() {
  auto cpu = cpuinfo_fields();
  return cpu["model name"].empty() ? "unknown" : cpu["model name"];
}

std::string cpu_identity() {
  auto cpu = cpuinfo_fields();
  if (cpu["cpu family"].empty() || cpu["model"].empty()) return "unknown";
  return "family " + cpu["cpu family"] + " model " + cpu["model"] + " stepping " +
         (cpu["stepping"].empty() ? "?" : cpu["stepping"]) + (cpu["vendor_id"].empty() ? "" : " (" + cpu["vendor_id"] + ")");
}

std::string cpu_simd_flags() {
  static const char* kFlags[] = {"avx2",        "fma",         "avx512f",  "avx512dq", "avx512bw", "avx512vl",
                                 "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"};
  const std::string padded = " " + cpuinfo_fields()["flags"] + " ";
  std::string out;
  for (const char* flag : kFlags) {
    std::string word = " ";
    word.append(flag).push_back(' ');
    if (padded.find(word) == std::string::npos) continue;
    if (!out.empty()) out.push_back(',');
    out.append(flag);
  }
  return out.empty() ? "none" : out;
}

}  // namespace lobench::cpu
