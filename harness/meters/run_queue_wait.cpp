#include "harness/meters/run_queue_wait.hpp"

#include <dirent.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

namespace lobench::meters {

double run_queue_wait_seconds() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return std::numeric_limits<double>::quiet_NaN();
  double waited_ns = 0;
  int read = 0;
  while (const dirent* e = readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    double on_cpu_ns = 0, run_queue_ns = 0;
    if (f >> on_cpu_ns >> run_queue_ns) {  // a thread that ended meanwhile is simply not counted
      waited_ns += run_queue_ns;
      ++read;
    }
  }
  closedir(tasks);
  return read > 0 ? 1e-9 * waited_ns : std::numeric_limits<double>::quiet_NaN();
}

double run_queue_wait_fraction(double waited_s, double wall_s, int threads) {
  if (!(waited_s >= 0) || !(wall_s > 0) || threads < 1) return std::numeric_limits<double>::quiet_NaN();
  return waited_s / (wall_s * threads);
}

}  // namespace lobench::meters
