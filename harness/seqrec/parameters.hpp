// The trainable parameters of the SASRec model, all in one flat float32 buffer (and the gradient in a
// second one of the same layout), so that the optimizer is one loop and the memory is one number.
// Layers register the tensors they need by name before the buffers exist and keep a ParamRef (an
// offset); at run time they read value(ref) / grad(ref). Both buffers come from the counting allocator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"

namespace lobench::seqrec {

struct ParamRef {
  int64_t offset = -1;
  int64_t size = 0;
  bool valid() const { return offset >= 0; }
};

struct ParamInfo {
  std::string name;
  ParamRef ref;
  bool decay = true;  // AdamW weight decay applies (matrices and embeddings; not LayerNorm gains or biases)
};

class ParameterSet {
 public:
  // Registers a tensor of `size` floats; only before allocate().
  ParamRef add(const std::string& name, int64_t size, bool decay);
  // Allocates values and gradients (both zeroed).
  void allocate(CountingAllocator& alloc);
  bool allocated() const { return values_.data() != nullptr; }

  int64_t size() const { return total_; }
  static int64_t bytes_for(int64_t total) { return 2 * total * int64_t(sizeof(float)); }  // values + gradient
  const std::vector<ParamInfo>& tensors() const { return tensors_; }

  float* value(ParamRef r) { return values_.data() + r.offset; }
  const float* value(ParamRef r) const { return values_.data() + r.offset; }
  float* grad(ParamRef r) { return grads_.data() + r.offset; }
  float* values() { return values_.data(); }
  const float* values() const { return values_.data(); }
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }
  void zero_grad();

 private:
  std::vector<ParamInfo> tensors_;
  int64_t total_ = 0;
  Buffer<float> values_, grads_;
};

}  // namespace lobench::seqrec
