// Sequential-recommendation data, one user per line (S3-Rec / SASRec preprocessing):
//
//   USER_ID ITEM ITEM ITEM ...       items in time order, 1-based ids; 0 is reserved for padding
//
// and the leave-one-out protocol of SASRec and S3-Rec: for a user with n >= 3 items the last item is
// the test target (history: the n-1 items before it), the second-to-last the validation target
// (history: the n-2 items before it), and the first n-2 items are the training sequence (next-item
// pairs (s[t], s[t+1]) for t < n-3). Users with fewer than 3 items are training-only (SASRec's rule);
// the S3-Rec files are 5-core filtered, so every user there has >= 5.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lobench::data {

struct SequenceDataset {
  std::vector<int64_t> offsets{0};  // [users + 1]
  std::vector<int32_t> items;       // all sequences back to back, ids in [1, num_items]
  std::vector<int64_t> user_ids;    // as written in the file, [users]
  int32_t num_items = 0;            // largest item id (the vocabulary is num_items + 1 with padding 0)

  int64_t num_users() const { return static_cast<int64_t>(user_ids.size()); }
  int64_t num_interactions() const { return static_cast<int64_t>(items.size()); }
  std::span<const int32_t> sequence(int64_t u) const {
    return {items.data() + offsets[u], static_cast<size_t>(offsets[u + 1] - offsets[u])};
  }
};

// Throws ParseError (file, line, what was expected) for a non-integer token, an item id < 1 or >= 2^31,
// a user without items, a user id listed twice; std::runtime_error when the file cannot be opened.
// Blank lines are skipped.
SequenceDataset read_sequences(const std::filesystem::path& path);
SequenceDataset parse_sequences(std::istream& in, const std::string& source);

// Leave-one-out split (see the top of this file). u is the row index (0 .. num_users-1).
struct NextItemExample {
  int64_t user = 0;                  // row index
  std::span<const int32_t> history;  // items before the target, oldest first
  int32_t target = 0;
};

std::span<const int32_t> train_sequence(const SequenceDataset& d, int64_t u);
std::optional<NextItemExample> valid_example(const SequenceDataset& d, int64_t u);
std::optional<NextItemExample> test_example(const SequenceDataset& d, int64_t u);
// All users that have one, in user order.
std::vector<NextItemExample> valid_examples(const SequenceDataset& d);
std::vector<NextItemExample> test_examples(const SequenceDataset& d);

// The model input of SASRec/S3-Rec: the last max_len items of history, left-padded with 0.
std::vector<int32_t> left_pad(std::span<const int32_t> history, int64_t max_len);

}  // namespace lobench::data
