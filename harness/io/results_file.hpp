// The run file of `lobench run`: one HDF5 file per run, provenance as root attributes, a `/results` table
// with one row per (variant, point) (harness/io/result_row.hpp, the one definition of the row) and
// `/samples` with every timed run, appended, flushed and fsynced as each row completes: a killed run keeps
// every finished row and the file can be read while the run goes on (results/SCHEMA.md). Written by the
// one run-file writer (io/run_file_writer.hpp, Publish::at_start: created in a temporary file, renamed,
// then grown in place); this class says what the file holds, and reads and resumes files of every schema
// version (harness/io/README.md: what survives Ctrl-C, SIGTERM, SIGKILL).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/result_row.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/provenance.hpp"

namespace lobench {

using io::ResultRow;
using io::SampleRow;

// What to do with an --out that exists already. A run never truncates a file it was not told to.
enum class OutMode {
  create_new,  // refuse (std::invalid_argument naming the file and the two options) if it exists
  overwrite,   // replace it (only a regular file; never a directory or device)
  resume,      // append to it, skipping rows already there (refused unless it is a lobench run file)
};

// --resume never puts the rows already there at risk: the file is copied beside itself
// (OUT.partial-XXXXXX), the new rows are appended to the copy, and the copy is renamed onto OUT when the
// run ends (normally, or stopped by a signal). A write that fails (a full disk) discards the copy and
// leaves OUT exactly as it was; a run killed by SIGKILL leaves OUT as it was and its copy beside it.
class ResultsFile {
 public:
  // How OUT is published beyond what OutMode says; `lobench run` takes the defaults.
  struct Publishing {
    bool whole = false;               // published only by close(): OUT complete or not at all (a merge)
    std::vector<std::string> inputs;  // files OUT must never be (the parts of a merge)
    std::string option = "--out";     // how messages name OUT
  };
  ResultsFile(const std::string& path, const Provenance& prov, OutMode mode) : ResultsFile(path, prov, mode, Publishing{}) {}
  ResultsFile(const std::string& path, const Provenance& prov, OutMode mode, const Publishing& publishing);
  ~ResultsFile();

  bool has(const std::string& key) const { return keys_.count(key) > 0; }
  int64_t rows() const { return rows_; }  // in /results (also after close())
  int64_t schema_version() const { return version_; }
  // Sets row_id, writes the row and its samples, and flushes and fsyncs before returning.
  void append(ResultRow row, const std::vector<double>& samples);
  void set_attr(const std::string& name, double v);
  void set_attr(const std::string& name, const std::string& v);
  // f(file) in a write section, then flushed: more content of the file (a merge's /parts).
  template <typename F>
  void describe(const F& f) {
    writer_->describe(f);
  }
  void close(const std::string& end_utc);
  // The run stopped by a signal: a new or resumed OUT keeps the rows recorded so far (closed without
  // end_utc: the run did not end; --resume continues it); a file that was to replace an existing OUT
  // (--overwrite) is removed unpublished, and OUT stays as it was. Returns whether OUT holds this run's
  // rows.
  bool close_interrupted();

  // Every row of a run file of any schema version, columns matched by name (a column the file lacks
  // reads at its default); version-1 sentinels (−1, and 0 sizes in rows that were not measured) read
  // as NaN. Throws h5::Error naming the file when it is not a run file.
  static std::vector<ResultRow> read_all(const std::string& path);
  // The schema_version of an open run file (1 when absent). Throws h5::Error naming `path` unless it is
  // an integer from 1 to io::kSchemaVersion (99, NaN, 2.7, -3 are refused, not read with a wrong layout).
  static int64_t schema_version_of(hid_t file, const std::string& path);
  // The samples of every row (version-1 files: from their time_samples_s column).
  static std::vector<SampleRow> read_samples(const std::string& path);

 private:
  void open_for_resume(const Provenance& prov);
  std::unique_ptr<io::RunFileWriter> writer_;
  std::set<std::string> keys_;
  int64_t rows_ = 0;
  std::string path_;
  int64_t version_ = io::kSchemaVersion;
  bool v1_has_operand_ = true;
};

// The HDF5 compound type of ResultRow, generated from the column list.
h5::Handle result_row_type();

}  // namespace lobench
