// sweep/rank_agreement.hpp: ranks started with different options (issue 37: different --steps hung,
// different --D corrupted the heap, different --lr, --seed or --dataset trained to exit 0) refuse
// together, every rank with the same message naming the first option that differs and its values. Two
// ranks are two threads here, meeting at every collective as MPI ranks would (a mismatched count of
// collectives would hang the test, which is the bug this check prevents).
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "harness/sweep/rank_agreement.hpp"
#include "harness/sweep/sharded_rows.hpp"

namespace lobench::sweep {
namespace {

// Two ranks' collectives: each call waits for the other rank's, then returns rank 0's value (agree) or
// the larger (largest).
class TwoRanks {
 public:
  int64_t meet(int rank, int64_t v, bool agree) {
    std::unique_lock lock(m_);
    value_[rank] = v;
    const uint64_t round = round_;
    if (++arrived_ == 2) {
      arrived_ = 0;
      rank0_ = value_[0];
      max_ = std::max(value_[0], value_[1]);
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    ++collectives_[rank];
    return agree ? rank0_ : max_;
  }
  int64_t collectives(int rank) const { return collectives_[rank]; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t round_ = 0;
  int64_t value_[2]{}, rank0_ = 0, max_ = 0, collectives_[2]{};
};

struct Rank {
  TwoRanks* world;
  int rank;
  int64_t agree(int64_t v) const { return world->meet(rank, v, true); }
  int64_t largest(int64_t v) const { return world->meet(rank, v, false); }
};

// Each rank's message ("" when it did not throw).
std::pair<std::string, std::string> run_two(const Settings& rank0, const Settings& rank1, TwoRanks& world) {
  std::string e0, e1;
  const auto body = [&world](int r, const Settings& s, std::string& e) {
    try {
      const Rank me{&world, r};
      require_same_settings(me, s, "test --data-parallel");
    } catch (const std::invalid_argument& x) {
      e = x.what();
    }
  };
  std::thread t1(body, 1, std::cref(rank1), std::ref(e1));
  body(0, rank0, e0);
  t1.join();
  return {e0, e1};
}

TEST(RankAgreement, RanksStartedAlikeGoOnAfterTwoCollectives) {
  TwoRanks world;
  const Settings s = {{"--steps", "3"}, {"--D", "8"}, {"data-sha256", "ab12"}};
  const auto [e0, e1] = run_two(s, s, world);
  EXPECT_EQ(e0, "");
  EXPECT_EQ(e1, "");
  EXPECT_EQ(world.collectives(0), 2);  // the digest: agree, then largest
}

TEST(RankAgreement, EveryRankRefusesNamingTheFirstSettingThatDiffersWithBothValues) {
  TwoRanks world;
  const Settings rank0 = {{"--dataset", "seq.txt"}, {"--steps", "3"}, {"--D", "8"}, {"--lr", "0.001"}};
  Settings rank1 = rank0;
  rank1[1].value = "5";
  rank1[3].value = "0.002";
  const auto [e0, e1] = run_two(rank0, rank1, world);
  EXPECT_EQ(e0, e1);  // the same line on every rank
  EXPECT_NE(e0.find("different options"), std::string::npos) << e0;
  EXPECT_NE(e0.find("--steps ('3' on rank 0, '5' on another rank)"), std::string::npos) << e0;
  EXPECT_EQ(e0.find("--lr"), std::string::npos) << "only the first difference: " << e0;
}

TEST(RankAgreement, LongValuesAndListsOfAnotherLengthAreNamedWhole) {
  {
    TwoRanks world;
    const std::string a(37, 'a'), b = std::string(36, 'a') + "b";  // over several 8-byte words
    const auto [e0, e1] = run_two({{"--x", "1"}, {"data-sha256", a}}, {{"--x", "1"}, {"data-sha256", b}}, world);
    EXPECT_EQ(e0, e1);
    EXPECT_NE(e0.find("data-sha256 ('" + a + "' on rank 0, '" + b + "' on another rank)"), std::string::npos) << e0;
  }
  {
    TwoRanks world;  // rank 1 has one more option: named, with rank 0's "nothing there"
    const auto [e0, e1] = run_two({{"--x", "1"}}, {{"--x", "1"}, {"--weighted", ""}}, world);
    EXPECT_EQ(e0, e1);
    EXPECT_NE(e0.find("'(no option)' on rank 0 where another rank has '--weighted'"), std::string::npos) << e0;
  }
}

// `lobench run --shard` and `train-xmc --shard labels` compare their command lines through the same
// check (it replaced a fingerprint that said only "different options").
TEST(RankAgreement, CommandLinesAreComparedOptionByOption) {
  const Settings s = command_line_settings("lobench run --reps 3 --V 64,96 --weighted --shard vocab --lr -1e-3");
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].name, "command");
  EXPECT_EQ(s[0].value, "lobench run");
  EXPECT_EQ(s[2].name, "--V");
  EXPECT_EQ(s[2].value, "64,96");
  EXPECT_EQ(s[3].value, "");  // a flag
  EXPECT_EQ(s[5].value, "-1e-3");  // a negative number is a value, not an option
  TwoRanks world;
  std::string e0, e1;
  std::thread t1([&] {
    try {
      require_same_options(Rank{&world, 1}, "lobench run --reps 1 --shard vocab");  // a const Sharded&
    } catch (const std::invalid_argument& x) {
      e1 = x.what();
    }
  });
  try {
    require_same_options(Rank{&world, 0}, "lobench run --reps 3 --shard vocab");
  } catch (const std::invalid_argument& x) {
    e0 = x.what();
  }
  t1.join();
  EXPECT_EQ(e0, e1);
  EXPECT_NE(e0.find("--shard: the ranks were started with different options"), std::string::npos) << e0;
  EXPECT_NE(e0.find("--reps ('3' on rank 0, '1' on another rank)"), std::string::npos) << e0;
}

}  // namespace
}  // namespace lobench::sweep
