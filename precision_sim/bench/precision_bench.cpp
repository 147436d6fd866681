// Throughput of float32 -> format conversion, in elements per second (Google Benchmark's items/s).
//
// Input: 2^24 float32 uniform in [-100, 100], the setting of the CPFloat / ml_dtypes anchors in
// shared/references.md (one thread, Zen 4). Two operations:
//   round  : float32 -> float32 on the format's grid (4 B in, 4 B out)
//   encode : float32 -> codes (4 B in, 1 or 2 B out), what the anchors' conversions produce
// for several formats x rounding modes x {1, 2} threads on the default ISA, plus the portable scalar
// path at one thread for comparison.
//
//   precision_bench --benchmark_min_time=0.5        (Google Benchmark 1.7.1: a plain number of seconds)
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "precision_sim/format.hpp"
#include "precision_sim/pack.hpp"
#include "precision_sim/quantizer.hpp"

namespace lp = lobench::precision;

namespace {

constexpr size_t kN = size_t{1} << 24;

const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::vector<float> v(kN);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    for (float& e : v) e = d(rng);
    return v;
  }();
  return x;
}

// round (Out = float) or encode (Out = uint8_t / uint16_t codes) of the whole input, once per iteration.
template <typename Out>
void bench_convert(benchmark::State& state, lp::Format f, lp::Rounding mode, int threads, lp::Isa isa) {
  const lp::Quantizer q(f, isa);
  const auto& x = input();
  std::vector<Out> out(kN);
  lp::RoundingOptions opt{.mode = mode, .seed = 1};
  for (auto _ : state) {
    if constexpr (std::is_same_v<Out, float>) q.round(x, out, opt, threads);
    else q.encode(x, out, opt, threads);
    ++opt.stream;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kN));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kN) *
                          static_cast<int64_t>(sizeof(float) + sizeof(Out)));
}

void register_all() {
  const char* formats[] = {"float8_e4m3fn", "float8_e5m2", "bfloat16", "float16", "float4_e2m1fn"};
  const lp::Rounding modes[] = {lp::Rounding::nearest_even, lp::Rounding::stochastic, lp::Rounding::stochastic_exact};
  const lp::Isa best = lp::default_isa();
  for (const char* name : formats) {
    const lp::Format f = lp::parse_format(name);
    for (lp::Rounding mode : modes) {
      for (int threads : {1, 2}) {
        for (lp::Isa isa : {best, lp::Isa::scalar}) {
          if (isa == lp::Isa::scalar && (threads != 1 || best == lp::Isa::scalar)) continue;
          const std::string tail = std::string(name) + "/" + std::string(lp::rounding_name(mode)) +
                                   "/threads:" + std::to_string(threads) + "/" + std::string(lp::isa_name(isa));
          auto add = [&](const char* op, auto fn) {
            benchmark::RegisterBenchmark((std::string(op) + "/" + tail).c_str(), fn, f, mode, threads, isa)
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
          };
          add("round", bench_convert<float>);
          if (lp::code_bytes(f) == 1) add("encode", bench_convert<uint8_t>);
          else add("encode", bench_convert<uint16_t>);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("isa", std::string(lp::isa_name(lp::default_isa())));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
