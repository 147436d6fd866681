// A plug-in that loads fine and whose variants misbehave when they run, one way each (the variant's
// name says which): the engine must turn every one into a `failed` (or flagged, or skipped) row with the
// reason, and the sweep must go on with the next row intact (plugin_cli_test.py).
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "variants/plugin_api.hpp"
#include "variants/variant.hpp"

namespace {

enum class Misdeed {
  segfaults, aborts, exits_zero, hangs, throws_int, nan_loss, nan_gradient, wrong_size, writes_input,
  over_prediction, huge_prediction, negative_prediction, out_of_memory
};

class Misbehaving final : public lobench::Variant {
 public:
  Misbehaving(std::string name, Misdeed m) : name_(std::move(name)), misdeed_(m) {}
  std::string name() const override { return name_; }
  std::string backend() const override { return "cpu"; }
  std::string description() const override { return "a test plug-in's variant that misbehaves: " + name_; }
  int64_t predicted_working_bytes(const lobench::Shape&, const lobench::RunOptions&) const override {
    if (misdeed_ == Misdeed::huge_prediction) return std::numeric_limits<int64_t>::max();
    if (misdeed_ == Misdeed::negative_prediction) return -5;
    return misdeed_ == Misdeed::over_prediction ? 50 : 0;
  }
  void run(const lobench::StepInputs& in, lobench::StepOutputs& out, lobench::RunContext&) const override {
    // Finite outputs of the right size (wrong values: the errors are large, which is not the point here).
    std::fill(out.dA.begin(), out.dA.end(), 0.0f);
    std::fill(out.dE.begin(), out.dE.end(), 0.0f);
    std::fill(out.counts.begin(), out.counts.end(), int64_t(0));
    out.loss = 0.5;
    switch (misdeed_) {
      case Misdeed::segfaults: raise(SIGSEGV); break;
      case Misdeed::aborts: std::abort();
      case Misdeed::exits_zero: std::exit(0);
      case Misdeed::hangs: for (;;) pause();
      case Misdeed::throws_int: throw 42;
      case Misdeed::nan_loss: out.loss = std::numeric_limits<double>::quiet_NaN(); break;
      case Misdeed::nan_gradient: out.dE[out.dE.size() / 2] = std::numeric_limits<float>::quiet_NaN(); break;
      case Misdeed::wrong_size: out.dA.resize(1); break;
      case Misdeed::writes_input: const_cast<float*>(in.E)[0] += 1.0f; break;
      case Misdeed::over_prediction: {  // 64 MiB outside the counting allocator, against a 50-byte prediction
        const size_t bytes = size_t(64) << 20;
        char* p = static_cast<char*>(std::malloc(bytes));
        if (p) std::memset(p, 1, bytes);
        asm volatile("" : : "r"(p) : "memory");  // kept: the compiler may not elide the allocation
        std::free(p);
        break;
      }
      case Misdeed::out_of_memory: {  // 64 GiB, touched: more than the row may map
        // What `new char[...]` does (std::bad_alloc when the allocation fails), spelled so that it does
        // so under AddressSanitizer too, whose throwing operator new reports and aborts instead (the
        // sanitizer job lets allocations fail: allocator_may_return_null).
        auto* p = new (std::nothrow) char[size_t(64) << 30];
        if (!p) throw std::bad_alloc();
        std::memset(p, 1, size_t(64) << 30);
        asm volatile("" : : "r"(p) : "memory");
        delete[] p;
        break;
      }
      default: break;
    }
  }

 private:
  std::string name_;
  Misdeed misdeed_;
};

}  // namespace

LOBENCH_PLUGIN(registry) {
  const std::pair<const char*, Misdeed> all[] = {
      {"segfaults", Misdeed::segfaults}, {"aborts", Misdeed::aborts}, {"exits_zero", Misdeed::exits_zero},
      {"hangs", Misdeed::hangs}, {"throws_int", Misdeed::throws_int}, {"nan_loss", Misdeed::nan_loss},
      {"nan_gradient", Misdeed::nan_gradient}, {"wrong_size", Misdeed::wrong_size},
      {"writes_input", Misdeed::writes_input}, {"over_prediction", Misdeed::over_prediction},
      {"huge_prediction", Misdeed::huge_prediction}, {"negative_prediction", Misdeed::negative_prediction},
      {"out_of_memory", Misdeed::out_of_memory}};
  for (const auto& [name, m] : all) registry.add(std::make_unique<Misbehaving>(name, m));
}
