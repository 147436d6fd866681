#include "variants/timing.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

namespace lobench {

namespace {
double sorted_at(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t i = size_t(pos);
  const double f = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}
}  // namespace

double Samples::median() const { return sorted_at(seconds, 0.5); }
double Samples::min() const { return seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end()); }
double Samples::max() const { return seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end()); }
double Samples::total() const {
  double t = 0;
  for (double x : seconds) t += x;
  return t;
}
double Samples::cv() const {
  const size_t n = seconds.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0;
  for (double x : seconds) mean += x / double(n);
  double var = 0;
  for (double x : seconds) var += (x - mean) * (x - mean) / double(n - 1);
  return std::sqrt(var) / mean;
}

double seconds_of(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

bool RepPolicy::enough(const Samples& s) const {
  const int n = int(s.seconds.size());
  if (fixed_reps > 0) return n >= fixed_reps;
  if (n < min_reps) return false;
  if (n >= max_reps) return true;
  const double total = s.total();
  if (total >= max_time_s) return true;
  return total >= min_time_s && !(s.cv() > cv_target);
}

int calls_per_sample(double one_call_s, double target_s, int max_calls) {
  return int(std::clamp(std::ceil(target_s / std::max(one_call_s, 1e-9)), 1.0, double(std::max(max_calls, 1))));
}

Samples collect_samples(const std::function<double()>& timed_run, int warmup, const RepPolicy& policy) {
  for (int i = 0; i < warmup; ++i) timed_run();
  Samples s;
  while (!policy.enough(s)) s.seconds.push_back(timed_run());
  return s;
}

void time_interleaved(std::vector<Contender>& contenders, int warmup, const RepPolicy& policy) {
  int round = 0;
  collect_samples(
      [&] {
        const bool timed = round++ >= warmup;
        double total = 0;
        for (Contender& c : contenders) {
          const double c0 = process_cpu_seconds();
          const double w = seconds_of(c.run);
          const double cpu = process_cpu_seconds() - c0;
          total += w;
          if (timed) {
            c.wall.seconds.push_back(w);
            c.cpu.seconds.push_back(cpu);
          }
        }
        return total;
      },
      warmup, policy);
}

}  // namespace lobench
