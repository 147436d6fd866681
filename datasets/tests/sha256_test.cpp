// SHA-256 against the FIPS 180-4 / NIST example vectors, split across update() calls at every offset
// (the block buffering is where a streaming hash goes wrong), and on a file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "datasets/sha256.hpp"

namespace lobench::data {
namespace {

std::string hash(const std::string& s) {
  Sha256 h;
  h.update(s);
  return h.hex_digest();
}

TEST(DatasetsSha256, NistVectors) {
  EXPECT_EQ(hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hash("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                 "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(hash(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(DatasetsSha256, SplitUpdatesGiveTheSameDigest) {
  std::string msg;
  for (int i = 0; i < 300; ++i) msg += static_cast<char>('a' + i % 26);
  for (size_t len : {0u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u, 300u}) {
    const std::string m = msg.substr(0, len);
    const std::string whole = hash(m);
    for (size_t cut = 0; cut <= len; ++cut) {
      Sha256 h;
      h.update(std::string_view(m).substr(0, cut));
      h.update(std::string_view(m).substr(cut));
      ASSERT_EQ(h.hex_digest(), whole) << "length " << len << " cut at " << cut;
    }
  }
}

TEST(DatasetsSha256, FileDigestAndUnreadableFile) {
  const auto path = std::filesystem::temp_directory_path() / ("lobench_sha256_" + std::to_string(::getpid()));
  {
    std::ofstream f(path, std::ios::binary);
    f << "abc";
  }
  EXPECT_EQ(sha256_file(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(path);
  try {
    (void)sha256_file(path);
    ADD_FAILURE() << "no exception for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lobench::data
