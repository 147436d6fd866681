// A fixed-length, NUL-padded text field of a table row: rows stay plain records that HDF5 stores as a
// compound type and h5py reads as a NumPy structured array. Text longer than N − 1 bytes is cut.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>

namespace lobench::io {

template <size_t N>
struct FixedText {
  static constexpr size_t capacity = N;
  char chars[N] = {};

  void set(std::string_view s) {
    std::memset(chars, 0, N);
    std::memcpy(chars, s.data(), std::min(s.size(), N - 1));
  }
  // The stored text up to its first NUL (a row read from a file may fill all N bytes).
  std::string_view view() const { return std::string_view(chars, strnlen(chars, N)); }
  std::string str() const { return std::string(view()); }
  bool empty() const { return chars[0] == 0; }
  bool operator==(std::string_view s) const { return view() == s; }
  // `note` added to the text there, "; "-separated, after it (before it with `first`); the note alone where
  // the text is empty.
  void add(std::string_view note, bool first = false) {
    const std::string here = str(), added(note);
    set(here.empty() ? added : first ? added + "; " + here : here + "; " + added);
  }
};

template <size_t N>
std::ostream& operator<<(std::ostream& os, const FixedText<N>& t) {
  return os << t.view();
}

}  // namespace lobench::io

template <size_t N>
struct fmt::formatter<lobench::io::FixedText<N>> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const lobench::io::FixedText<N>& t, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(t.view(), ctx);
  }
};
