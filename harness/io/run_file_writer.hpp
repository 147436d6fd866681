// The one writer of HDF5 files. Every HDF5 file lobench writes is made here: the files a command records a
// run in (the run file of `lobench run`, of a `merge`, of one train-xmc run, of one train-seqrec run, of a
// frontier search) are made, grown and closed here, and the files written whole in one go (the output
// of `lobench check` and `quantize`, a train-seqrec checkpoint, `--layouts-out`, a bench's table) are
// made by begin_whole() / write_whole(). The command's own code only says what goes in a file: its
// attributes, datasets and tables, each table declared once by a column list (io/table_row.hpp).
//
// How a file is written, the same for all:
// - one writer per file: OUT's lock (io::OutputLock) is held from create() or resume() to destruction;
// - the file is built (provenance, the header's attributes and groups, the empty tables) in a temporary
//   file beside OUT (OUT.partial-XXXXXX) and flushed; a kill while creating never leaves an OUT that
//   does not open;
// - Publish::at_start (`lobench run`): the temporary file is renamed onto OUT at once and rows are
//   appended to OUT in place, so OUT is readable while the run goes on;
//   Publish::at_finish (the trainers): rows go to the temporary file, readable there while the run goes
//   on (writing_path()), and finish() renames it onto OUT, so an earlier OUT is replaced only by a
//   complete run; destroyed unfinished (an exception), the temporary file is removed and OUT is as it was;
// - resume(): OUT is copied beside itself, rows are appended to the copy, and the copy is renamed onto OUT
//   by finish() or, if every write to it succeeded, by the destructor; a failed write discards it;
// - a file written whole (begin_whole(), write_whole()): its whole content is written into the temporary
//   file, flushed and fsynced, and renamed onto OUT; an error or a signal before the rename (a full
//   disk, an exception) removes the temporary file and OUT is as it was;
// - every append and attribute is flushed before the call returns (rows and the close also fsynced,
//   unless asked not to), inside an io::WriteSection (a second Ctrl-C waits for it: io/README.md).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/io/h5_io.hpp"
#include "harness/io/output_path.hpp"
#include "harness/io/table_row.hpp"
#include "harness/provenance.hpp"

namespace lobench::io {

// A table of a run file: a 1-D table of records (`columns`, a row of `row_size` bytes: Row::columns()
// of a row declared with LOBENCH_ROW_MEMBERS), or with `width` > 0 a 2-D table of rows of `width` int64
// counts (the gradient histograms).
struct TableSpec {
  std::string name;
  size_t row_size = 0;
  const std::vector<Column>* columns = nullptr;
  hsize_t chunk_rows = 64;
  hsize_t width = 0;

  template <typename Row>
  static TableSpec of(std::string name, hsize_t chunk_rows) {
    return TableSpec{std::move(name), sizeof(Row), &Row::columns(), chunk_rows, 0};
  }
  static TableSpec counts(std::string name, hsize_t width, hsize_t chunk_rows) {
    return TableSpec{std::move(name), 0, nullptr, chunk_rows, width};
  }
  // The memory type of a row (compound type of the columns, or int64).
  h5::Handle row_type() const;
};

// A record stored as attributes of one object (e.g. /memory's predicted_* and measured_* bytes), its
// fields declared by a column list: every column written as attribute PREFIX + name (int64 or float64).
void write_record_attrs(hid_t obj, const std::string& prefix, const void* record, const std::vector<Column>& columns);

enum class Publish { at_start, at_finish };

class RunFileWriter {
 public:
  // Writes the file's content: attributes and groups of the root `file`.
  using Header = void (*)(hid_t file, const void* context);

  // Checks OUT's place (io::check_output_place: nothing but a regular file there, its folder exists), then
  // takes OUT's lock (one writer per file). Throws PathError naming `option` and `path`.
  RunFileWriter(const std::string& path, const std::string& option);
  ~RunFileWriter();
  RunFileWriter(const RunFileWriter&) = delete;
  RunFileWriter& operator=(const RunFileWriter&) = delete;

  // A new file at `path` (see the top): provenance, then write_header(file), then the empty tables (in
  // the order the files were always made: the layout of a file on disk is as before).
  // `inputs`: files OUT must not be (PathError). Errors name `path`.
  template <typename WriteHeader>
  void create(const Provenance& prov, const std::vector<TableSpec>& tables, Publish publish,
              const std::vector<std::string>& inputs, const WriteHeader& write_header) {
    create_impl(prov, tables, publish, inputs, [](hid_t f, const void* w) { (*static_cast<const WriteHeader*>(w))(f); },
                &write_header);
  }
  // Copies the existing file `path` beside itself and opens the copy to append to (see the top). The
  // caller checks the copy (file()) and opens its tables (open_table). Throws std::invalid_argument
  // naming `path` when it cannot be copied.
  void resume();

  // A file written whole (the output of a check, a quantized array, a checkpoint replacing the previous
  // one, a table). begin_whole() checks OUT against `inputs` (never one of them) and, unless `overwrite`,
  // refuses a file already there (PathError "OPTION 'OUT' exists; give --overwrite ..."), and makes the
  // temporary file beside OUT: called before the work whose result OUT holds, so that a refused OUT
  // costs nothing. write_whole(content) then calls content(file) on the new, empty temporary file (it
  // writes everything the file holds, provenance included where the file has it: nothing is added),
  // flushes and fsyncs it, and renames it onto OUT. An exception from content, the disk or the rename
  // removes the temporary file: OUT is as it was. Nothing may be written afterwards.
  void begin_whole(const std::vector<std::string>& inputs, bool overwrite);
  template <typename Content>
  void write_whole(const Content& content) {
    write_whole_impl([](hid_t f, const void* c) { (*static_cast<const Content*>(c))(f); }, &content);
  }

  hid_t file() const { return file_; }
  // f(file) in a write section, then flushed: more of a new file's content (e.g. attributes of its tables).
  template <typename F>
  void describe(const F& f) {
    write_section([&] { f(hid_t(file_)); });
  }
  const std::string& path() const { return path_; }
  // Where rows are written now: path(), or the temporary file (Publish::at_finish, resume()).
  const std::string& writing_path() const;

  // Creates an empty table in the open file (one known only later, e.g. data-parallel runs' /ranks).
  void add_table(const TableSpec& table);
  // Opens table `name` of the file for appending rows of `row_type` (a resume, an older layout).
  void open_table(const std::string& name, hid_t row_type);
  bool has_table(const std::string& name) const { return tables_.count(name) > 0; }
  const h5::Table& table(const std::string& name) const;

  // Appends rows to tables, then flushes (and with Durability::fsync, fsyncs) once: a row is in the
  // file, whole, when append returns. Between the appends of one call nothing is flushed, so the rows
  // of a call (a /results row after its /samples) land together.
  enum class Durability { flush, fsync };
  struct Row {
    const char* table;
    const void* data;
    size_t bytes;
  };
  void append(const std::vector<Row>& rows, Durability d = Durability::fsync);
  template <typename R>
  void append(const char* table, const R& row, Durability d = Durability::fsync) {
    static_assert(std::is_trivially_copyable_v<R>, "a row is a plain record");
    append({Row{table, &row, sizeof(R)}}, d);
  }

  // A root attribute (or of group `group`), flushed.
  void set_attr(const std::string& name, const std::string& value, const std::string& group = "");
  void set_attr(const std::string& name, double value, const std::string& group = "");
  void set_attr(const std::string& name, int64_t value, const std::string& group = "");
  void set_record_attrs(const std::string& group, const std::string& prefix, const void* record,
                        const std::vector<Column>& columns);

  // Closes the file and removes the temporary file or resume copy unpublished: OUT is as it was (a
  // resumed file that failed the caller's checks).
  void discard();
  // Writes end_utc, flushes and fsyncs, closes, and publishes the file (renames the temporary file or
  // the resume copy onto OUT). Nothing may be written afterwards.
  void finish(const std::string& end_utc);
  // A run a signal stopped: a file that was to replace an existing OUT (created Publish::at_finish over
  // one: --overwrite) is discarded and OUT stays as it was; any other (published at the start, a resume
  // copy, a new file) is closed and published as finish() does but without end_utc (removed where a
  // resumed file had one: this run did not end). Returns whether OUT holds this run's rows.
  bool close_interrupted();

 private:
  void write_section(const std::function<void()>& f);
  void create_impl(const Provenance& prov, const std::vector<TableSpec>& tables, Publish publish,
                   const std::vector<std::string>& inputs, Header header, const void* context);
  void write_whole_impl(Header content, const void* context);
  template <typename F>
  void write(const F& f);
  template <typename T>
  void set_attr_of(const std::string& group, const std::string& name, const T& value);  // f() in a WriteSection, the file marked unhealthy unless it succeeds
  void close_and_publish();
  void close_unfinished();  // close_interrupted's publishing branch

  std::string path_, option_;
  OutputLock lock_;                       // one writer per run file, for the whole run
  std::unique_ptr<OutputFile> pending_;   // the temporary file or resume copy not yet renamed onto OUT
  bool publish_when_destroyed_ = false;   // resume(): the copy is published even without finish()
  bool replaces_ = false;                 // created Publish::at_finish over an existing OUT
  bool healthy_ = true;                   // every write succeeded
  h5::Handle file_;
  std::map<std::string, h5::Table> tables_;
};

}  // namespace lobench::io
