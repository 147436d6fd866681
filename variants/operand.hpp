// The precision of the products' operands (logits and gradients); accumulation is always float32.
// fp32: exact float32; tf32: tensor-core float32 with a 10-bit mantissa; bf16: A, E and the gradient
// tile rounded to bfloat16 (nearest-even); e4m3, e5m2: A and E each scaled by a power of two and rounded
// to OCP FP8 E4M3 (float8_e4m3fn, max 448) or E5M2 (float8_e5m2), the gradient tile to bfloat16
// (variants/fp8_scaling.hpp). The CPU variants compute fp32, and the others but tf32 where the CPU has
// AVX512_BF16 (variants/cpu/bf16_products.hpp: every fp8 value is exact in bfloat16, so the fp8 operands'
// products are the bf16 products' on exactly held values).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lobench {

enum class Operand { fp32, tf32, bf16, e4m3, e5m2 };

// Accepts fp32 (also float32, or empty), tf32 (also tensorfloat32), bf16 (also bfloat16), e4m3 (also
// e4m3fn, fp8_e4m3, float8_e4m3fn: the OCP format, not precision_sim's IEEE-like `e4m3`), e5m2 (also
// fp8_e5m2, float8_e5m2). Throws std::invalid_argument naming the valid names.
Operand parse_operand(std::string_view name);
const char* to_string(Operand o);
// e4m3 or e5m2: an fp8 operand with a per-tensor scale.
inline bool is_fp8(Operand op) { return op == Operand::e4m3 || op == Operand::e5m2; }
// Whether the CPU computes the operand's products with its bf16 products (bf16 and the fp8 operands).
inline bool products_in_bf16(Operand op) { return op == Operand::bf16 || is_fp8(op); }
// Bytes per operand value.
inline int64_t operand_size(Operand op) { return op == Operand::bf16 ? 2 : is_fp8(op) ? 1 : 4; }

}  // namespace lobench
