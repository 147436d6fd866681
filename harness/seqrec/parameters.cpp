#include "harness/seqrec/parameters.hpp"

#include <algorithm>
#include <stdexcept>

namespace lobench::seqrec {

ParamRef ParameterSet::add(const std::string& name, int64_t size, bool decay) {
  if (allocated()) throw std::logic_error("ParameterSet::add after allocate (" + name + ")");
  if (size <= 0 || total_ > INT64_MAX / 8 - size) throw std::invalid_argument("ParameterSet: bad size for " + name);
  ParamRef r{total_, size};
  tensors_.push_back({name, r, decay});
  total_ += size;
  return r;
}

void ParameterSet::allocate(CountingAllocator& alloc) {
  values_ = Buffer<float>(alloc, total_);
  grads_ = Buffer<float>(alloc, total_);
  std::fill_n(values_.data(), total_, 0.0f);
  std::fill_n(grads_.data(), total_, 0.0f);
}

void ParameterSet::zero_grad() { std::fill_n(grads_.data(), total_, 0.0f); }

}  // namespace lobench::seqrec
