// The public data sets lobench reads, in one table (docs/data.md shows the same table): each set's
// name, source and citation, its files (path under the data folder, size in bytes, SHA-256) and its
// published shape. lobench ships none of these files: a user downloads them and points lobench at the
// folder that holds them (`--data-dir DIR` or the environment variable LOBENCH_DATA). No command looks
// anywhere else by default.
//
//   const PublicDataset& d = public_dataset("seqrec", "beauty");
//   std::vector<std::filesystem::path> files = locate_public_dataset(d, flag_dir, verify);
//
// locate_public_dataset finds every file under the data folder (DIR/seqrec/Beauty.txt, or DIR/Beauty.txt
// when DIR is the seqrec folder itself) and, unless verification is off, checks its size and SHA-256
// against the table (each file hashed once per process), refusing a mismatch with a message that names
// the file and both checksums.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lobench::data {

// The environment variable naming the data folder when --data-dir is not given.
inline constexpr const char* kDataDirEnv = "LOBENCH_DATA";
// The environment variable that, set to 1, turns verification off (as --no-verify does).
inline constexpr const char* kNoVerifyEnv = "LOBENCH_NO_VERIFY";

struct PublicFile {
  std::string_view path;    // relative to the data folder, e.g. "xmc/bibtex-train.arff"
  uint64_t bytes;
  std::string_view sha256;  // 64 lowercase hex digits
};

struct PublicDataset {
  std::string_view kind;      // "xmc" (Mulan ARFF, train-xmc) or "seqrec" (sequence file, train-seqrec)
  std::string_view name;      // what --dataset takes, e.g. "bibtex", "beauty"
  std::span<const PublicFile> files;
  std::string_view shape;     // rows / items as published
  std::string_view source;    // where to download it
  std::string_view citation;
};

std::span<const PublicDataset> public_datasets();
// The set of that kind and name (case-sensitive), or nullptr.
const PublicDataset* find_public_dataset(std::string_view kind, std::string_view name);
// "beauty, sports, toys, lastfm": the names of one kind, for messages and help.
std::string public_dataset_names(std::string_view kind);

// The data folder: flag_dir when not empty, else $LOBENCH_DATA when set and not empty, else "" (none).
// `from` (optional) receives "--data-dir" or "LOBENCH_DATA", for messages.
std::string resolve_data_dir(const std::string& flag_dir, std::string* from = nullptr);
// Whether to verify: false when no_verify_flag is set or $LOBENCH_NO_VERIFY is "1".
bool verification_wanted(bool no_verify_flag);

// The paths of d's files, in table order, found under the data folder (resolve_data_dir(flag_dir)),
// verified when `verify`. Throws std::runtime_error when no folder is given, a file is missing (the
// message names the file, where the set comes from and how to pass --data-dir / LOBENCH_DATA) or a file
// differs from the table (size or SHA-256, both expected and actual given; --no-verify skips the check).
std::vector<std::filesystem::path> locate_public_dataset(const PublicDataset& d, const std::string& flag_dir,
                                                         bool verify);

// Checks one file's size and SHA-256 against the table; the digest of a file is computed once per
// process (cached by path, size and modification time). Throws std::runtime_error on a mismatch.
void verify_public_file(const std::filesystem::path& path, const PublicFile& expected);

}  // namespace lobench::data
