// Predicted-only memory of the classifier head of published training systems, for the memory-versus-
// labels comparison (ELMO's Fig. "peak memory vs labels"). These are models of someone else's code,
// written from its buffers (notes/elmo.md §6 and §9), not measurements; the trainer's own configurations
// are measured (trainer.hpp) and predicted exactly (classifier.hpp).
//
//   renee      fp32 master weights 4VD + fp16 copy 2VD (weights); fp32 weight gradient 4VD + the fp16
//              gradient it is upcast from 2VD (both live at the upcast); SGD momentum 4VD (optimizer
//              state); fp16 logits buffer for the whole label space 2BV. 16VD + 2BV.
//   fp32       plain fp32 training without chunks: weights 4VD, gradient 4VD, fp32 logits 4BV; SGD
//              without momentum.
//   elmo_bf16  bf16 weights 2VD; one chunk of the bf16 weight gradient 2(V/k)D; one chunk of bf16 logits
//              2B(V/k); fp32 input-gradient buffer 4BD.
//   elmo_fp8   e4m3 weights VD; no weight gradient (fused update); one chunk of bf16 logits 2B(V/k);
//              fp32 input-gradient buffer 4BD; the label space padded to a multiple of 16k (+16k).
// The encoder is not part of these numbers (encoder = 0): ELMO's is BERT-base or DistilRoBERTa, whose
// footprint (parameters, Adam state, activations at sequence length 32–256) is a few GiB and is the same
// order for every method; the report states how it changes the ratios.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/train/classifier.hpp"

namespace lobench::train {

enum class Layout { renee, fp32, elmo_bf16, elmo_fp8 };
std::string to_string(Layout l);
Layout parse_layout(const std::string& s);  // renee | fp32 | elmo_bf16 | elmo_fp8
std::vector<Layout> all_layouts();

struct LayoutShape {
  int64_t V = 0;
  int64_t D = 768;
  int64_t B = 128;
  int64_t chunks = 8;  // ELMO: 8 chunks for Amazon-3M and Paper2Keywords-8.6M
};

MemoryBreakdown layout_bytes(Layout l, const LayoutShape& s);

}  // namespace lobench::train
