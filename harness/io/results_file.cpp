#include "harness/io/results_file.hpp"

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "harness/io/output_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace lobench {
namespace {

constexpr int kV1MaxSamples = 64;  // version 1 kept the samples in a float64[64] column

h5::Handle sample_row_type() { return io::compound_type(sizeof(SampleRow), SampleRow::columns()); }

// A row appended to a version-1 table: that layout's integer columns for peak_bytes,
// peak_device_bytes and counts_mismatch (with its sentinels) and its samples column.
struct V1Row {
  ResultRow row;
  double time_samples_s[kV1MaxSamples];
  int64_t peak_bytes, peak_device_bytes, counts_mismatch;
};

// The memory type for V1Row holding exactly the columns a version-1 table `stored` has.
h5::Handle v1_row_type(hid_t stored) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(V1Row));
  for (const io::Column& c : io::result_columns()) {
    if (H5Tget_member_index(stored, c.name) < 0) continue;
    if (c.name == std::string("peak_bytes")) H5Tinsert(t, c.name, offsetof(V1Row, peak_bytes), H5T_NATIVE_INT64);
    else if (c.name == std::string("peak_device_bytes"))
      H5Tinsert(t, c.name, offsetof(V1Row, peak_device_bytes), H5T_NATIVE_INT64);
    else if (c.name == std::string("counts_mismatch"))
      H5Tinsert(t, c.name, offsetof(V1Row, counts_mismatch), H5T_NATIVE_INT64);
    else io::insert_column(t, c, offsetof(V1Row, row) + c.offset);
  }
  const hsize_t n = kV1MaxSamples;
  h5::Handle arr(H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &n), H5Tclose);
  H5Tinsert(t, "time_samples_s", offsetof(V1Row, time_samples_s), arr);
  return h5::Handle(t, H5Tclose);
}

V1Row to_v1(const ResultRow& r, const std::vector<double>& samples) {
  V1Row v{};
  v.row = r;
  std::fill(std::begin(v.time_samples_s), std::end(v.time_samples_s), io::kNotMeasured);
  std::copy_n(samples.begin(), std::min<size_t>(samples.size(), kV1MaxSamples), v.time_samples_s);
  auto as_int = [](double x, int64_t missing) { return std::isnan(x) ? missing : int64_t(x); };
  v.peak_bytes = as_int(r.peak_bytes, 0);
  v.peak_device_bytes = as_int(r.peak_device_bytes, -1);
  v.counts_mismatch = as_int(r.counts_mismatch, -1);
  return v;
}

// Version-1 files wrote 0 or −1 for measurements not taken; they read as NaN now.
void clean_v1(ResultRow& r) {
  if (r.peak_device_bytes == -1) r.peak_device_bytes = io::kNotMeasured;
  if (r.counts_mismatch == -1) r.counts_mismatch = io::kNotMeasured;
  if (r.status == "ok") return;
  for (double* x : {&r.time_median_s, &r.time_min_s, &r.time_max_s, &r.effective_gflops, &r.gemm_fraction,
                    &r.peak_bytes, &r.peak_device_bytes})
    *x = io::kNotMeasured;
  if (r.gemm_gflops == 0) r.gemm_gflops = io::kNotMeasured;
}

int64_t file_version(hid_t file, const std::string& path);

// Every row of an open run file, version-1 sentinels cleaned (read_all and a resume share it).
std::vector<ResultRow> read_rows(hid_t file, const std::string& path) {
  std::vector<ResultRow> rows = h5::read_table<ResultRow>(file, "results", result_row_type(), path);
  if (file_version(file, path) == 1)
    for (ResultRow& r : rows) clean_v1(r);
  return rows;
}

int64_t file_version(hid_t file, const std::string& path) { return ResultsFile::schema_version_of(file, path); }

// Refuses to touch what `mode` does not allow: an existing file without --resume or --overwrite,
// anything that is not a regular file, a file to resume that is not a lobench run file.
void check_out_path(const std::string& path, OutMode mode, const std::string& option) {
  if (mode == OutMode::overwrite) {
    if (const std::string kind = io::not_regular_file(path); !kind.empty())
      throw std::invalid_argument(fmt::format("{} '{}' is {}, not a regular file: refusing to replace it", option, path, kind));
    return;
  }
  try {
    io::check_append_target(path, mode == OutMode::resume, option);  // the one check of a file a run grows in place
  } catch (const io::PathError& e) {
    throw std::invalid_argument(e.what());  // a usage error: exit 2, the file untouched
  }
}

}  // namespace

h5::Handle result_row_type() { return io::compound_type(sizeof(ResultRow), io::result_columns()); }

ResultsFile::ResultsFile(const std::string& path, const Provenance& prov, OutMode mode, const Publishing& publishing)
    : path_(path) {
  const io::WriteSection writing;  // a second Ctrl-C waits for the file to be consistent (interrupt_guard.hpp)
  h5::prepare_library();
  check_out_path(path, mode, publishing.option);
  try {
    writer_ = std::make_unique<io::RunFileWriter>(path, publishing.option);  // one writer per run file, for the whole run
  } catch (const io::PathError& e) {
    throw std::invalid_argument(e.what());  // a usage error: exit 2, the file untouched
  }
  if (mode == OutMode::resume && std::filesystem::exists(path)) {
    try {
      open_for_resume(prov);
    } catch (const std::exception& e) {  // every refusal names the file
      writer_->discard();                // the copy removed: the run file as it was
      const std::string what = e.what();
      if (what.find("'" + path + "'") != std::string::npos) throw;  // named as itself, not as its copy
      throw std::invalid_argument(fmt::format("--resume '{}': {}", path, what));
    }
    return;
  }
  // A new file is published at once (rows readable at OUT while the run goes on); one that replaces an
  // existing OUT (--overwrite), or one written whole (a merge), only when the run ends: a crash or a kill
  // before then leaves the old OUT as it was (the rows are in OUT.partial-XXXXXX meanwhile).
  std::error_code ec;
  const bool replaces = mode == OutMode::overwrite && std::filesystem::exists(std::filesystem::symlink_status(path, ec));
  try {
    writer_->create(prov,
                    {io::TableSpec::of<ResultRow>("results", /*chunk_rows=*/64),
                     io::TableSpec::of<SampleRow>("samples", /*chunk_rows=*/256)},
                    replaces || publishing.whole ? io::Publish::at_finish : io::Publish::at_start, publishing.inputs,
                    [](hid_t file) { h5::write_attr(file, "schema_version", io::kSchemaVersion); });
  } catch (const io::PathError& e) {
    throw std::invalid_argument(e.what());  // OUT is one of the inputs: a usage error, nothing written
  }
}

void ResultsFile::open_for_resume(const Provenance& prov) {
  // Checked before copying: a file that is no run file is refused as such, not as a failed copy.
  if (H5Fis_hdf5(path_.c_str()) <= 0)
    throw std::invalid_argument(fmt::format("--resume: '{}' is not an HDF5 file", path_));
  writer_->resume();
  const hid_t file = writer_->file();
  const double resumes = h5::read_attr_double(file, "resume_count").value_or(0.0);  // validated: one number
  if (!h5::exists(file, "results") || !h5::read_attr_double(file, "schema_version"))
    throw std::invalid_argument(fmt::format("--resume: '{}' is not a lobench run file (no schema_version and /results)",
                                            path_));
  if (h5::read_attr_double(file, "dry_run"))
    throw std::invalid_argument(fmt::format("--resume: '{}' was written by --dry-run (nothing measured to resume)", path_));
  version_ = file_version(file, path_);
  if (version_ > io::kSchemaVersion)
    throw std::invalid_argument(fmt::format("--resume: '{}' has schema version {}, newer than this lobench's {}",
                                            path_, version_, io::kSchemaVersion));
  for (const ResultRow& r : read_rows(file, path_)) keys_.insert(r.key());  // through the open handle
  if (version_ == 1) {
    h5::Handle ds(H5Dopen2(file, "results", H5P_DEFAULT), H5Dclose);
    h5::Handle stored(H5Dget_type(ds), H5Tclose);
    writer_->open_table("results", v1_row_type(stored));
    v1_has_operand_ = H5Tget_member_index(stored, "operand") >= 0;
  } else {
    writer_->open_table("results", result_row_type());
    writer_->open_table("samples", sample_row_type());
  }
  rows_ = writer_->table("results").rows();
  writer_->set_attr("resume_count", resumes + 1);
  writer_->set_attr("last_resume_utc", prov.start_utc);
  writer_->set_attr("last_resume_argv", prov.argv);
  h5::flush_to_disk(file);
}

// A --resume copy not published by close() (an exception ends the run) is published by the writer if
// every write to it succeeded; otherwise it is discarded and the run file keeps its rows.
ResultsFile::~ResultsFile() = default;

void ResultsFile::append(ResultRow row, const std::vector<double>& samples) {
  const io::WriteSection writing;
  row.row_id = rows_;
  if (version_ == 1) {
    // Columns that layout lacks must hold what a version-1 reader assumes there (fp32, one process).
    const bool fp32 = row.operand.empty() || row.operand == "fp32";
    if (row.ranks != 1 || !row.shard.empty() || (!v1_has_operand_ && !fp32))
      throw h5::Error(fmt::format("'{}' has an older layout: a row with operand {} on {} ranks cannot be recorded in "
                                  "it (write a new run file)",
                                  path_, row.operand, row.ranks));
  }
  // (versions before 5 have no epilogue column: their rows are fp32's)
  if (version_ < 5 && !(row.epilogue.empty() || row.epilogue == "fp32"))
    throw h5::Error(fmt::format("'{}' has an older layout (schema version {}): a row with epilogue {} cannot be "
                                "recorded in it (write a new run file)",
                                path_, version_, row.epilogue));
  try {
    if (version_ == 1) {
      writer_->append("results", to_v1(row, samples));
    } else {
      // Samples first: a row is only in /results once its samples are on disk (one flush for all).
      std::vector<SampleRow> sample_rows(samples.size());
      std::vector<io::RunFileWriter::Row> rows;
      for (size_t i = 0; i < samples.size(); ++i) {
        sample_rows[i].row_id = row.row_id;
        sample_rows[i].sample = int32_t(i);
        sample_rows[i].seconds = samples[i];
        rows.push_back({"samples", &sample_rows[i], sizeof(SampleRow)});
      }
      rows.push_back({"results", &row, sizeof(ResultRow)});
      writer_->append(rows);  // flushed and fsynced: a kill now loses no row
    }
  } catch (const h5::Error& e) {
    if (writer_->writing_path() == path_) throw;
    throw h5::Error(fmt::format("--resume '{}': {}; the run file keeps its earlier rows, as it was (the copy being "
                                "appended to is discarded)",
                                path_, e.what()));
  }
  keys_.insert(row.key());
  ++rows_;
}

void ResultsFile::set_attr(const std::string& name, double v) { writer_->set_attr(name, v); }

void ResultsFile::set_attr(const std::string& name, const std::string& v) { writer_->set_attr(name, v); }

void ResultsFile::close(const std::string& end_utc) { writer_->finish(end_utc); }

bool ResultsFile::close_interrupted() { return writer_->close_interrupted(); }

int64_t ResultsFile::schema_version_of(hid_t file, const std::string& path) {
  const std::optional<double> v = h5::read_attr_double(file, "schema_version");
  if (!v) return 1;  // version 1 wrote none
  // Only versions this lobench knows how to read: 99, NaN, 2.7 or -3 would be read with a wrong layout.
  if (!(*v >= 1 && *v <= double(io::kSchemaVersion) && *v == std::floor(*v)))
    throw h5::Error(fmt::format("'{}' has schema_version {}: not a version this lobench reads (1 to {}){}", path, *v,
                                io::kSchemaVersion, *v > io::kSchemaVersion ? "; it may be from a newer lobench" : ""));
  return int64_t(*v);
}

std::vector<ResultRow> ResultsFile::read_all(const std::string& path) {
  h5::prepare_library();
  auto f = h5::open_file_read(path);
  return read_rows(f, path);
}

std::vector<SampleRow> ResultsFile::read_samples(const std::string& path) {
  h5::prepare_library();
  auto f = h5::open_file_read(path);
  if (file_version(f, path) >= 2) return h5::read_table<SampleRow>(f, "samples", sample_row_type(), path);
  struct V1Samples {
    int64_t row_id;
    int32_t reps;
    double s[kV1MaxSamples];
  };
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(V1Samples));
  h5::Handle type(t, H5Tclose);
  const hsize_t n = kV1MaxSamples;
  h5::Handle arr(H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &n), H5Tclose);
  H5Tinsert(t, "row_id", offsetof(V1Samples, row_id), H5T_NATIVE_INT64);
  H5Tinsert(t, "reps", offsetof(V1Samples, reps), H5T_NATIVE_INT32);
  H5Tinsert(t, "time_samples_s", offsetof(V1Samples, s), arr);
  std::vector<SampleRow> out;
  for (const V1Samples& r : h5::read_table<V1Samples>(f, "results", type, path))
    for (int i = 0; i < std::min(r.reps, kV1MaxSamples); ++i)
      if (!std::isnan(r.s[i])) out.push_back(SampleRow{r.row_id, int32_t(i), r.s[i]});
  return out;
}

}  // namespace lobench
