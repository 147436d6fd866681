// The public data set table and the reader's checks: where the data folder comes from (--data-dir over
// LOBENCH_DATA, nothing else), what a missing file's message says, that a file differing from the table
// is refused (size, SHA-256) unless verification is off, and that the real files verify (skipped when the
// shared datasets folder is absent).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "datasets/public_datasets.hpp"
#include "datasets/sha256.hpp"
#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

namespace fs = std::filesystem;

// Sets (or unsets, for nullopt) an environment variable for one scope, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh empty folder, removed with its contents at the end of the scope.
struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("lobench_public_" + std::to_string(::getpid()) + "_" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write_file(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << text << "' lacks '" << part << "'";
}

TEST(DatasetsPublic, TableIsWellFormed) {
  std::set<std::string> names;
  for (const PublicDataset& d : public_datasets()) {
    EXPECT_TRUE(d.kind == "xmc" || d.kind == "seqrec") << d.name;
    EXPECT_TRUE(names.insert(std::string(d.kind) + "/" + std::string(d.name)).second) << d.name;
    EXPECT_FALSE(d.files.empty());
    EXPECT_FALSE(d.source.empty());
    EXPECT_FALSE(d.citation.empty());
    EXPECT_FALSE(d.shape.empty());
    for (const PublicFile& f : d.files) {
      EXPECT_EQ(fs::path(f.path).parent_path().string(), d.kind) << f.path;
      EXPECT_GT(f.bytes, 0u);
      EXPECT_EQ(f.sha256.size(), 64u) << f.path;
      EXPECT_EQ(f.sha256.find_first_not_of("0123456789abcdef"), std::string_view::npos) << f.path;
    }
  }
  EXPECT_EQ(public_dataset_names("xmc"), "bibtex, delicious");
  EXPECT_EQ(public_dataset_names("seqrec"), "beauty, sports, toys, lastfm");
  ASSERT_NE(find_public_dataset("seqrec", "beauty"), nullptr);
  EXPECT_EQ(find_public_dataset("seqrec", "beauty")->files[0].path, "seqrec/Beauty.txt");
  EXPECT_EQ(find_public_dataset("xmc", "beauty"), nullptr);
  EXPECT_EQ(find_public_dataset("seqrec", "Beauty"), nullptr);
}

TEST(DatasetsPublic, DataDirFlagWinsOverTheEnvironment) {
  std::string from;
  {
    const ScopedEnv env(kDataDirEnv, "/from/env");
    EXPECT_EQ(resolve_data_dir("/from/flag", &from), "/from/flag");
    EXPECT_EQ(from, "--data-dir");
    EXPECT_EQ(resolve_data_dir("", &from), "/from/env");
    EXPECT_EQ(from, "LOBENCH_DATA");
  }
  {
    const ScopedEnv env(kDataDirEnv, std::nullopt);
    EXPECT_EQ(resolve_data_dir("", &from), "");  // nothing else is looked at: no default folder
    EXPECT_EQ(from, "");
  }
  {
    const ScopedEnv env(kDataDirEnv, "");
    EXPECT_EQ(resolve_data_dir(""), "");
  }
}

TEST(DatasetsPublic, NoVerifyFlagOrEnvironment) {
  const ScopedEnv env(kNoVerifyEnv, std::nullopt);
  EXPECT_TRUE(verification_wanted(false));
  EXPECT_FALSE(verification_wanted(true));
  const ScopedEnv env1(kNoVerifyEnv, "1");
  EXPECT_FALSE(verification_wanted(false));
}

TEST(DatasetsPublic, NoDataFolderSaysHowToGiveOne) {
  const ScopedEnv env(kDataDirEnv, std::nullopt);
  const std::string m = message_of([] { (void)locate_public_dataset(*find_public_dataset("xmc", "bibtex"), "", true); });
  for (const char* part : {"xmc/bibtex-train.arff", "xmc/bibtex.xml", "--data-dir", "LOBENCH_DATA", "mulan", "docs/data.md"})
    expect_contains(m, part);
}

TEST(DatasetsPublic, MissingFileIsNamedWithItsSource) {
  const TempDir dir;
  const ScopedEnv env(kDataDirEnv, dir.path.string());  // the folder comes from the environment
  write_file(dir.path / "seqrec" / "unrelated.txt", "1 2 3\n");
  const std::string m = message_of([] { (void)locate_public_dataset(*find_public_dataset("seqrec", "toys"), "", true); });
  for (const std::string& part : {std::string("seqrec/Toys_and_Games.txt"), (dir.path / "seqrec/Toys_and_Games.txt").string(),
                                  std::string("LOBENCH_DATA"), std::string("--data-dir"), std::string("S3-Rec"),
                                  std::string("922166 bytes")})
    expect_contains(m, part);
}

TEST(DatasetsPublic, ChangedFilesAreRefusedUnlessVerificationIsOff) {
  const TempDir dir;
  const PublicDataset& d = *find_public_dataset("xmc", "bibtex");
  for (const PublicFile& f : d.files) write_file(dir.path / f.path, "not the data");
  const std::string m = message_of([&] { (void)locate_public_dataset(d, dir.path.string(), true); });
  for (const std::string& part : {(dir.path / "xmc/bibtex-train.arff").string(), std::string("12 bytes"),
                                  std::string("2292961"), std::string("--no-verify")})
    expect_contains(m, part);
  const auto files = locate_public_dataset(d, dir.path.string(), false);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], dir.path / "xmc/bibtex-train.arff");
  // The data folder may also be the kind's folder itself (DIR/bibtex.xml), as train-xmc's old --data-dir.
  EXPECT_EQ(locate_public_dataset(d, (dir.path / "xmc").string(), false)[2], dir.path / "xmc/bibtex.xml");
}

TEST(DatasetsPublic, SameSizeDifferentBytesIsRefusedByChecksum) {
  const TempDir dir;
  const fs::path p = dir.path / "f.txt";
  write_file(p, "abd");
  const PublicFile expected{"x/f.txt", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"};  // "abc"
  const std::string m = message_of([&] { verify_public_file(p, expected); });
  for (const std::string& part : {p.string(), std::string(expected.sha256), sha256_file(p), std::string("--no-verify")})
    expect_contains(m, part);
  write_file(p, "abc");
  EXPECT_NO_THROW(verify_public_file(p, expected));
}

TEST(DatasetsPublic, TheRealFilesVerify) {
  for (const PublicDataset& d : public_datasets())
    for (const PublicFile& f : d.files) LOBENCH_REQUIRE_SHARED_FILE(std::string(f.path));
  for (const PublicDataset& d : public_datasets()) {
    const auto files = locate_public_dataset(d, testing::shared_datasets().string(), true);
    ASSERT_EQ(files.size(), d.files.size()) << d.name;
    for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(files[i], testing::shared_datasets() / d.files[i].path);
  }
}

}  // namespace
}  // namespace lobench::data
