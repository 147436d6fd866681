// SHA-256 (FIPS 180-4), streaming: what the data reader uses to check that a public data set's files
// are the published ones (public_datasets.hpp). Our own compact implementation: the project has no
// cryptography library, and checksumming a few MB needs none.
//
//   Sha256 h;  h.update(bytes);  ...;  std::string hex = h.hex_digest();
//   sha256_file("xmc/bibtex.xml")   // the file's digest, read in 1 MiB blocks
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace lobench::data {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const uint8_t> bytes);
  void update(std::string_view text);
  // The digest of everything given so far; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  std::string hex_digest();  // 64 lowercase hex digits

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool finished_ = false;
};

// The hex SHA-256 of a file's bytes. Throws std::runtime_error naming the file if it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace lobench::data
