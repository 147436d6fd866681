#include "harness/io/interrupt_guard.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace lobench::io {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = 3;

// Shared with the handler, which may run on any thread (OpenMP workers too): lock-free atomics only
// (async-signal-safe), no allocation, no stdio.
std::atomic<int> first_signal{0};  // what interrupt_signal() reports
std::atomic<int> insisted{0};      // a later signal: die of it once no write is open
// Open WriteSections, or kDying once the handler has claimed "no write open" to end the process: a
// write may not start after that claim, so the process never dies between a write's first change and
// its flush because of a second signal.
std::atomic<int> writing{0};
constexpr int kDying = 1 << 30;
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

int guards = 0;  // installed guards (touched by the main thread only)
struct sigaction previous[kCount];
bool installed[kCount] = {};

[[noreturn]] void die_of(int sig) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // in the handler: pending, as the handler runs with sig blocked
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // delivered here at the latest: the default action ends the process
  _exit(128 + sig);                             // not reached
}

// One fixed line per signal (no formatting in a handler).
const char* note(int sig) {
  switch (sig) {
    // (each command's boundary, a row, an epoch, a step, before merge writes: harness/io/README.md)
    case SIGINT: return "\nlobench: SIGINT: stopping at the next boundary, the files closed (Ctrl-C again: quit at once)\n";
    case SIGTERM: return "\nlobench: SIGTERM: stopping at the next boundary, the files closed\n";
    default: return "\nlobench: SIGHUP: stopping at the next boundary, the files closed\n";
  }
}

void on_signal(int sig) {
  const int saved_errno = errno;
  int none = 0;
  if (first_signal.compare_exchange_strong(none, sig)) {
    const char* text = note(sig);
    [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, text, std::strlen(text));
    errno = saved_errno;
    return;
  }
  insisted.store(sig);
  int idle = 0;
  if (writing.compare_exchange_strong(idle, kDying)) die_of(sig);
  errno = saved_errno;  // a write is open: ~WriteSection ends the process when it closes
}

}  // namespace

InterruptGuard::InterruptGuard() {
  if (guards++ > 0) return;
  first_signal.store(0);
  insisted.store(0);
  struct sigaction action{};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read or write the signal lands in carries on
  for (int i = 0; i < kCount; ++i) {
    installed[i] = false;
    if (sigaction(kSignals[i], nullptr, &previous[i]) != 0 || previous[i].sa_handler == SIG_IGN) continue;
    installed[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

InterruptGuard::~InterruptGuard() {
  if (--guards > 0) return;
  for (int i = 0; i < kCount; ++i)
    if (installed[i]) sigaction(kSignals[i], &previous[i], nullptr);
}

int interrupt_signal() { return first_signal.load(); }

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(sig);
  }
}

WriteSection::WriteSection() {
  int open = writing.load();
  for (;;) {
    if (open & kDying) {  // the handler is ending the process: wait for it rather than start a write
      const timespec pause{0, 1000000};
      nanosleep(&pause, nullptr);
      open = writing.load();
      continue;
    }
    if (writing.compare_exchange_weak(open, open + 1)) return;
  }
}

WriteSection::~WriteSection() {
  if (writing.fetch_sub(1) != 1) return;
  if (const int sig = insisted.load()) {
    int idle = 0;
    if (writing.compare_exchange_strong(idle, kDying)) die_of(sig);
  }
}

Interrupted::Interrupted(int sig, const std::string& detail)
    : std::runtime_error("interrupted by " + signal_name(sig) + ": " + detail), signal(sig) {}

}  // namespace lobench::io
