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

// A field of the first processor's, "" where /proc/cpuinfo has none.
const std::string& cpuinfo_field(const std::string& name) {
  static const std::map<std::string, std::string> fields = read_cpuinfo_fields();
  static const std::string none;
  const auto it = fields.find(name);
  return it == fields.end() ? none : it->second;
}

}  // namespace

std::string cpu_model_name() {
  const std::string& name = cpuinfo_field("model name");
  return name.empty() ? "unknown" : name;
}

std::string cpu_identity() {
  const std::string &family = cpuinfo_field("cpu family"), &model = cpuinfo_field("model");
  const std::string &stepping = cpuinfo_field("stepping"), &vendor = cpuinfo_field("vendor_id");
  if (family.empty() || model.empty()) return "unknown";
  return "family " + family + " model " + model + " stepping " + (stepping.empty() ? "?" : stepping) +
         (vendor.empty() ? "" : " (" + vendor + ")");
}

std::string cpu_simd_flags() {
  static const char* kFlags[] = {"avx2",        "fma",         "avx512f",  "avx512dq", "avx512bw", "avx512vl",
                                 "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16"};
  const std::string padded = " " + cpuinfo_field("flags") + " ";
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
