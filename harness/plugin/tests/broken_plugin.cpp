// Plug-in libraries that are wrong in one way each (harness/plugin/CMakeLists.txt compiles this file
// once per BROKEN_* define); the loader must refuse every one, naming the file and the problem.
#include <memory>
#include <stdexcept>

#include "variants/plugin_api.hpp"
#include "variants/variant.hpp"

namespace {

class NamedVariant final : public lobench::Variant {
 public:
  explicit NamedVariant(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override { return "a broken plug-in's variant (never runs)"; }
  int64_t predicted_working_bytes(const lobench::Shape&, const lobench::RunOptions&) const override { return 0; }
  void run(const lobench::StepInputs&, lobench::StepOutputs&, lobench::RunContext&) const override {
    throw std::logic_error("a broken plug-in's variant ran");
  }

 private:
  std::string name_;
};

}  // namespace

#if defined(BROKEN_WRONG_ABI)
// Built for a future ABI: it answers with its own version and registers nothing.
extern "C" __attribute__((visibility("default"))) int lobench_register_v1(lobench::Registry*, int) { return 999; }
#elif defined(BROKEN_NO_ENTRY_POINT)
// The entry point misspelled.
extern "C" __attribute__((visibility("default"))) int lobench_register(lobench::Registry*, int abi) { return abi; }
#elif defined(BROKEN_DUPLICATE_NAME)
// A new name and a built-in's: neither may be registered.
LOBENCH_PLUGIN(registry) {
  registry.add(std::make_unique<NamedVariant>("plugin_only"));
  registry.add(std::make_unique<NamedVariant>("fused"));
}
#elif defined(BROKEN_THROWS)
LOBENCH_PLUGIN(registry) {
  registry.add(std::make_unique<NamedVariant>("throws_after_adding"));
  throw std::runtime_error("no device of the kind this plug-in needs");
}
#elif defined(BROKEN_THROWS_NON_STD)
// Throws what is no std::exception: refused like any throw, never std::terminate.
LOBENCH_PLUGIN(registry) {
  registry.add(std::make_unique<NamedVariant>("throws_an_int"));
  throw 42;
}
#elif defined(BROKEN_BAD_NAME)
// A name the run file cannot hold whole and --variants cannot name.
LOBENCH_PLUGIN(registry) { registry.add(std::make_unique<NamedVariant>("vendor/kernel:v2")); }
#elif defined(BROKEN_REGISTERS_NOTHING)
LOBENCH_PLUGIN(registry) { (void)registry; }
#elif defined(BROKEN_UNRESOLVED_SYMBOL)
// Needs a function no library defines: dlopen (RTLD_NOW) fails.
extern "C" int lobench_test_symbol_nobody_defines(int);
LOBENCH_PLUGIN(registry) {
  if (lobench_test_symbol_nobody_defines(1) == 1) registry.add(std::make_unique<NamedVariant>("never"));
}
#else
#error "define one BROKEN_* kind"
#endif
