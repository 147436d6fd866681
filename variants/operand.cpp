#include "variants/operand.hpp"

#include <stdexcept>

namespace lobench {

Operand parse_operand(std::string_view name) {
  if (name.empty() || name == "fp32" || name == "float32") return Operand::fp32;
  if (name == "tf32" || name == "tensorfloat32") return Operand::tf32;
  if (name == "bf16" || name == "bfloat16") return Operand::bf16;
  if (name == "e4m3" || name == "e4m3fn" || name == "fp8_e4m3" || name == "float8_e4m3fn") return Operand::e4m3;
  if (name == "e5m2" || name == "fp8_e5m2" || name == "float8_e5m2") return Operand::e5m2;
  throw std::invalid_argument("unknown operand precision '" + std::string(name) +
                              "' (valid: fp32, tf32, bf16, e4m3, e5m2)");
}

const char* to_string(Operand o) {
  switch (o) {
    case Operand::fp32: return "fp32";
    case Operand::tf32: return "tf32";
    case Operand::bf16: return "bf16";
    case Operand::e4m3: return "e4m3";
    case Operand::e5m2: return "e5m2";
  }
  return "?";
}

}  // namespace lobench
