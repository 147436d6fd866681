#include "harness/sweep/isolated_row.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "harness/io/interrupt_guard.hpp"
#include "harness/meters/peak_rss.hpp"
#include "harness/system_memory.hpp"

extern char** environ;

namespace lobench::sweep {
namespace {

constexpr const char* kRequestVariable = "LOBENCH_ISOLATED_ROW";
constexpr int kChildFd = 3;  // the result pipe's number in the child
// The message: kMagic, the row's size, the row, the sample count, the samples, the CPU-wait fraction,
// kEnd. Both ends are the same program (the child is this binary or this extension started again), so the
// row goes as its bytes.
constexpr char kMagic[8] = {'L', 'O', 'B', 'R', 'O', 'W', '2', 0};
constexpr char kEnd[8] = {'L', 'O', 'B', 'E', 'N', 'D', '1', 0};
static_assert(std::is_trivially_copyable_v<io::ResultRow>, "a row goes through the pipe as its bytes");

// What an isolated row's process may map beyond --mem-limit: the runtime around the variant.
constexpr int64_t kRuntimeMargin = int64_t(1) << 30;
// How long a child that sent its row may take to exit before it is killed (its row is kept).
constexpr double kExitGraceSeconds = 10;

std::vector<std::string>& command_storage() {
  static std::vector<std::string> argv;
  return argv;
}

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  return fmt::format("SIG{} ({})", abbrev ? abbrev : std::to_string(sig).c_str(), what ? what : "unknown signal");
}

// Why a child that sent no whole row ended as it did.
std::string death_reason(int status, const rusage& usage) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string why = "its process was killed by " + signal_text(sig);
    if (sig == SIGKILL)
      why += fmt::format(" at a peak resident set of {}: out of memory (the kernel's OOM killer) or killed from outside",
                         format_bytes(double(usage.ru_maxrss) * 1024));
    return why + " before its row was complete";
  }
  if (WIFEXITED(status))
    return fmt::format("its process exited with status {} before its row was complete (exit(), sys.exit() or "
                       "os._exit() in the variant, or an error printed above)",
                       WEXITSTATUS(status));
  return fmt::format("its process ended (wait status {}) before its row was complete", status);
}

// posix_spawn's arguments, built before the child exists.
struct SpawnPlan {
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp;
  SpawnPlan(const std::vector<std::string>& cmd, const IsolatedRequest& r) {
    const std::string prefix = std::string(kRequestVariable) + "=";
    for (char** e = environ; e && *e; ++e)
      if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env_strings.emplace_back(*e);
    env_strings.push_back(fmt::format("{}{} {} {} {} {}", prefix, r.point_index, int(r.want_reference), r.mem_limit,
                                      kChildFd, ::getpid()));
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
};

pid_t spawn_child(const IsolatedRequest& r, int write_fd) {
  const auto& cmd = row_command();
  SpawnPlan plan(cmd, r);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_fd, kChildFd);  // clears close-on-exec on the copy
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);  // stdout is the parent's table
  posix_spawn_file_actions_addclosefrom_np(&actions, kChildFd + 1);  // the run file's descriptor, among others
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills what it started too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, cmd[0].c_str(), &actions, &attr, plan.argv.data(), plan.envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) throw std::runtime_error(fmt::format("cannot start the row's process {}: {}", cmd[0], std::strerror(err)));
  return pid;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

enum class PipeEnd { eof, deadline, interrupted };

// How often the parent, waiting for a row, looks whether Ctrl-C or SIGTERM came (a signal that arrives
// just before poll() does not interrupt it).
constexpr int kSignalCheckMs = 100;

// Reads the pipe to its end, the deadline (timeout_s 0: none) or a signal to this process
// (io::interrupt_signal). An in-process row finishes before the sweep stops; a row in a child is stopped
// at once instead, since it may never finish (a plug-in that hangs with no --row-timeout), and killing a
// child loses nothing the run file holds: --resume makes the row again.
PipeEnd read_until_eof(int fd, double timeout_s, std::string& bytes) {
  const auto t0 = std::chrono::steady_clock::now();
  char chunk[1 << 16];
  for (;;) {
    if (io::interrupt_signal() != 0) return PipeEnd::interrupted;
    int wait_ms = kSignalCheckMs;
    if (timeout_s > 0) {
      const double left = timeout_s - seconds_since(t0);
      if (left <= 0) return PipeEnd::deadline;
      wait_ms = int(std::min(left * 1000 + 1, double(kSignalCheckMs)));
    }
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;  // (the loop's signal check decides)
    if (n == 0) continue;                   // the loop's deadline and signal checks decide
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got > 0) bytes.append(chunk, size_t(got));
    else if (got == 0) return PipeEnd::eof;
    else if (errno != EINTR) return PipeEnd::eof;
  }
}

// Waits for the child for at most `grace_s` seconds, then kills its group. Returns its wait status.
int reap(pid_t pid, double grace_s, rusage& usage, bool& killed) {
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  killed = false;
  for (;;) {
    const pid_t got = ::wait4(pid, &status, WNOHANG, &usage);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) break;
    if (!killed && seconds_since(t0) > grace_s) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(-pid, SIGKILL);  // whatever it started and left behind
  return status;
}

// RLIMIT_DATA at what this process maps now plus `more` (unchanged where that is above the hard limit,
// or unknown).
void limit_data_mappings(rlim_t more) {
  const int64_t mapped = meters::mapped_data_bytes();
  rlimit lim{};
  if (mapped < 0 || ::getrlimit(RLIMIT_DATA, &lim) != 0) return;
  if (rlim_t(mapped) > RLIM_INFINITY - 1 - more) return;
  const rlim_t cap = rlim_t(mapped) + more;
  if (lim.rlim_max != RLIM_INFINITY && cap >= lim.rlim_max) return;
  lim.rlim_cur = cap;
  ::setrlimit(RLIMIT_DATA, &lim);
}

}  // namespace

void set_row_command(std::vector<std::string> argv) { command_storage() = std::move(argv); }
const std::vector<std::string>& row_command() { return command_storage(); }

std::optional<IsolatedRequest> isolated_row_request() {
  const char* value = std::getenv(kRequestVariable);
  if (!value) return std::nullopt;
  std::istringstream in(value);
  IsolatedRequest r;
  int want = 0;
  long parent = 0;
  if (!(in >> r.point_index >> want >> r.mem_limit >> r.fd >> parent) || r.point_index < 0 || r.fd < 0)
    throw std::invalid_argument(fmt::format("{}='{}': not a request of lobench run --isolate", kRequestVariable, value));
  r.want_reference = want != 0;
  ::unsetenv(kRequestVariable);
  // Dies with the parent (a parent killed by SIGKILL leaves no row running on), and maps no more than
  // it maps now plus the run's memory limit plus kRuntimeMargin (the interpreter, its frameworks, thread
  // stacks: not the row's, and not in its prediction): an allocation past it fails in the variant
  // (std::bad_alloc, MemoryError) instead of waking the OOM killer on a shared machine. What is mapped
  // already counts against RLIMIT_DATA too: a limit below it (a sanitizer build reserves terabytes of
  // shadow memory before main) would fail every later mapping, the row's first allocation among them.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != pid_t(parent)) std::_Exit(1);  // the parent died before the line above
  if (r.mem_limit > 0) limit_data_mappings(rlim_t(r.mem_limit) + rlim_t(kRuntimeMargin));
  return r;
}

bool decode_row_message(const std::string& bytes, IsolatedResult& r) {
  size_t at = 0;
  auto take = [&](void* dst, size_t n) {
    if (bytes.size() - at < n) return false;
    if (n == 0) return true;  // dst may be null (no samples): memcpy's arguments must not be, even for 0 bytes
    std::memcpy(dst, bytes.data() + at, n);
    at += n;
    return true;
  };
  char magic[8];
  uint64_t row_size = 0, n = 0;
  if (!take(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return false;
  if (!take(&row_size, 8) || row_size != sizeof(io::ResultRow) || !take(&r.row, sizeof(io::ResultRow))) return false;
  if (!take(&n, 8) || n > (bytes.size() - at) / sizeof(double)) return false;
  r.samples.resize(n);
  if (!take(r.samples.data(), n * sizeof(double)) || !take(&r.cpu_wait_fraction, sizeof(double))) return false;
  if (!take(magic, 8) || std::memcmp(magic, kEnd, 8) != 0) return false;
  return at == bytes.size();
}

bool send_row(const IsolatedRequest& r, const io::ResultRow& row, const std::vector<double>& samples,
              double cpu_wait_fraction) {
  std::string msg(kMagic, 8);
  const uint64_t row_size = sizeof(io::ResultRow), n = samples.size();
  msg.append(reinterpret_cast<const char*>(&row_size), 8);
  msg.append(reinterpret_cast<const char*>(&row), sizeof row);
  msg.append(reinterpret_cast<const char*>(&n), 8);
  msg.append(reinterpret_cast<const char*>(samples.data()), n * sizeof(double));
  msg.append(reinterpret_cast<const char*>(&cpu_wait_fraction), sizeof(double));
  msg.append(kEnd, 8);
  const bool ok = write_all(r.fd, msg.data(), msg.size());
  ::close(r.fd);
  return ok;
}

IsolatedResult run_isolated(const IsolatedRequest& r, double timeout_s) {
  if (row_command().empty()) throw std::logic_error("run_isolated: no command to start the row with (set_row_command)");
  if (const int sig = io::interrupt_signal()) {  // (it came while the row's yardstick was measured: start nothing)
    IsolatedResult stopped;
    stopped.stopped_by = sig;
    return stopped;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
  if (fds[1] == kChildFd) {  // dup2 onto itself would keep close-on-exec: move it first
    const int moved = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kChildFd + 1);
    ::close(fds[1]);
    fds[1] = moved;
  }
  pid_t pid = -1;
  try {
    pid = spawn_child(r, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  IsolatedResult result;
  std::string bytes;
  const PipeEnd end = read_until_eof(fds[0], timeout_s, bytes);
  const bool in_time = end == PipeEnd::eof;
  ::close(fds[0]);
  rusage usage{};
  bool killed = false;
  const int status = reap(pid, in_time ? kExitGraceSeconds : 0, usage, killed);
  // A whole row that came before a signal is kept (the sweep stops after it); one that did not come while
  // this process was signalled is no failure of the variant's: the child was stopped, by us or by the same
  // signal (Slurm and systemd send SIGTERM to every process of the job), and --resume makes it again.
  result.complete = end != PipeEnd::deadline && decode_row_message(bytes, result);
  if (!result.complete && io::interrupt_signal() != 0) {
    result.stopped_by = io::interrupt_signal();
  } else if (!in_time && !result.complete) {
    result.failure = fmt::format("no result within --row-timeout {:g} s: its process was killed", timeout_s);
  } else if (!result.complete) {
    result.failure = death_reason(status, usage);
  } else if (killed && in_time) {
    result.note = fmt::format("its process sent its row but did not exit within {:g} s and was killed", kExitGraceSeconds);
  } else if (!killed && WIFSIGNALED(status)) {  // (not one we killed, after its row came, for the signal)
    result.note = "its process sent its row, then died of " + signal_text(WTERMSIG(status));
  }
  return result;
}

}  // namespace lobench::sweep
