// Timing: warm-up, repeats, every sample kept; and the machine's own SGEMM rate as the yardstick.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace lobench {

struct Samples {
  std::vector<double> seconds;  // every timed repeat, in order
  double median() const;
  double min() const;
  double max() const;
  double cv() const;  // coefficient of variation (sample standard deviation / mean); NaN below 2 samples
};

// Seconds one call of `fn` takes on a steady clock.
double seconds_of(const std::function<void()>& fn);

// How many timed runs a row gets. Adaptive by default, as Google Benchmark's min time: at least
// min_reps, and more until their total reaches min_time_s and their CV is at most cv_target, at most
// max_reps, and no more once the total passes max_time_s (a step of 20 s stops at min_reps). A fixed
// count (`--reps N`) overrides it.
struct RepPolicy {
  int fixed_reps = 0;  // > 0: exactly this many
  int min_reps = 4;  // 4 against 4 is the fewest `lobench compare` can test (smallest p 0.029; 3 against 3: 0.1)
  int max_reps = 20;
  double min_time_s = 1.0;
  double max_time_s = 30.0;
  double cv_target = 0.05;
  bool enough(const Samples& s) const;
  // What a plan assumes before anything is timed (progress and ETA).
  int expected_reps() const { return fixed_reps > 0 ? fixed_reps : min_reps; }
  // Exactly `n` timed runs (what `--reps N` asks; a meter's fixed count).
  static RepPolicy fixed(int n) {
    RepPolicy p;
    p.fixed_reps = n;
    return p;
  }
};

// Runs `timed_run` warmup times (results dropped), then as the policy says; `timed_run` returns the
// seconds of one run (a steady clock around a CPU step, or a device's own clock).
Samples collect_samples(const std::function<double()>& timed_run, int warmup, const RepPolicy& policy);

// Process CPU seconds so far, all threads (CLOCK_PROCESS_CPUTIME_ID): beside wall time on a shared
// machine, where a step's wall time is mostly the other processes'.
double process_cpu_seconds();

// One contender of an interleaved comparison (time_interleaved): what it runs, and its samples.
struct Contender {
  std::string name;
  std::function<void()> run;
  Samples wall, cpu;  // per timed repetition: wall seconds and process CPU seconds (all threads)
};

// The contenders timed in one run, interleaved round-robin (each repetition runs every contender once,
// in order), so that a shared machine's drift slows all alike: the benches' comparisons. Repetitions
// follow collect_samples: `warmup` rounds dropped, then rounds until `policy` has enough of them (a
// round's time: the sum of its contenders' wall times).
void time_interleaved(std::vector<Contender>& contenders, int warmup, const RepPolicy& policy);

// Effective single-precision GEMM rate (GFLOP/s) of Eigen for [P×D]·[D×block] products, `threads`
// threads each computing their own: the product shape and threading every tiled variant is built from. Median of 5 samples of
// about 0.03 s each (calibrated per shape).
double measure_sgemm_gflops(int64_t P, int64_t D, int64_t block, int threads);

}  // namespace lobench
