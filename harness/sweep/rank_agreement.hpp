// The one check that the ranks of a multi-process run (`lobench run --shard`, `train-xmc --shard labels`,
// `train-seqrec --data-parallel`) were started alike, made before any other collective: ranks that
// disagree on an option (--steps, --D, --lr, --seed, --dataset, ...) or on their data would otherwise
// hang in mismatched collectives, corrupt memory (buffers sized by one rank's D, filled by another's) or
// train two runs into one file. Every rank lists its settings (name, value) in the same order; they
// compare one digest of the whole list (two collectives, the only cost when they agree), and only when
// it differs look for the first setting that differs and its values on rank 0 and on a rank that differs,
// so that every rank throws the same one-line message.
//
// `Ranks` is any of the sessions (sweep::ShardedRows, train::ShardedTraining, seqrec::GradientExchange):
// agree(v) returns rank 0's value on every rank, largest(v) the largest over ranks; both collective.
// Header-only and MPI-free, so tests can drive it with ranks of their own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lobench::sweep {

// One setting the ranks must share: its name as the user gives it ("--steps", or "data-sha256" for the data's
// content hash) and its value as text.
struct Setting {
  std::string name, value;
};
using Settings = std::vector<Setting>;

// FNV-1a, 64 bits, made non-negative (a fingerprint travels as an int64 through largest()).
inline int64_t options_fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return int64_t(h >> 1);
}

namespace detail {

inline std::string setting_text(const Setting& s) { return s.name + "=" + s.value; }

// 8 bytes of `text` from `at` as one int64 (zeros past its end), and back.
inline int64_t word_at(const std::string& text, size_t at) {
  uint64_t w = 0;
  for (size_t k = 0; k < 8 && at + k < text.size(); ++k) w |= uint64_t(static_cast<unsigned char>(text[at + k])) << (8 * k);
  return int64_t(w);
}
inline void append_word(std::string& out, int64_t word, size_t bytes) {
  for (size_t k = 0; k < bytes; ++k) out += char((uint64_t(word) >> (8 * k)) & 0xff);
}

// Rank 0's `text` on every rank (through agree()).
template <typename Ranks>
std::string text_of_rank0(Ranks& ranks, const std::string& text) {
  const size_t length = size_t(ranks.agree(int64_t(text.size())));
  std::string out;
  for (size_t at = 0; at < length; at += 8) append_word(out, ranks.agree(word_at(text, at)), std::min<size_t>(8, length - at));
  return out;
}

// `text` on every rank, sent by the ranks where `source` is true (they all hold the same text), through
// largest(): the others give the smallest int64, which no 8 bytes of text are (0x80 above seven NULs).
template <typename Ranks>
std::string text_of_sources(Ranks& ranks, bool source, const std::string& text) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  const int64_t length = ranks.largest(source ? int64_t(text.size()) : -1);
  std::string out;
  for (int64_t at = 0; at < length; at += 8)
    append_word(out, ranks.largest(source ? word_at(text, size_t(at)) : kNone), size_t(std::min<int64_t>(8, length - at)));
  return out;
}

}  // namespace detail

// Collective, the first of a run. Throws std::invalid_argument on every rank, with the same message,
// unless every rank's `mine` equals rank 0's: "CONTEXT: the ranks were started with different options:
// the first that differs is --steps ('3' on rank 0, '5' on another rank); start every rank with the same
// command". `context` names the command ("train-seqrec --data-parallel").
template <typename Ranks>
void require_same_settings(Ranks& ranks, const Settings& mine, const std::string& context) {
  std::string all;
  for (const Setting& s : mine) all += detail::setting_text(s) + '\n';
  const int64_t digest = options_fingerprint(all);
  if (ranks.largest(ranks.agree(digest) != digest ? 1 : 0) == 0) return;
  // Some rank differs from rank 0: find the first index where any does. Every rank walks the same
  // indices, up to the longest list, and stops where the collectives say, so all stay in step.
  const int64_t count = ranks.largest(int64_t(mine.size()));
  int64_t first = count;
  for (int64_t i = 0; i < count && first == count; ++i) {
    const int64_t fp = i < int64_t(mine.size()) ? options_fingerprint(detail::setting_text(mine[size_t(i)])) : -1;
    if (ranks.largest(ranks.agree(fp) != fp ? 1 : 0) != 0) first = i;
  }
  const Setting none{"(no option)", ""};
  const Setting& here = first < int64_t(mine.size()) ? mine[size_t(first)] : none;
  const int64_t fp = options_fingerprint(detail::setting_text(here));
  const bool differs = ranks.agree(fp) != fp;
  const std::string name0 = detail::text_of_rank0(ranks, here.name), value0 = detail::text_of_rank0(ranks, here.value);
  // Of the ranks that differ, the one(s) with the largest fingerprint speak: a choice every rank makes alike.
  const int64_t chosen = ranks.largest(differs ? fp : -1);
  const bool speaks = differs && fp == chosen;
  const std::string name1 = detail::text_of_sources(ranks, speaks, here.name);
  const std::string value1 = detail::text_of_sources(ranks, speaks, here.value);
  std::ostringstream m;
  m << context << ": the ranks were started with different options: the first that differs is ";
  if (name0 == name1)
    m << name0 << " ('" << value0 << "' on rank 0, '" << value1 << "' on another rank)";
  else
    m << "'" << name0 << (value0.empty() ? "" : " " + value0) << "' on rank 0 where another rank has '" << name1
      << (value1.empty() ? "" : " " + value1) << "'";
  m << "; start every rank with the same command and data";
  throw std::invalid_argument(m.str());
}

// The settings of a command line, as require_same_settings compares them: each option ("--x") with the
// words after it up to the next option as its value; words before the first option under "command".
inline Settings command_line_settings(const std::string& command_line) {
  Settings out{{"command", ""}};
  std::istringstream words(command_line);
  for (std::string w; words >> w;) {
    if (w.size() > 1 && w[0] == '-' && !(w[1] >= '0' && w[1] <= '9') && w[1] != '.') {
      out.push_back({w, ""});
    } else {
      std::string& v = out.back().value;
      v += (v.empty() ? "" : " ") + w;
    }
  }
  return out;
}

}  // namespace lobench::sweep
