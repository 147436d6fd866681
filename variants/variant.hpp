// The interface every implementation of the BCE step follows, and the registry that lists them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "variants/counting_allocator.hpp"
#include "variants/plugin_api.hpp"
#include "variants/problem.hpp"
#include "variants/step.hpp"

namespace lobench {

// Knobs a sweep can set; 0 means "the variant chooses".
struct RunOptions {
  int threads = 1;
  int64_t block_v = 0;  // vocabulary block (columns of a logit tile)
  int64_t block_p = 0;  // position block (rows of a logit tile)
  // storage format of E ("" or "fp32": float32; else a precision_sim format name); braced, so that the short
  // form RunOptions{threads, block_v, block_p} leaves it empty without a -Wextra warning
  std::string e_format{};
  // Precision of the operands of the products (logits and gradients), accumulation always float32:
  // "fp32" (or ""), "tf32" (tensor-core float32 with a 10-bit mantissa) or "bf16" (A, E and the
  // gradient tile rounded to bfloat16, nearest-even). The CPU variants compute fp32 and bf16 (the latter on
  // CPUs with AVX512_BF16, variants/cpu/bf16_products.hpp); tf32 is a GPU format.
  std::string operand = "fp32";
  // Precision of the element-wise work on each logit (variants/epilogue.hpp): "fp32" (or ""), "bf16" or
  // "fp16", the latter two an emulation the built-in CPU variants compute for the study of accuracy.
  std::string epilogue = "fp32";

  bool e_is_float32() const { return e_format.empty() || e_format == "fp32" || e_format == "float32"; }
  bool operand_is_fp32() const { return operand.empty() || operand == "fp32"; }
  bool epilogue_is_fp32() const { return epilogue.empty() || epilogue == "fp32" || epilogue == "float32"; }
};

// What a variant gets to run with: the only allocator it may use for working memory.
struct RunContext {
  CountingAllocator& alloc;
  RunOptions options;
};

class DeviceSession;

class Variant {
 public:
  virtual ~Variant() = default;
  virtual std::string name() const = 0;         // says the algorithm: "dense", "chunked", ...
  virtual std::string backend() const = 0;      // "cpu" or "cuda"
  virtual std::string description() const = 0;  // one line for `lobench list`
  virtual std::string supports() const { return "reductions mean|sum, weights, padding, duplicates; E in fp32"; }
  // A reason this variant cannot run this point (unsupported shape, no device), or nothing.
  // The default accepts every shape and only float32 E, operands and epilogue.
  virtual std::optional<std::string> skip_reason(const Shape&, const RunOptions& o) const {
    if (!o.e_is_float32()) return "reads E in float32 only (no storage format support)";
    if (!o.operand_is_fp32()) return "computes in fp32 only (operand " + o.operand + " not supported)";
    if (!o.epilogue_is_fp32()) return "computes its element-wise work in fp32 only (epilogue " + o.epilogue + " not supported)";
    return std::nullopt;
  }
  // Analytic peak of the working bytes the variant allocates through RunContext::alloc (inputs and
  // outputs excluded). Tests hold the measured peak to this.
  virtual int64_t predicted_working_bytes(const Shape& shape, const RunOptions& options) const = 0;
  // Computes loss, per-position loss, dA, dE and counts into `out` (already sized by the caller).
  virtual void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const = 0;
  // Variants whose run() does more than the step (a GPU variant copies inputs to the device and
  // outputs back) return a session here: inputs placed once, then each step timed on the device's own
  // clock. The harness times through the session when there is one, and through run() otherwise.
  virtual std::unique_ptr<DeviceSession> open_session(const StepInputs&, const RunOptions&) const {
    return nullptr;
  }
};

// One problem resident on a device, stepped repeatedly (see Variant::open_session).
class DeviceSession {
 public:
  virtual ~DeviceSession() = default;
  // Runs one step and returns its device time in seconds (events around the step only; caches are
  // flushed before it, untimed, so that no sample reads inputs left in L2 by the previous one).
  virtual double run_timed() = 0;
  // The outputs of the last step, copied to the host.
  virtual void download(StepOutputs& out) = 0;
  // Exact peak of the working bytes the steps allocated on the device (inputs and outputs excluded),
  // counted by the session's device allocator since the session opened.
  virtual int64_t peak_working_bytes() const = 0;
  // The same working set as the device saw it: the drop in cudaMemGetInfo's free bytes across its
  // allocation, a cross-check (the driver maps 2 MiB pages, so it differs from the exact count by up
  // to a few MiB, either way). -1 where not measured.
  virtual int64_t peak_device_bytes() const { return -1; }
  // Bytes of the inputs and outputs as held on the device.
  virtual int64_t io_device_bytes() const = 0;
  // How run_timed's seconds and peak_working_bytes were measured, as the row records them
  // (results/SCHEMA.md: `timing_source`, `memory_meter`): a device's events around the step and the
  // session's counting device allocator, unless the session says otherwise.
  virtual std::string timing_source() const { return "device_events"; }
  virtual std::string memory_meter() const { return "counting_allocator"; }
};

// The longest variant name: what the run file's `variant` column holds (harness/io/result_row.hpp, a
// 32-byte text field; a static_assert there keeps the two equal). A longer name is refused at
// registration, never cut (two names sharing a prefix would merge, a UTF-8 character would be split).
inline constexpr size_t kMaxVariantNameBytes = 31;
// Why `name` cannot name a variant, or "": 1 to kMaxVariantNameBytes characters from [A-Za-z0-9_.+-]
// (no '/' or ':', which select a backend and a Python variant; no ',', which separates --variants; no
// spaces, newlines or other bytes that would break a table, a CSV cell or a file name).
std::string invalid_variant_name(const std::string& name);

class Registry {
 public:
  // The built-in variants, registered on first use through lobench_register_builtins_v1 (the same
  // kind of function a plug-in defines; variants/plugin_api.hpp).
  static Registry& instance();
  bool add(std::unique_ptr<Variant> v);  // throws on a duplicate backend/name
  const Variant* find(const std::string& name) const;
  std::vector<const Variant*> all() const;  // in name order
  // Where a variant came from: "built-in", or what register_from recorded (a plug-in's path, digest, ABI).
  std::string origin(const Variant& v) const;
  std::vector<std::string> origins() const;  // the distinct origins other than "built-in", in load order
  // Calls `fn` (a registration function, variants/plugin_api.hpp) on a fresh registry and moves what it
  // registered into this one, marked with `origin`: all of it, or, when fn returns another ABI, throws,
  // registers nothing or a name this registry already has, nothing (std::invalid_argument saying why).
  void register_from(lobench_register_fn fn, const std::string& origin);

 private:
  std::vector<std::unique_ptr<Variant>> variants_;
  std::vector<std::string> origins_;  // origins_[i]: where variants_[i] came from
};

// Declares a built-in variant type from its own file: a factory recorded at static-initialisation
// time, which lobench_register_builtins_v1 calls. The variants are built as a CMake OBJECT library, so
// no registration can be dropped by the linker; a test lists the names.
bool add_builtin_variant(std::unique_ptr<Variant> (*factory)());
#define LOBENCH_REGISTER_VARIANT(Type)                                                       \
  [[maybe_unused]] static const bool lobench_registered_##Type = ::lobench::add_builtin_variant( \
      []() -> std::unique_ptr<::lobench::Variant> { return std::make_unique<Type>(); })

}  // namespace lobench
