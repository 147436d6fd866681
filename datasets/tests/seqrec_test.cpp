#include "datasets/seqrec.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

using testing::expect_parse_error;

SequenceDataset parse(const std::string& text) {
  std::istringstream in(text);
  return parse_sequences(in, "s.txt");
}

TEST(DatasetsSeqrec, ParsesUsersItemsAndCounts) {
  const SequenceDataset d = parse("1 1 2 3 4 5\n2 6 7\r\n\n7 9\n");
  EXPECT_EQ(d.num_users(), 3);
  EXPECT_EQ(d.num_items, 9);
  EXPECT_EQ(d.num_interactions(), 8);
  EXPECT_EQ(d.user_ids, (std::vector<int64_t>{1, 2, 7}));
  EXPECT_EQ(std::vector<int32_t>(d.sequence(1).begin(), d.sequence(1).end()), (std::vector<int32_t>{6, 7}));
}

TEST(DatasetsSeqrec, LeaveOneOutAsSasrecAndS3Rec) {
  const SequenceDataset d = parse("1 1 2 3 4 5\n2 6 7\n3 8 9 10\n");
  // User 0: 1 2 3 4 5 -> train 1 2 3, valid (1 2 3 -> 4), test (1 2 3 4 -> 5).
  const auto train = train_sequence(d, 0);
  EXPECT_EQ(std::vector<int32_t>(train.begin(), train.end()), (std::vector<int32_t>{1, 2, 3}));
  const auto v = valid_example(d, 0);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->target, 4);
  EXPECT_EQ(std::vector<int32_t>(v->history.begin(), v->history.end()), (std::vector<int32_t>{1, 2, 3}));
  const auto t = test_example(d, 0);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->target, 5);
  EXPECT_EQ(std::vector<int32_t>(t->history.begin(), t->history.end()), (std::vector<int32_t>{1, 2, 3, 4}));
  // User 1 has 2 items: training only.
  EXPECT_EQ(train_sequence(d, 1).size(), 2u);
  EXPECT_FALSE(valid_example(d, 1));
  EXPECT_FALSE(test_example(d, 1));
  // User 2 has exactly 3: train 8, valid 9, test 10.
  EXPECT_EQ(train_sequence(d, 2).size(), 1u);
  EXPECT_EQ(valid_example(d, 2)->target, 9);
  EXPECT_EQ(test_example(d, 2)->target, 10);
  const auto tests = test_examples(d);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].user, 0);
  EXPECT_EQ(tests[1].user, 2);
  EXPECT_EQ(valid_examples(d).size(), 2u);
}

TEST(DatasetsSeqrec, LeftPadKeepsTheMostRecentItems) {
  const std::vector<int32_t> h = {5, 6, 7};
  EXPECT_EQ(left_pad(h, 5), (std::vector<int32_t>{0, 0, 5, 6, 7}));
  EXPECT_EQ(left_pad(h, 2), (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(left_pad(h, 0), (std::vector<int32_t>{}));
  EXPECT_THROW(left_pad(h, -1), std::invalid_argument);
}

TEST(DatasetsSeqrec, Errors) {
  const auto err = [](const std::string& text, int64_t line, const std::string& fragment) {
    expect_parse_error([&] { parse(text); }, "s.txt", line, fragment);
  };
  err("1 1 2\nu2 3 4\n", 2, "expected a user id (integer) at the start of the line, got 'u2'");
  err("1 1 2\n2 3 x4\n", 2, "expected an item id (integer), got 'x4'");
  err("1 1 0 2\n", 1, "expected an item id in [1, 2^31) (0 is padding), got 0");
  err("1 1 -3\n", 1, "got -3");
  err("1 1 2\n2\n", 2, "expected at least one item after user id 2");
  err("1 1 2\n\n1 3\n", 3, "user 1 listed twice (first at line 1)");
  err("1 1 99999999999\n", 1, "expected an item id in [1, 2^31)");
}

}  // namespace
}  // namespace lobench::data
