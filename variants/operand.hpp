// The precision of the products' operands (logits and gradients); accumulation is always float32.
// fp32: exact float32; tf32: tensor-core float32 with a 10-bit mantissa; bf16: A, E and the gradient
// tile rounded to bfloat16 (nearest-even). The CPU variants compute fp32, and bf16 where the CPU has
// AVX512_BF16 (variants/cpu/bf16_products.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lobench {

enum class Operand { fp32, tf32, bf16 };

// Accepts fp32 (also float32, or empty), tf32 (also tensorfloat32), bf16 (also bfloat16). Throws
// std::invalid_argument naming the valid names.
Operand parse_operand(std::string_view name);
const char* to_string(Operand o);
inline int64_t operand_size(Operand op) { return op == Operand::bf16 ? 2 : 4; }  // bytes per operand value

}  // namespace lobench
