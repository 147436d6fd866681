// The precision of the element-wise work on each logit (the "epilogue" of the logit product: the
// exponential, softplus, σ and their sums of bce_math.hpp), a study axis (`lobench run --epilogue`).
// fp32: float32 arithmetic, the kernels every other result uses. bf16, fp16: the same algorithm with every
// operation's result rounded to bfloat16 or IEEE binary16 (nearest even): the logit as read, each
// constant, each +, −, ×, ÷ (float32's 24 bits are at least twice the format's plus two, so rounding the
// float32 result is the correctly rounded operation on the format's values), each multiply-add (exact in
// float64, rounded to odd at float32, then to the format: rounded once), and the scaling by 2^n: what an
// AVX512-FP16 or bf16 implementation of these kernels would compute. What stays wider, as a kernel's
// accumulators would: the loss terms' sums (float64), the counts (on the float32 logits), the row scale s of the gradient s·σ
// (1/(P·V) under mean reduction is below binary16's smallest subnormal at these sizes: applied in float32
// to the rounded σ, as loss scaling would), and the sparse corrections at the targets (−x, −s·w).
// An emulation for the study of accuracy (variants/bce/bce_tile_rounded.cpp), not a fast path: the
// built-in CPU variants compute it (fused and chunked through their library path); others refuse it. The
// one native kernel: fused with bf16 or fp8 operands and fp16 on AVX512-FP16 (cpu/bf16_fused_tile.hpp),
// the emulation's bits.
#pragma once

#include <string_view>

namespace lobench {

enum class Epilogue { fp32, bf16, fp16 };

// Accepts fp32 (also float32, or empty), bf16 (also bfloat16), fp16 (also float16, half). Throws
// std::invalid_argument naming the valid names.
Epilogue parse_epilogue(std::string_view name);
const char* to_string(Epilogue e);

}  // namespace lobench
