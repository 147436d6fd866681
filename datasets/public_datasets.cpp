#include "datasets/public_datasets.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <tuple>

#include "datasets/sha256.hpp"

namespace lobench::data {

namespace fs = std::filesystem;

namespace {

// Sizes and SHA-256 of the files as published (measured on the copies the project validated against;
// docs/data.md lists the same). A change here is a change of data: say so in the commit.
constexpr PublicFile kBibtex[] = {
    {"xmc/bibtex-train.arff", 2292961, "8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174"},
    {"xmc/bibtex-test.arff", 1215637, "9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922"},
    {"xmc/bibtex.xml", 5880, "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232"},
};
constexpr PublicFile kDelicious[] = {
    {"xmc/delicious-train.arff", 3056590, "030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1"},
    {"xmc/delicious-test.arff", 757565, "2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944"},
    {"xmc/delicious.xml", 34303, "4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2"},
};
constexpr PublicFile kBeauty[] = {
    {"seqrec/Beauty.txt", 1090094, "226cce9c3105299ca0db9615d7d3fb32b3175e90da43100ae352599f0f0107b8"}};
constexpr PublicFile kSports[] = {
    {"seqrec/Sports_and_Outdoors.txt", 1707483, "2a095e0648872beb9982408958290f5d655db5be2911c3756b5446de9f0b8de2"}};
constexpr PublicFile kToys[] = {
    {"seqrec/Toys_and_Games.txt", 922166, "176c680c688d497598c4a89a03b402c0fe78d795e5db335c2e78dd5f2d778a3f"}};
constexpr PublicFile kLastFm[] = {
    {"seqrec/LastFM.txt", 239312, "9ded486adb5b0fe9dc761950afa0a9a05e93ff018992e0c52bf11afec529f802"}};

constexpr std::string_view kMulan = "Mulan's multi-label data sets (mulan.sourceforge.net/datasets-mlc.html), sparse ARFF + label XML";
constexpr std::string_view kS3Rec =
    "the data/ folder of S3-Rec's repository (github.com/RUCAIBox/CIKM2020-S3Rec): one user per line, "
    "USER ITEM ITEM ... in time order";
constexpr std::string_view kAmazon =
    "McAuley et al., Image-based recommendations on styles and substitutes, SIGIR 2015 (Amazon reviews, 5-core); "
    "preprocessing: Zhou et al., S3-Rec, CIKM 2020";

const PublicDataset kSets[] = {
    {"xmc", "bibtex", kBibtex, "7,395 rows (4,880 train / 2,515 test), 1,836 features, 159 labels", kMulan,
     "Katakis, Tsoumakas, Vlahavas, Multilabel text classification for automated tag suggestion, ECML/PKDD 2008 "
     "Discovery Challenge"},
    {"xmc", "delicious", kDelicious, "16,105 rows (12,920 train / 3,185 test), 500 features, 983 labels", kMulan,
     "Tsoumakas, Katakis, Vlahavas, Effective and efficient multilabel classification in domains with large "
     "number of labels, ECML/PKDD 2008 Workshop on Mining Multidimensional Data"},
    {"seqrec", "beauty", kBeauty, "22,363 users, 12,101 items, 198,502 interactions", kS3Rec, kAmazon},
    {"seqrec", "sports", kSports, "35,598 users, 18,357 items, 296,337 interactions", kS3Rec, kAmazon},
    {"seqrec", "toys", kToys, "19,412 users, 11,924 items, 167,597 interactions", kS3Rec, kAmazon},
    {"seqrec", "lastfm", kLastFm, "1,090 users, 3,646 items, 52,551 interactions", kS3Rec,
     "Cantador, Brusilovsky, Kuflik, HetRec 2011 (Last.fm); preprocessing: Zhou et al., S3-Rec, CIKM 2020"},
};

// Where a file of the table is under the data folder: DIR/xmc/bibtex.xml, else DIR/bibtex.xml (DIR is
// the kind's folder itself). Empty when neither exists.
fs::path find_file(const fs::path& dir, const PublicFile& f) {
  std::error_code ec;
  const fs::path full = dir / f.path;
  if (fs::is_regular_file(full, ec)) return full;
  const fs::path flat = dir / fs::path(f.path).filename();
  if (fs::is_regular_file(flat, ec)) return flat;
  return {};
}

// What is at `p` when it is not a readable regular file ("a folder", "a symlink loop", "a character
// device", ...); "" when nothing is there or it is one.
std::string not_a_data_file(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec == std::errc::too_many_symbolic_link_levels) return "a symlink loop (too many levels of symbolic links)";
  if (ec || st.type() == fs::file_type::not_found) {
    std::error_code lec;
    return fs::is_symlink(fs::symlink_status(p, lec)) ? "a dangling symlink" : "";
  }
  switch (st.type()) {
    case fs::file_type::regular: return ::access(p.c_str(), R_OK) == 0 ? "" : "a file this user cannot read";
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device (e.g. /dev/zero)";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
  }
}

std::string where_from(const PublicDataset& d) {
  return fmt::format("the '{}' data set comes from {} ({}); docs/data.md lists its files and checksums", d.name,
                     d.source, d.citation);
}

}  // namespace

std::span<const PublicDataset> public_datasets() { return kSets; }

const PublicDataset* find_public_dataset(std::string_view kind, std::string_view name) {
  for (const PublicDataset& d : kSets)
    if (d.kind == kind && d.name == name) return &d;
  return nullptr;
}

std::string public_dataset_names(std::string_view kind) {
  std::string out;
  for (const PublicDataset& d : kSets)
    if (d.kind == kind) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

std::string resolve_data_dir(const std::string& flag_dir, std::string* from) {
  if (!flag_dir.empty()) {
    if (from) *from = "--data-dir";
    return flag_dir;
  }
  const char* env = std::getenv(kDataDirEnv);
  if (env && *env) {
    if (from) *from = kDataDirEnv;
    return env;
  }
  if (from) from->clear();
  return {};
}

bool verification_wanted(bool no_verify_flag) {
  if (no_verify_flag) return false;
  const char* env = std::getenv(kNoVerifyEnv);
  return !(env && std::string_view(env) == "1");
}

void verify_public_file(const fs::path& path, const PublicFile& expected) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot read the size of {}: {}", path.string(), ec.message()));
  if (size != expected.bytes)
    throw std::runtime_error(fmt::format(
        "{} is not the published {}: {} bytes, expected {} (sha256 {}); give --no-verify (or LOBENCH_NO_VERIFY=1) "
        "to use a modified copy anyway",
        path.string(), expected.path, size, expected.bytes, expected.sha256));
  // Hash each file once per process: a sweep loads the same file for many runs.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, uint64_t, fs::file_time_type>, std::string> digests;
  const auto key = std::make_tuple(fs::absolute(path, ec).string(), size, fs::last_write_time(path, ec));
  std::string actual;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = digests.find(key); it != digests.end()) actual = it->second;
  }
  if (actual.empty()) {
    actual = sha256_file(path);
    const std::lock_guard<std::mutex> lock(mutex);
    digests[key] = actual;
  }
  if (actual != expected.sha256)
    throw std::runtime_error(fmt::format(
        "{} is not the published {}: sha256 {}, expected {}; give --no-verify (or LOBENCH_NO_VERIFY=1) to use a "
        "modified copy anyway",
        path.string(), expected.path, actual, expected.sha256));
}

std::vector<fs::path> locate_public_dataset(const PublicDataset& d, const std::string& flag_dir, bool verify) {
  std::string from;
  const std::string dir = resolve_data_dir(flag_dir, &from);
  if (dir.empty()) {
    std::string files;
    for (const PublicFile& f : d.files) files += (files.empty() ? "" : ", ") + std::string(f.path);
    throw std::runtime_error(fmt::format(
        "--dataset {} needs {} under a data folder, and none was given: pass --data-dir DIR or set {}=DIR (DIR holds "
        "{}/...); {}",
        d.name, files, kDataDirEnv, d.kind, where_from(d)));
  }
  std::vector<fs::path> out;
  for (const PublicFile& f : d.files) {
    const fs::path p = find_file(dir, f);
    if (p.empty() || !not_a_data_file(p).empty())
      for (const fs::path& candidate : {fs::path(dir) / f.path, fs::path(dir) / fs::path(f.path).filename()})
        if (const std::string what = not_a_data_file(candidate); !what.empty())
        throw std::runtime_error(fmt::format("--dataset {}: {} is {}, not a readable file; it should be {} ({} bytes); {}",
                                             d.name, candidate.string(), what, f.path, f.bytes, where_from(d)));
    if (p.empty())
      throw std::runtime_error(fmt::format(
          "--dataset {}: missing file {} ({} bytes): looked for {} and {} (data folder from {}); pass --data-dir DIR "
          "(or set {}=DIR) for the folder that holds {}; {}",
          d.name, f.path, f.bytes, (fs::path(dir) / f.path).string(), (fs::path(dir) / fs::path(f.path).filename()).string(),
          from, kDataDirEnv, f.path, where_from(d)));
    if (verify) verify_public_file(p, f);
    out.push_back(p);
  }
  return out;
}

}  // namespace lobench::data
