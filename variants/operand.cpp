#include "variants/operand.hpp"

#include <stdexcept>

namespace lobench {

Operand parse_operand(std::string_view name) {
  if (name.empty() || name == "fp32" || name == "float32") return Operand::fp32;
  if (name == "tf32" || name == "tensorfloat32") return Operand::tf32;
  if (name == "bf16" || name == "bfloat16") return Operand::bf16;
  throw std::invalid_argument("unknown operand precision '" + std::string(name) + "' (valid: fp32, tf32, bf16)");
}

const char* to_string(Operand o) {
  switch (o) {
    case Operand::fp32: return "fp32";
    case Operand::tf32: return "tf32";
    case Operand::bf16: return "bf16";
  }
  return "?";
}

}  // namespace lobench
