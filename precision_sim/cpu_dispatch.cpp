#include "precision_sim/cpu_dispatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace lobench::cpu_dispatch {

std::string_view name(Isa isa) {
  switch (isa) {
    case Isa::portable: return "portable";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> parse(std::string_view text) {
  if (text == "scalar") return Isa::portable;
  for (Isa i : {Isa::portable, Isa::avx2, Isa::avx512})
    if (text == name(i)) return i;
  return std::nullopt;
}

bool cpu_supports(Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();  // idempotent; needed when the first call comes from a static initialiser
  switch (isa) {
    case Isa::portable: return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("popcnt");
  }
  return false;
#else
  return isa == Isa::portable;
#endif
}

std::optional<Isa> forced_by_environment() {
  const char* env = std::getenv("LOBENCH_ISA");
  if (!env || !*env) return std::nullopt;
  const auto isa = parse(env);
  if (!isa)
    throw std::invalid_argument(std::string("LOBENCH_ISA='") + env + "' is not an instruction set (portable, avx2, avx512)");
  return isa;
}

Isa choose(std::initializer_list<Isa> compiled) {
  const auto has = [&](Isa i) { return std::find(compiled.begin(), compiled.end(), i) != compiled.end(); };
  if (const auto forced = forced_by_environment()) {
    if (!has(*forced) || !cpu_supports(*forced))
      throw std::invalid_argument(std::string("LOBENCH_ISA=") + std::string(name(*forced)) +
                                  ": that path is not compiled into this build or this CPU cannot run it");
    return *forced;
  }
  Isa best = Isa::portable;
  for (Isa i : {Isa::avx2, Isa::avx512})
    if (has(i) && cpu_supports(i)) best = i;
  return best;
}

}  // namespace lobench::cpu_dispatch
