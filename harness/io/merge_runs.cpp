#include "harness/io/merge_runs.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "harness/io/h5_io.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/job_files.hpp"
#include "harness/io/merge_run_folders.hpp"
#include "harness/io/partition.hpp"

namespace lobench::io {
namespace {

// A root attribute of a part (its provenance), a string or a number, kept under /parts in the merge.
struct Attribute {
  std::string name;
  std::optional<std::string> text;
  double number = 0;
};

struct Part {
  std::string path;
  std::string axes, partition;
  std::optional<double> pad_fraction, dup_fraction;  // the synthetic inputs' settings (absent before 2026-12-07)
  int64_t version = 0, index = 0, count = 1;
  std::vector<ResultRow> rows;
  std::vector<SampleRow> samples;
  std::vector<Attribute> attributes;
};

// Every root attribute of `f` (numbers and strings; others are skipped).
std::vector<Attribute> root_attributes(hid_t f) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
  };
  hsize_t idx = 0;
  H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &names);
  std::vector<Attribute> out;
  for (const auto& name : names) {
    h5::Handle attr(H5Aopen(f, name.c_str(), H5P_DEFAULT), H5Aclose);
    h5::Handle type(H5Aget_type(attr), H5Tclose);
    if (H5Tget_class(type) == H5T_STRING) {
      if (auto s = h5::read_attr_string(f, name)) out.push_back({name, std::move(s), 0});
    } else if (const auto d = h5::read_attr_double(f, name)) {
      out.push_back({name, std::nullopt, *d});
    }
  }
  return out;
}

Part read_part(const std::string& path) {
  Part p;
  p.path = path;
  h5::prepare_library();
  // A missing or unreadable part is named as such: HDF5 says only "not an HDF5 file" for both.
  require_input_file(path, "merge: part");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw std::invalid_argument(fmt::format("merge: '{}' is not an HDF5 file", path));
  {
    auto f = h5::open_file_read(path);
    const auto version = h5::read_attr_double(f, "schema_version");
    if (!version || !h5::exists(f, "results"))
      throw std::invalid_argument(fmt::format("merge: '{}' is not a lobench run file", path));
    if (h5::read_attr_double(f, "dry_run"))
      throw std::invalid_argument(fmt::format("merge: '{}' was written by --dry-run", path));
    try {
      p.version = ResultsFile::schema_version_of(f, path);
    } catch (const h5::Error& e) {
      throw std::invalid_argument(fmt::format("merge: {}", e.what()));
    }
    p.axes = h5::read_attr_string(f, "sweep_axes").value_or("");
    p.pad_fraction = h5::read_attr_double(f, "pad_fraction");
    p.dup_fraction = h5::read_attr_double(f, "dup_fraction");
    p.partition = h5::read_attr_string(f, "partition").value_or("0/1");
    // All of a part is read before anything is written: a damaged part is refused with OUT untouched.
    try {
      p.attributes = root_attributes(f);
    } catch (const h5::Error& e) {
      throw std::invalid_argument(fmt::format("merge: '{}': {}", path, e.what()));
    }
  }
  try {
    const Partition part = Partition::parse(p.partition);
    p.index = part.index;
    p.count = part.count;
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("merge: '{}' has an unreadable partition attribute '{}'", path, p.partition));
  }
  p.rows = ResultsFile::read_all(path);
  p.samples = ResultsFile::read_samples(path);
  return p;
}

// The parts must be partitions 0..N−1 of one sweep, each once.
void check_parts(const std::vector<Part>& parts) {
  const Part& first = parts.front();
  std::vector<std::pair<std::string, Partition>> partitions;
  for (const Part& p : parts) {
    if (p.version != first.version)
      throw std::invalid_argument(fmt::format("merge: '{}' has schema version {}, '{}' has {}", p.path, p.version,
                                              first.path, first.version));
    if (p.axes != first.axes)
      throw std::invalid_argument(fmt::format("merge: '{}' is another sweep than '{}' (sweep_axes differ: '{}' vs '{}')",
                                              p.path, first.path, p.axes, first.axes));
    // (compared where both parts record them: a file from before these attributes does not say)
    const bool both = p.pad_fraction && first.pad_fraction && p.dup_fraction && first.dup_fraction;
    if (both && (*p.pad_fraction != *first.pad_fraction || *p.dup_fraction != *first.dup_fraction))
      throw std::invalid_argument(fmt::format("merge: '{}' is another sweep than '{}' (its synthetic inputs differ: "
                                              "pad_fraction {} and dup_fraction {} vs {} and {})",
                                              p.path, first.path, *p.pad_fraction, *p.dup_fraction,
                                              *first.pad_fraction, *first.dup_fraction));
    partitions.emplace_back(p.path, Partition{p.index, p.count});
  }
  check_partitions(partitions, first.count);
}

// Writes a part's root attributes into group `to`.
void write_attributes(const std::vector<Attribute>& attributes, hid_t to) {
  for (const Attribute& a : attributes) {
    if (a.text) h5::write_attr(to, a.name, *a.text);
    else h5::write_attr(to, a.name, a.number);
  }
}

}  // namespace

MergeSummary merge_runs(const std::string& out, const std::vector<std::string>& part_paths, const Provenance& prov,
                        OutMode mode) {
  if (part_paths.empty()) throw std::invalid_argument("merge: no parts given");
  std::vector<Part> parts;
  for (const auto& p : part_paths) {
    if (std::filesystem::exists(out) && std::filesystem::equivalent(out, p))
      throw std::invalid_argument(fmt::format("merge: the output '{}' is one of the parts", out));
    try {
      parts.push_back(read_part(p));
    } catch (const std::exception& e) {  // every refusal names the part (an attribute's own does not)
      const std::string what = e.what();
      if (what.find(p) != std::string::npos) throw;
      throw std::invalid_argument(fmt::format("merge: '{}': {}", p, what));
    }
  }
  check_parts(parts);
  std::set<std::string> keys;
  for (const Part& p : parts)
    for (const ResultRow& r : p.rows)
      if (!keys.insert(r.key()).second)
        throw std::invalid_argument(fmt::format("merge: row '{}' of '{}' is in another part too", r.key(), p.path));

  // Written whole by the one writer (io::RunFileWriter, through ResultsFile): into a temporary file beside
  // `out`, renamed onto it by close() once complete; an error or a signal (io/interrupt_guard.hpp; checked
  // between parts and before the close) leaves `out` as it was.
  if (mode != OutMode::overwrite && std::filesystem::exists(std::filesystem::symlink_status(out)))
    throw std::invalid_argument(fmt::format("merge: OUT '{}' exists; give --overwrite to replace it, or another path", out));
  const auto stop_if_interrupted = [&] {
    if (const int sig = interrupt_signal())
      throw Interrupted(sig, fmt::format("merge stopped; '{}' not written{}", out,
                                         mode == OutMode::overwrite ? " (the file there is unchanged)" : ""));
  };
  MergeSummary sum;
  ResultsFile file(out, prov, mode, ResultsFile::Publishing{/*whole=*/true, part_paths, "merge OUT"});
  file.set_attr("sweep_axes", parts.front().axes);
  file.set_attr("partition", "0/1");
  // (recorded where every part records them: check_parts found them equal)
  const bool inputs_known = std::all_of(parts.begin(), parts.end(), [](const Part& p) {
    return p.pad_fraction && p.dup_fraction;
  });
  if (inputs_known) {
    file.set_attr("pad_fraction", *parts.front().pad_fraction);
    file.set_attr("dup_fraction", *parts.front().dup_fraction);
  }
  file.set_attr("merged_parts", double(parts.size()));
  for (const Part& p : parts) {
    std::map<int64_t, std::vector<double>> samples;
    for (const SampleRow& s : p.samples) samples[s.row_id].push_back(s.seconds);
    for (const ResultRow& r : p.rows) file.append(r, samples[r.row_id]);
    sum.rows += int64_t(p.rows.size());
    stop_if_interrupted();
  }
  file.describe([&](hid_t f) {  // each part's provenance
    h5::Handle group(H5Gcreate2(f, "parts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (const Part& p : parts) {
      h5::Handle g(H5Gcreate2(group, fmt::format("part_{}", p.index).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose);
      h5::write_attr(g, "path", p.path);
      write_attributes(p.attributes, g);
    }
  });
  stop_if_interrupted();
  file.close(utc_now());
  sum.parts = int64_t(parts.size());
  return sum;
}

std::string merge_parts(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                        bool overwrite) {
  if (parts.empty()) throw std::invalid_argument("merge: no parts given");
  for (const JobFiles* job : registered_job_files())  // a training job's own part files (train-xmc --frontier)
    if (job->part_files.is_part && job->part_files.is_part(parts.front()))
      return job->part_files.merge(out, parts, prov, overwrite);
  auto is_folder = [](const std::string& p) {
    std::error_code ec;
    return std::filesystem::is_directory(p, ec);
  };
  if (std::any_of(parts.begin(), parts.end(), is_folder) || is_run_folder_file(parts.front())) {
    if (overwrite)
      throw std::invalid_argument("merge --overwrite: a merged folder of run files is written new, never replaced");
    const FolderMergeSummary s = merge_run_folders(out, parts);
    return fmt::format("merged {} {} parts, {} runs -> {}", s.parts, s.command, s.runs, out);
  }
  const MergeSummary s = merge_runs(out, parts, prov, overwrite ? OutMode::overwrite : OutMode::create_new);
  return fmt::format("merged {} parts, {} rows -> {}", s.parts, s.rows, out);
}

}  // namespace lobench::io
