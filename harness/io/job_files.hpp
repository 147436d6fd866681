// The run files of a training job, declared once: its command's name, its tables (each by its one column
// list), its attribute records (e.g. /memory's byte counts) and a paragraph on what a file holds. A
// training job (sweep/training_job.hpp) writes one run file per point into --out-dir; everything that
// reads or joins such files finds the job here by the file's `schema` attribute ("lobench NAME run,
// version V") instead of a list of names: `lobench merge` (io/merge_run_folders.hpp, and the job's own
// rule for parts that are files: PartFileMerge), `--resume`
// (io/recorded_run.hpp), `lobench schema` (a SCHEMA.md section per job, generated from the declaration)
// and the job's own writer (its tables created from the same TableSpecs). Registered by
// sweep::register_training_job; io holds the list so that the layers below the jobs can read it.
#pragma once

#include <string>
#include <vector>

#include "harness/io/run_file_writer.hpp"
#include "harness/io/table_row.hpp"
#include "harness/provenance.hpp"

namespace lobench::io {

// A table of the job's run files: how the writer creates it (TableSpec: a row type from a column list,
// or a 2-D table of counts) and one line for SCHEMA.md.
struct JobTable {
  TableSpec spec;
  std::string what;
};

// Attributes of one object written as a record (io::write_record_attrs): PREFIX + column name for each
// prefix, e.g. /memory's predicted_weights_bytes.
struct JobRecord {
  std::string object;                 // "memory": the group /memory
  std::vector<std::string> prefixes;  // "predicted_", "measured_"
  const std::vector<Column>* columns = nullptr;
  std::string what;
};

// A job's merge rule for parts that are single files of its own (train-xmc --frontier's search files),
// beside the folders of run files every job's parts are (io/merge_run_folders.hpp): whether a path is
// such a part, and how the parts join (returns `lobench merge`'s summary line). Functions, not an
// include: the rule lives with the job, above io.
struct PartFileMerge {
  bool (*is_part)(const std::string& path) = nullptr;
  std::string (*merge)(const std::string& out, const std::vector<std::string>& parts, const Provenance& prov,
                       bool overwrite) = nullptr;
};

struct JobFiles {
  std::string command;  // `lobench COMMAND`, e.g. train-xmc
  int version = 1;      // of the run-file layout, in the `schema` attribute
  std::string about;    // Markdown: what a run file holds beside its tables (root attributes, statuses)
  std::vector<JobTable> tables;
  std::vector<JobRecord> records;
  PartFileMerge part_files;  // empty: the job's parts are only folders of run files

  // "lobench train-xmc run": the start of every such file's `schema` attribute.
  std::string schema_prefix() const { return "lobench " + command + " run"; }
  // "lobench train-xmc run, version 1": what the writer records.
  std::string schema() const;
  // The table named `name`. Throws std::logic_error when the job declares none.
  const JobTable& table(const std::string& name) const;
};

// Adds a job's files to the list (a second job of the same command is a programming error:
// std::logic_error). Called from static initialisation, through sweep::register_training_job.
void register_job_files(const JobFiles& files);
// Every registered job's files, in order of their command names.
std::vector<const JobFiles*> registered_job_files();
// The job whose run files have this `schema` attribute, or null (not a training job's run file).
const JobFiles* job_files_of_schema(const std::string& schema);
// The registered commands, "train-seqrec, train-xmc", for messages.
std::string registered_job_names();

// The job's section of results/SCHEMA.md: `about`, then each table's and record's columns.
std::string job_files_markdown(const JobFiles& files);

}  // namespace lobench::io
