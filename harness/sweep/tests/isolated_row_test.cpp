// The message an isolated row's child sends its parent (harness/sweep/isolated_row.hpp): the row, its
// samples and the child's own run-queue wait come back whole, so that the parent flags the row `busy` as
// it would an in-process row (the wait once stayed in the child: its note reached the reason, the flag
// never did); a failed row without samples comes back too; a message cut short is no row.
#include "harness/sweep/isolated_row.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness/sweep/measure_row.hpp"

namespace lobench::sweep {
namespace {

std::string sent_bytes(const io::ResultRow& row, const std::vector<double>& samples, double cpu_wait) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  IsolatedRequest r;
  r.fd = fds[1];
  EXPECT_TRUE(send_row(r, row, samples, cpu_wait));  // closes the write end
  std::string bytes;
  char chunk[4096];
  for (ssize_t n; (n = ::read(fds[0], chunk, sizeof chunk)) > 0;) bytes.append(chunk, size_t(n));
  ::close(fds[0]);
  return bytes;
}

TEST(IsolatedRow, TheChildsCpuWaitComesBackWithItsRowAndFlagsItBusy) {
  io::ResultRow row;
  row.status.set("ok");
  row.loss = 0.25;
  const std::string bytes = sent_bytes(row, {1e-3, 2e-3, 3e-3}, 0.375);
  IsolatedResult got;
  ASSERT_TRUE(decode_row_message(bytes, got));
  EXPECT_EQ(got.row.status.str(), "ok");
  EXPECT_EQ(got.row.loss, 0.25);
  EXPECT_EQ(got.samples, (std::vector<double>{1e-3, 2e-3, 3e-3}));
  EXPECT_EQ(got.cpu_wait_fraction, 0.375);
  EXPECT_NE(trust_flags(got.row, got.cpu_wait_fraction).find("busy"), std::string::npos);
}

// A failed row has no samples: its message decodes without handing memcpy a null pointer (undefined
// behaviour that UndefinedBehaviorSanitizer reported in the parent, ending the sweep at the first
// failed isolated row of a sanitizer build).
TEST(IsolatedRow, AFailedRowWithNoSamplesComesBackWhole) {
  io::ResultRow row;
  row.status.set("failed");
  row.reason.set("the variant threw");
  const std::string bytes = sent_bytes(row, {}, io::kNotMeasured);
  IsolatedResult got;
  ASSERT_TRUE(decode_row_message(bytes, got));
  EXPECT_EQ(got.row.status.str(), "failed");
  EXPECT_EQ(got.row.reason.str(), "the variant threw");
  EXPECT_TRUE(got.samples.empty());
}

TEST(IsolatedRow, AMessageCutShortIsNoRow) {
  const std::string bytes = sent_bytes(io::ResultRow{}, {1e-3}, io::kNotMeasured);
  IsolatedResult got;
  ASSERT_TRUE(decode_row_message(bytes, got));
  for (size_t cut : {size_t(0), size_t(8), bytes.size() - 16, bytes.size() - 1})
    EXPECT_FALSE(decode_row_message(bytes.substr(0, cut), got)) << cut;
  EXPECT_FALSE(decode_row_message(bytes + "x", got));
}

}  // namespace
}  // namespace lobench::sweep
