// The interface every implementation of the BCE step follows, and the registry that lists them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counting_allocator.hpp"
#include "problem.hpp"
#include "step.hpp"

namespace lobench {

// Knobs a sweep can set; 0 means "the variant chooses".
struct RunOptions {
  int threads = 1;
  int64_t block_v = 0;  // vocabulary block (columns of a logit tile)
  int64_t block_p = 0;  // position block (rows of a logit tile)
  std::string e_format;  // storage format of E ("" or "fp32": float32; else a precision_sim format name)

  bool e_is_float32() const { return e_format.empty() || e_format == "fp32" || e_format == "float32"; }
};

// What a variant gets to run with: the only allocator it may use for working memory.
struct RunContext {
  CountingAllocator& alloc;
  RunOptions options;
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string name() const = 0;         // says the algorithm: "dense", "chunked", ...
  virtual std::string backend() const = 0;      // "cpu" or "cuda"
  virtual std::string description() const = 0;  // one line for `lobench list`
  virtual std::string supports() const { return "reductions mean|sum, weights, padding, duplicates; E in fp32"; }
  // A reason this variant cannot run this point (unsupported shape, no device), or nothing.
  // The default accepts every shape and only a float32 E.
  virtual std::optional<std::string> skip_reason(const Shape&, const RunOptions& o) const {
    if (!o.e_is_float32()) return "reads E in float32 only (no storage format support)";
    return std::nullopt;
  }
  // Analytic peak of the working bytes the variant allocates through RunContext::alloc (inputs and
  // outputs excluded). Tests hold the measured peak to this.
  virtual int64_t predicted_working_bytes(const Shape& shape, const RunOptions& options) const = 0;
  // Computes loss, per-position loss, dA, dE and counts into `out` (already sized by the caller).
  virtual void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const = 0;
};

class Registry {
 public:
  static Registry& instance();
  bool add(std::unique_ptr<Variant> v);  // throws on a duplicate name
  const Variant* find(const std::string& name) const;
  std::vector<const Variant*> all() const;  // in name order

 private:
  std::vector<std::unique_ptr<Variant>> variants_;
};

// Registers a variant type from its own file at static-initialisation time. The variants are built
// as a CMake OBJECT library, so no registration can be dropped by the linker; a test lists the names.
#define LOBENCH_REGISTER_VARIANT(Type) \
  [[maybe_unused]] static const bool lobench_registered_##Type = ::lobench::Registry::instance().add(std::make_unique<Type>())

}  // namespace lobench
