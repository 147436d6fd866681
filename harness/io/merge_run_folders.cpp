#include "harness/io/merge_run_folders.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "harness/io/h5_io.hpp"
#include "harness/io/job_files.hpp"
#include "harness/io/partition.hpp"

namespace lobench::io {

namespace fs = std::filesystem;

namespace {

// The training job (io/job_files.hpp) whose run file has this schema ("train-xmc" of "lobench train-xmc
// run, version 1"); empty when it is no registered job's.
std::string command_of(const std::string& schema) {
  const JobFiles* job = job_files_of_schema(schema);
  return job ? job->command : "";
}

std::string schema_of(const std::string& path) {
  h5::prepare_library();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || H5Fis_hdf5(path.c_str()) <= 0) return "";
  try {
    auto f = h5::open_file_read(path);
    return h5::read_attr_string(f, "schema").value_or("");
  } catch (const std::exception&) {
    return "";
  }
}

// One run file's place in its sweep.
struct RunPlace {
  std::string path;
  std::string schema, sweep, partition;
  int64_t index = 0, runs = 0;
};

struct PartDir {
  std::string path;
  Partition partition;
  std::vector<RunPlace> runs;
};

RunPlace read_place(const std::string& path, const std::string& part) {
  if (!is_run_folder_file(path))
    throw std::invalid_argument(fmt::format("merge: '{}' in '{}' is not a run file of any training job ({})", path, part,
                                            registered_job_names()));
  auto f = h5::open_file_read(path);
  RunPlace r;
  r.path = path;
  const auto sweep = h5::read_attr_string(f, "sweep");
  const auto partition = h5::read_attr_string(f, "partition");
  const auto index = h5::read_attr_int64(f, "sweep_index");
  const auto runs = h5::read_attr_int64(f, "sweep_runs");
  if (!sweep || !partition || !index || !runs)
    throw std::invalid_argument(fmt::format(
        "merge: '{}' records no place in a sweep (no sweep, sweep_index, sweep_runs or partition attribute: written "
        "by a training command older than --partition), so it cannot be merged",
        path));
  r.schema = h5::read_attr_string(f, "schema").value_or("");
  r.sweep = *sweep;
  r.partition = *partition;
  r.index = *index;
  r.runs = *runs;
  return r;
}

// A part: the run files of one --out-dir, all of one partition.
PartDir read_part(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (const std::string command = command_of(schema_of(dir)); !command.empty())
      throw std::invalid_argument(fmt::format(
          "merge: '{}' is one {} run file; {} parts are folders: give each partition's --out-dir", dir, command, command));
    throw std::invalid_argument(fmt::format("merge: '{}' {}", dir, fs::exists(dir, ec) ? "is not a folder of run files"
                                                                                      : "does not exist"));
  }
  PartDir p;
  p.path = dir;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))  // a run cut short leaves NAME.h5.partial-*: not a run
    if (e.path().extension() == ".h5" && fs::is_regular_file(e.path())) files.push_back(e.path().string());
  if (ec) throw std::invalid_argument(fmt::format("merge: cannot list '{}': {}", dir, ec.message()));
  if (files.empty()) return p;  // a partition beyond the sweep's runs makes none (checked in check_parts)
  std::sort(files.begin(), files.end());
  for (const auto& f : files) p.runs.push_back(read_place(f, dir));
  const RunPlace& first = p.runs.front();
  for (const RunPlace& r : p.runs)
    if (r.partition != first.partition)
      throw std::invalid_argument(fmt::format("merge: '{}' holds runs of partitions {} ('{}') and {} ('{}'): give each "
                                              "partition its own --out-dir",
                                              dir, first.partition, first.path, r.partition, r.path));
  try {
    p.partition = Partition::parse(first.partition);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(
        fmt::format("merge: '{}' has an unreadable partition attribute '{}'", first.path, first.partition));
  }
  return p;
}

// The parts must be partitions 0..N−1 of one sweep (io/partition.hpp's rule), each once, and hold every
// run of it once.
void check_parts(const std::vector<PartDir>& parts) {
  const RunPlace& ref = parts.front().runs.front();
  const int64_t N = parts.front().partition.count;
  std::vector<std::pair<std::string, Partition>> partitions;
  for (const PartDir& p : parts) partitions.emplace_back(p.path, p.partition);
  // Partition k makes run k first, so only partitions k >= sweep_runs may hold nothing (e.g. 8 tasks for 5 runs).
  check_partitions(partitions, std::min(N, ref.runs));
  std::map<int64_t, std::string> runs, by_partition;
  std::map<std::string, std::string> file_names;
  for (const PartDir& p : parts) {
    by_partition[p.partition.index] = p.path;
    for (const RunPlace& r : p.runs) {
      if (r.schema != ref.schema)
        throw std::invalid_argument(fmt::format("merge: '{}' is a '{}' file, '{}' a '{}' file", r.path, r.schema,
                                                ref.path, ref.schema));
      if (r.sweep != ref.sweep || r.runs != ref.runs)
        throw std::invalid_argument(fmt::format("merge: '{}' is another sweep than '{}' (sweep attributes differ: '{}' "
                                                "of {} runs vs '{}' of {})",
                                                r.path, ref.path, r.sweep, r.runs, ref.sweep, ref.runs));
      if (r.index < 0 || r.index >= r.runs || r.index % N != p.partition.index)
        throw std::invalid_argument(fmt::format("merge: '{}' says it is run {} of {}, which partition {} does not make",
                                                r.path, r.index, r.runs, p.partition.str()));
      if (!runs.emplace(r.index, r.path).second)
        throw std::invalid_argument(fmt::format("merge: '{}' and '{}' are both run {} of the sweep", runs[r.index],
                                                r.path, r.index));
      const std::string name = fs::path(r.path).filename().string();
      if (!file_names.emplace(name, r.path).second)
        throw std::invalid_argument(
            fmt::format("merge: '{}' and '{}' have the same file name", file_names[name], r.path));
    }
  }
  for (int64_t i = 0; i < ref.runs; ++i)
    if (!runs.count(i))
      throw std::invalid_argument(fmt::format("merge: run {} of the sweep's {} is missing (from partition {}/{}, '{}')",
                                              i, ref.runs, i % N, N, by_partition[i % N]));
}

// The parts' run files copied into a new folder beside `out`, renamed onto it once complete.
void copy_into_new_folder(const fs::path& out, const std::vector<PartDir>& parts) {
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  std::string pattern = (parent / (out.filename().string() + ".partial-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::invalid_argument(fmt::format("merge: cannot create a folder beside '{}'", out.string()));
  const fs::path temp = pattern;
  try {
    for (const PartDir& p : parts)
      for (const RunPlace& r : p.runs) fs::copy_file(r.path, temp / fs::path(r.path).filename());
    if (fs::exists(fs::symlink_status(out)))  // appeared meanwhile: rename would replace an empty folder
      throw std::invalid_argument(fmt::format("merge: '{}' appeared while merging; nothing written", out.string()));
    fs::rename(temp, out);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(temp);
    throw std::invalid_argument(fmt::format("merge: cannot write '{}': {}", out.string(), e.what()));
  } catch (...) {
    fs::remove_all(temp);
    throw;
  }
}

}  // namespace

bool is_run_folder_file(const std::string& path) { return !command_of(schema_of(path)).empty(); }

FolderMergeSummary merge_run_folders(const std::string& out_text, const std::vector<std::string>& part_dirs) {
  if (part_dirs.empty()) throw std::invalid_argument("merge: no parts given");
  fs::path out = out_text;
  if (out.filename().empty()) out = out.parent_path();  // "merged/"
  if (fs::exists(fs::symlink_status(out)))
    throw std::invalid_argument(fmt::format(
        "merge: '{}' exists; the merged folder of run files is written new (remove it or choose another name)",
        out_text));
  std::vector<PartDir> parts;  // those holding runs; an empty folder is a partition that made none
  for (const auto& d : part_dirs) {
    PartDir p = read_part(d);
    if (!p.runs.empty()) parts.push_back(std::move(p));
  }
  if (parts.empty())
    throw std::invalid_argument(fmt::format("merge: '{}' holds no run files (*.h5){}", part_dirs.front(),
                                            part_dirs.size() > 1 ? ", nor does any other part" : ""));
  check_parts(parts);
  copy_into_new_folder(out, parts);
  FolderMergeSummary s;
  s.command = command_of(parts.front().runs.front().schema);
  s.parts = int64_t(part_dirs.size());
  for (const PartDir& p : parts) s.runs += int64_t(p.runs.size());
  return s;
}

}  // namespace lobench::io
