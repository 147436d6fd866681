#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "datasets/seqrec_split.hpp"

namespace lobench::data {
namespace {

SequenceDataset dataset_of(const std::vector<std::vector<int32_t>>& users) {
  SequenceDataset d;
  for (size_t u = 0; u < users.size(); ++u) {
    for (int32_t i : users[u]) {
      d.items.push_back(i);
      d.num_items = std::max(d.num_items, i);
    }
    d.user_ids.push_back(int64_t(u) + 1);
    d.offsets.push_back(int64_t(d.items.size()));
  }
  return d;
}

std::vector<int32_t> iota_items(int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v[size_t(i)] = i + 1;  // item k at sequence index k − 1
  return v;
}

TEST(DatasetsSeqrecSplit, MultiLabelCutsAreThePapers) {
  // L = 8: a user of n = 40 items: test in 32 / out 8, dev in 23 / out 8, train in 14.
  const SequenceDataset d = dataset_of({iota_items(40), iota_items(26), iota_items(27)});
  const SeqSplit s = make_split(d, {SplitProtocol::multi_label, 8, 16});
  EXPECT_EQ(s.too_short, 1);  // 26 < 3·8 + 3
  ASSERT_EQ(s.test.count(), 2);
  // test: last 16 of the first 32 items, targets 33..40.
  for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(s.test.inputs[size_t(j)], 17 + j);
  for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(s.test.targets[size_t(l)], 33 + l);
  EXPECT_EQ(s.test.input_lengths[0], 32);
  // dev: first 40 − 17 = 23 items in, next 8 (24..31) out.
  EXPECT_EQ(s.dev.inputs[15], 23);
  for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(s.dev.targets[size_t(l)], 24 + l);
  // train: first 14 items, left-padded by 2; slot j >= 2 holds item j − 1 and predicts the next 8.
  EXPECT_EQ(s.train.inputs[0], 0);
  EXPECT_EQ(s.train.inputs[1], 0);
  EXPECT_EQ(s.train.weights[1], 0.0f);
  EXPECT_EQ(s.train.targets[size_t(1 * 8)], -1);
  for (int64_t j = 2; j < 16; ++j) {
    EXPECT_EQ(s.train.inputs[size_t(j)], j - 1);
    EXPECT_EQ(s.train.weights[size_t(j)], 1.0f);
    for (int64_t l = 0; l < 8; ++l) EXPECT_EQ(s.train.targets[size_t(j * 8 + l)], j + l) << j << " " << l;
  }
  // The last train target (item 22) is before the first dev target (24): nothing held out is trained on.
  EXPECT_EQ(s.train.targets[size_t(15 * 8 + 7)], 22);
  // The 27-item user (the shortest kept): train input of 1 item.
  EXPECT_EQ(s.train.users[1], 2);
  EXPECT_EQ(s.train.inputs[size_t(16 + 15)], 1);
  EXPECT_EQ(s.train.weights[size_t(16 + 14)], 0.0f);
}

TEST(DatasetsSeqrecSplit, LongInputsKeepTheirLastNItems) {
  const SequenceDataset d = dataset_of({iota_items(100)});
  const SeqSplit s = make_split(d, {SplitProtocol::multi_label, 2, 4});
  // train input = first 100 − 8 = 92 items: window 89..92, each predicting the next 2.
  EXPECT_EQ(s.train.inputs, (std::vector<int32_t>{89, 90, 91, 92}));
  EXPECT_EQ(s.train.targets, (std::vector<int32_t>{90, 91, 91, 92, 92, 93, 93, 94}));
  EXPECT_EQ(s.test.inputs, (std::vector<int32_t>{95, 96, 97, 98}));
  EXPECT_EQ(s.test.targets, (std::vector<int32_t>{99, 100}));
}

TEST(DatasetsSeqrecSplit, LeaveOneOutIsSasRecs) {
  const SequenceDataset d = dataset_of({iota_items(6), iota_items(3)});
  const SeqSplit s = make_split(d, {SplitProtocol::leave_one_out, 1, 5});
  EXPECT_EQ(s.too_short, 1);
  EXPECT_EQ(s.test.inputs, (std::vector<int32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(s.test.targets, (std::vector<int32_t>{6}));
  EXPECT_EQ(s.dev.inputs, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.dev.targets, (std::vector<int32_t>{5}));
  // The training sequence is items 1..4: inputs 1..3 predict 2..4.
  EXPECT_EQ(s.train.inputs, (std::vector<int32_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(s.train.targets, (std::vector<int32_t>{-1, -1, 2, 3, 4}));
  EXPECT_EQ(s.train.weights, (std::vector<float>{0, 0, 1, 1, 1}));
}

TEST(DatasetsSeqrecSplit, RejectsBadOptions) {
  const SequenceDataset d = dataset_of({iota_items(6)});
  EXPECT_THROW(make_split(d, {SplitProtocol::leave_one_out, 2, 5}), std::invalid_argument);
  EXPECT_THROW(make_split(d, {SplitProtocol::multi_label, 0, 5}), std::invalid_argument);
  EXPECT_THROW(make_split(d, {SplitProtocol::multi_label, 1, 0}), std::invalid_argument);
  EXPECT_THROW(parse_split_protocol("kfold"), std::invalid_argument);
}

}  // namespace
}  // namespace lobench::data

namespace lobench::data {
namespace {

TEST(DatasetsSeqrecSplit, RealLastFmUsersAreKeptOrCounted) {
  const std::string path = std::string(LOBENCH_SHARED_DATASETS) + "/seqrec/LastFM.txt";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is absent";
  const SequenceDataset d = read_sequences(path);
  const SeqSplit s = make_split(d, {SplitProtocol::multi_label, 8, 50});
  int64_t short_users = 0;
  for (int64_t u = 0; u < d.num_users(); ++u) short_users += int64_t(d.sequence(u).size()) < 27;
  EXPECT_EQ(s.too_short, short_users);
  EXPECT_EQ(s.train.count() + s.too_short, d.num_users());
  EXPECT_EQ(s.test.count(), s.train.count());
  for (int32_t t : s.test.targets) EXPECT_TRUE(t >= 1 && t <= d.num_items);
}

}  // namespace
}  // namespace lobench::data
