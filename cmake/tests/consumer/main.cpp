// One step of the installed `fused` variant against the installed float64 `reference` on a small
// ragged problem; exits 0 when the loss agrees to 1e-6 relative and dE to 1e-5 relative L2.
#include <cmath>
#include <cstdio>

#include "variants/accuracy.hpp"
#include "variants/variant.hpp"

int main() {
  using namespace lobench;
  const Shape shape{1, 37, 301, 16, 3, Reduction::mean, true};
  SyntheticSpec spec;
  spec.pad_fraction = 0.2;
  spec.dup_fraction = 0.2;
  const StepData data = make_synthetic(shape, spec);
  const Variant* fused = Registry::instance().find("fused");
  const Variant* ref = Registry::instance().find("reference");
  if (!fused || !ref) {
    std::fprintf(stderr, "installed lobench lacks the fused or reference variant\n");
    return 1;
  }
  StepOutputs out[2];
  const Variant* vs[2] = {fused, ref};
  for (int i = 0; i < 2; ++i) {
    out[i].resize(data.P, data.V, data.D);
    CountingAllocator alloc;
    RunContext ctx{alloc, RunOptions{1, 0, 0}};
    vs[i]->run(data.view(), out[i], ctx);
  }
  std::vector<double> dE_ref(out[1].dE.begin(), out[1].dE.end());
  const double loss_err = relative_error(out[0].loss, out[1].loss);
  const double dE_err = relative_l2_error(out[0].dE.data(), dE_ref.data(), int64_t(dE_ref.size()));
  std::printf("fused loss %.12g reference %.12g (rel %.2g), dE rel L2 %.2g\n", out[0].loss, out[1].loss, loss_err, dE_err);
  return loss_err <= 1e-6 && dE_err <= 1e-5 ? 0 : 1;
}
