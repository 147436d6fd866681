// The signal handling of harness/io/interrupt_guard.hpp, in this process (a first signal only recorded)
// and in forked children (a second signal ends the process at once, or only once the write it lands
// in is done). The commands built on it are tested end to end in interrupt_test.py.
#include "harness/io/interrupt_guard.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace lobench::io {
namespace {

TEST(InterruptGuard, FirstSignalIsRecordedNotFatal) {
  {
    const InterruptGuard guard;
    EXPECT_EQ(interrupt_signal(), 0);
    raise(SIGTERM);
    EXPECT_EQ(interrupt_signal(), SIGTERM);
  }
  const InterruptGuard again;  // a new outermost guard starts clean
  EXPECT_EQ(interrupt_signal(), 0);
}

TEST(InterruptGuard, RestoresThePreviousActions) {
  struct sigaction ignore{}, seen{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction before{};
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &before), 0);
  {
    const InterruptGuard guard;
    raise(SIGHUP);  // ignored before (as under nohup): stays ignored, not recorded
    EXPECT_EQ(interrupt_signal(), 0);
    sigaction(SIGINT, nullptr, &seen);
    EXPECT_NE(seen.sa_handler, SIG_DFL);
  }
  sigaction(SIGHUP, nullptr, &seen);
  EXPECT_EQ(seen.sa_handler, SIG_IGN);
  sigaction(SIGINT, nullptr, &seen);
  EXPECT_EQ(seen.sa_handler, SIG_DFL);
  sigaction(SIGHUP, &before, nullptr);
}

TEST(InterruptGuard, ExitCodesAndMessages) {
  const Interrupted e(SIGTERM, "3 of 8 rows kept in x.h5; continue with --resume");
  EXPECT_EQ(e.exit_code(), 143);
  EXPECT_EQ(Interrupted(SIGINT, "").exit_code(), 130);
  EXPECT_EQ(std::string(e.what()), "interrupted by SIGTERM: 3 of 8 rows kept in x.h5; continue with --resume");
  EXPECT_EQ(signal_name(SIGHUP), "SIGHUP");
}

// Runs `body` in a child with a guard installed; returns the child's wait status and what it wrote.
template <typename Body>
std::pair<int, std::string> in_child(Body body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const InterruptGuard guard;
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[64];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {status, text};
}

void say(int fd, const char* s) { [[maybe_unused]] const ssize_t n = write(fd, s, std::char_traits<char>::length(s)); }

TEST(InterruptGuard, SecondSignalOutsideAWriteEndsTheProcessAtOnce) {
  const auto [status, text] = in_child([](int out) {
    raise(SIGINT);
    say(out, "asked;");
    raise(SIGINT);
    say(out, "still alive;");
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_EQ(text, "asked;");
}

TEST(InterruptGuard, SecondSignalInsideAWriteWaitsForItsEnd) {
  const auto [status, text] = in_child([](int out) {
    raise(SIGTERM);
    {
      const WriteSection outer;
      {
        const WriteSection inner;
        raise(SIGTERM);
        say(out, "inner done;");
      }
      say(out, "outer done;");
    }
    say(out, "after the write;");
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(text, "inner done;outer done;");
}

TEST(InterruptGuard, OneSignalLetsTheCommandFinishNormally) {
  const auto [status, text] = in_child([](int out) {
    {
      const WriteSection w;
      raise(SIGHUP);
    }
    if (interrupt_signal() == SIGHUP) say(out, "stopping cleanly;");
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(text, "stopping cleanly;");
}

}  // namespace
}  // namespace lobench::io
