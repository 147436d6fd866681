#include "harness/io/run_file_writer.hpp"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/provenance_attrs.hpp"

namespace lobench::io {

h5::Handle TableSpec::row_type() const {
  if (columns) return compound_type(row_size, *columns);
  return h5::Handle(H5Tcopy(H5T_NATIVE_INT64), H5Tclose);
}

void write_record_attrs(hid_t obj, const std::string& prefix, const void* record, const std::vector<Column>& columns) {
  const char* base = static_cast<const char*>(record);
  for (const Column& c : columns) {
    const std::string name = prefix + c.name;
    if (c.kind == ColumnKind::int64) {
      int64_t v;
      std::memcpy(&v, base + c.offset, sizeof v);
      h5::write_attr(obj, name, v);
    } else if (c.kind == ColumnKind::int32) {
      int32_t v;
      std::memcpy(&v, base + c.offset, sizeof v);
      h5::write_attr(obj, name, int64_t(v));
    } else if (c.kind == ColumnKind::float64) {
      double v;
      std::memcpy(&v, base + c.offset, sizeof v);
      h5::write_attr(obj, name, v);
    } else {
      h5::write_attr(obj, name, std::string(base + c.offset, strnlen(base + c.offset, c.size)));
    }
  }
}

namespace {

// `path`, once io::check_output_place has found nothing in the way there: checked before its lock file
// is made beside it (no OUT.lock beside a device, in a folder that does not exist).
const std::string& checked_place(const std::string& path, const std::string& option) {
  check_output_place(path, {}, option);
  return path;
}

}  // namespace

RunFileWriter::RunFileWriter(const std::string& path, const std::string& option)
    : path_(path), option_(option), lock_(checked_place(path, option), option) {
  h5::prepare_library();
}

template <typename F>
void RunFileWriter::write(const F& f) {
  const WriteSection writing;  // a second Ctrl-C waits for it (io/interrupt_guard.hpp)
  const bool was_healthy = healthy_;
  healthy_ = false;  // until the write has succeeded
  f();
  healthy_ = was_healthy;
}

void RunFileWriter::create_impl(const Provenance& prov, const std::vector<TableSpec>& tables, Publish publish,
                                const std::vector<std::string>& inputs, Header header, const void* context) {
  write([&] {
    std::error_code ec;
    replaces_ = publish == Publish::at_finish && std::filesystem::exists(std::filesystem::symlink_status(path_, ec));
    pending_ = std::make_unique<OutputFile>(path_, inputs, option_, /*take_lock=*/false);  // lock_ holds OUT
    file_ = h5::create_file(pending_->temp_path());
    write_provenance(file_, prov);
    header(file_, context);
    for (const TableSpec& t : tables)  // (errors name path_, the file the user will read)
      tables_[t.name] = h5::Table::create(file_, t.name, t.row_type(), t.chunk_rows, path_, t.width);
    h5::flush_to_disk(file_);
    if (publish == Publish::at_finish) return;
    // Published now, empty: from here on rows are appended to OUT itself.
    tables_.clear();
    file_.reset();
    pending_->commit();
    pending_.reset();
    file_ = h5::open_file_rw(path_);
    for (const TableSpec& t : tables) open_table(t.name, t.row_type());
  });
}

void RunFileWriter::begin_whole(const std::vector<std::string>& inputs, bool overwrite) {
  pending_ = std::make_unique<OutputFile>(path_, inputs, option_, /*take_lock=*/false);  // lock_ holds OUT
  pending_->refuse_existing_unless(overwrite);
}

void RunFileWriter::write_whole_impl(Header content, const void* context) {
  if (!pending_ || file_.valid()) throw std::logic_error("RunFileWriter::write_whole() without begin_whole()");
  const WriteSection writing;  // up to the rename: a second signal waits for it
  write([&] {
    file_ = h5::create_file(pending_->temp_path());
    content(file_, context);
    h5::flush_to_disk(file_);
  });
  close_and_publish();
}

void RunFileWriter::write_section(const std::function<void()>& f) {
  write([&] {
    f();
    h5::flush_to_disk(file_);
  });
}

void RunFileWriter::resume() {
  pending_ = std::make_unique<OutputFile>(path_, std::vector<std::string>{}, option_, /*take_lock=*/false);
  std::error_code ec;
  std::filesystem::copy_file(path_, pending_->temp_path(), std::filesystem::copy_options::overwrite_existing, ec);
  if (ec)
    throw std::invalid_argument(fmt::format("--resume '{}': cannot copy it to append to the copy ({}); nothing was "
                                            "changed",
                                            path_, ec.message()));
  try {
    file_ = h5::open_file_rw(pending_->temp_path());
  } catch (const h5::Error&) {  // (it named the copy, which the user never gave)
    throw h5::Error(fmt::format("--resume '{}': cannot open it to append to it (not an HDF5 file, or cut short); "
                                "nothing was changed",
                                path_));
  }
  publish_when_destroyed_ = true;
}

const std::string& RunFileWriter::writing_path() const { return pending_ ? pending_->temp_path() : path_; }

void RunFileWriter::add_table(const TableSpec& t) {
  write([&] { tables_[t.name] = h5::Table::create(file_, t.name, t.row_type(), t.chunk_rows, path_, t.width); });
}

void RunFileWriter::open_table(const std::string& name, hid_t row_type) {
  tables_[name] = h5::Table::open(file_, name, row_type, path_);
}

const h5::Table& RunFileWriter::table(const std::string& name) const {
  const auto it = tables_.find(name);
  if (it == tables_.end()) throw h5::Error(fmt::format("'{}' has no /{} table open for writing", path_, name));
  return it->second;
}

void RunFileWriter::append(const std::vector<Row>& rows, Durability d) {
  write([&] {
    for (const Row& r : rows) {
      const auto it = tables_.find(r.table);
      if (it == tables_.end()) throw h5::Error(fmt::format("'{}' has no /{} table open for writing", path_, r.table));
      it->second.append(r.data, r.bytes, h5::Table::Flush::no);
    }
    if (d == Durability::fsync) {
      h5::flush_to_disk(file_);  // nothing left unwritten between rows: a kill now loses no row
    } else if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) {
      throw h5::Error(fmt::format("cannot flush '{}'", writing_path()));
    }
  });
}

namespace {

// f(the object an attribute goes on): the root, or the group `group` (opened, or created when missing).
template <typename F>
void on_object(hid_t file, const std::string& group, const F& f) {
  if (group.empty()) return f(file);
  h5::Handle g(h5::exists(file, group) ? H5Gopen2(file, group.c_str(), H5P_DEFAULT)
                                       : H5Gcreate2(file, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Gclose);
  if (!g.valid()) throw h5::Error("cannot open or create /" + group);
  f(g.get());
}

}  // namespace

template <typename T>
void RunFileWriter::set_attr_of(const std::string& group, const std::string& name, const T& value) {
  write([&] {
    on_object(file_, group, [&](hid_t obj) { h5::write_attr(obj, name, value); });
    if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) healthy_ = false;
  });
}

void RunFileWriter::set_attr(const std::string& name, const std::string& value, const std::string& group) {
  set_attr_of(group, name, value);
}
void RunFileWriter::set_attr(const std::string& name, double value, const std::string& group) {
  set_attr_of(group, name, value);
}
void RunFileWriter::set_attr(const std::string& name, int64_t value, const std::string& group) {
  set_attr_of(group, name, value);
}

void RunFileWriter::set_record_attrs(const std::string& group, const std::string& prefix, const void* record,
                                     const std::vector<Column>& columns) {
  write([&] {
    on_object(file_, group, [&](hid_t obj) { write_record_attrs(obj, prefix, record, columns); });
    if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) healthy_ = false;
  });
}

void RunFileWriter::discard() {
  tables_.clear();
  file_.reset();
  pending_.reset();  // removes the temporary file or copy
  publish_when_destroyed_ = false;
}

void RunFileWriter::finish(const std::string& end_utc) {
  const WriteSection writing;  // up to the rename
  write([&] {
    h5::write_attr(file_, "end_utc", end_utc);
    h5::flush_to_disk(file_);
  });
  close_and_publish();
}

bool RunFileWriter::close_interrupted() {
  if (replaces_ && pending_) {
    discard();
    return false;
  }
  close_unfinished();
  return true;
}

void RunFileWriter::close_unfinished() {
  const WriteSection writing;  // up to the rename
  write([&] {
    // (a resumed copy carries the end_utc of the run it continues: this run did not end)
    if (H5Aexists(file_, "end_utc") > 0 && H5Adelete(file_, "end_utc") < 0)
      throw h5::Error("cannot remove the attribute end_utc of '" + path_ + "'");
    h5::flush_to_disk(file_);
  });
  close_and_publish();
}

void RunFileWriter::close_and_publish() {
  tables_.clear();
  file_.reset();  // everything was flushed and fsynced by the last write
  if (!pending_) return;
  pending_->commit();
  pending_.reset();
  publish_when_destroyed_ = false;
}

RunFileWriter::~RunFileWriter() {
  const WriteSection writing;
  if (file_.valid() && H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) healthy_ = false;
  // A resume copy not published by finish() (an exception ends the run) is published if every write to
  // it succeeded; otherwise, as a new file not finished, it is removed (OutputFile's destructor, after
  // the file is closed below) and OUT is as it was.
  if (pending_ && publish_when_destroyed_ && healthy_) {
    try {
      close_and_publish();
    } catch (const std::exception&) {  // nothing to do: OUT is as it was
    }
  }
  tables_.clear();
  file_.reset();
}

}  // namespace lobench::io
