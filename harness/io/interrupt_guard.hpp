// Ctrl-C (SIGINT), SIGTERM (what Slurm sends before its SIGKILL) and SIGHUP (a closed terminal) ask a
// command that writes a run file to stop at the next row boundary instead of killing it: a process
// killed in the middle of an HDF5 write can leave a file that no reader opens ("addr overflow", "bad
// local heap signature"), and with --resume the file holding hours of rows. While an InterruptGuard is
// installed the first such signal only records itself (interrupt_signal()); the command checks between
// rows, closes its file with every finished row kept, and throws Interrupted, which main() turns into
// the message and exit status 128 + signal (130 for SIGINT, 143 for SIGTERM: what a shell reports for a
// process the signal killed). A second signal means the user wants out now: the process then dies of
// it at once, unless a WriteSection is open (a write to a run file, up to its flush), which it lets
// finish first, so the file on disk is the consistent one of the last flush. SIGKILL and power loss
// cannot be caught: harness/io/README.md says what survives them.
#pragma once

#include <stdexcept>
#include <string>

namespace lobench::io {

// Installs the handlers of SIGINT, SIGTERM and SIGHUP (a signal the process ignores, e.g. SIGHUP
// under nohup, stays ignored) and restores the previous actions when destroyed. Guards nest; the
// recorded signal is cleared when the outermost one is installed.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// The first of SIGINT, SIGTERM, SIGHUP received while a guard is installed; 0 if none.
int interrupt_signal();

// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
std::string signal_name(int signal);

// A write to a run file, from its first change to the flush that ends it. A second signal that
// arrives inside one ends the process when the outermost section closes, not in the middle of it.
class WriteSection {
 public:
  WriteSection();
  ~WriteSection();
  WriteSection(const WriteSection&) = delete;
  WriteSection& operator=(const WriteSection&) = delete;
};

// What a command throws once it has stopped early for `signal` and closed its files; what() is
// "interrupted by SIGNAL: <detail>" (e.g. "3 of 8 rows kept in run.h5; continue with --resume").
struct Interrupted : std::runtime_error {
  Interrupted(int signal, const std::string& detail);
  int signal;
  int exit_code() const { return 128 + signal; }
};

}  // namespace lobench::io
