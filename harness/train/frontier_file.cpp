#include "harness/train/frontier_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "harness/io/interrupt_guard.hpp"
#include "harness/io/output_path.hpp"

namespace lobench::train {

namespace {

h5::Handle cell_type() { return io::compound_type(sizeof(FrontierCellRow), FrontierCellRow::columns()); }
h5::Handle line_type() { return io::compound_type(sizeof(FrontierLineRow), FrontierLineRow::columns()); }

void write_header(hid_t file, const FrontierHeader& h) {
  h5::write_attr(file, "schema", std::string(kFrontierSchema));
  h5::write_attr(file, "dataset", h.dataset);
  h5::write_attr(file, "frontier", h.identity);
  h5::write_attr(file, "partition", h.partition);
  h5::write_attr(file, "metric", h.metric);
  h5::write_attr(file, "config", h.config);
  h5::write_attr(file, "lines", h.lines);
}

// Refuses a file that is not this search's (another schema, other settings, another partition).
void check_resumable(hid_t file, const std::string& path, const FrontierHeader& h) {
  const auto schema = h5::read_attr_string(file, "schema");
  if (schema != std::string(kFrontierSchema) || !h5::exists(file, "cells") || !h5::exists(file, "frontier"))
    throw std::invalid_argument(fmt::format("--resume: '{}' is not a frontier run file ({})", path, kFrontierSchema));
  const auto identity = h5::read_attr_string(file, "frontier").value_or("");
  if (identity != h.identity)
    throw std::invalid_argument(fmt::format("--resume: '{}' holds another search ({}); this one is {}", path, identity,
                                            h.identity));
  const auto part = h5::read_attr_string(file, "partition").value_or("");
  if (part != h.partition)
    throw std::invalid_argument(fmt::format("--resume: '{}' holds partition {}, this is {}", path, part, h.partition));
}

}  // namespace

const std::vector<io::Column>& FrontierCellRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(FrontierCellRow, LOBENCH_FRONTIER_CELL_COLUMNS);
  return c;
}

const std::vector<io::Column>& FrontierLineRow::columns() {
  static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(FrontierLineRow, LOBENCH_FRONTIER_LINE_COLUMNS);
  return c;
}

FrontierRunFile::FrontierRunFile(const std::string& path, const Provenance& prov, const FrontierHeader& header,
                                 bool overwrite, bool resume) {
  const io::WriteSection writing;
  h5::prepare_library();
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
  try {
    if (overwrite) {
      if (const std::string kind = io::not_regular_file(path); !kind.empty())
        throw io::PathError(fmt::format("--out '{}' is {}, not a regular file: refusing to replace it", path, kind));
    } else {
      io::check_append_target(path, resume);
    }
    writer_ = std::make_unique<io::RunFileWriter>(path, "--out");
  } catch (const io::PathError& e) {
    throw std::invalid_argument(e.what());  // a usage error: exit 2, the file untouched
  }
  if (resume && exists) {
    if (H5Fis_hdf5(path.c_str()) <= 0)
      throw std::invalid_argument(fmt::format("--resume: '{}' is not an HDF5 file", path));
    try {
      writer_->resume();
      const hid_t file = writer_->file();
      check_resumable(file, path, header);
      cells_ = h5::read_table<FrontierCellRow>(file, "cells", cell_type(), path);
      lines_ = h5::read_table<FrontierLineRow>(file, "frontier", line_type(), path);
      writer_->open_table("cells", cell_type());
      writer_->open_table("frontier", line_type());
      const double resumes = h5::read_attr_double(file, "resume_count").value_or(0.0);
      writer_->set_attr("resume_count", resumes + 1);
      writer_->set_attr("last_resume_argv", prov.argv);
    } catch (...) {
      writer_->discard();  // the copy removed: the file as it was
      throw;
    }
    return;
  }
  writer_->create(prov,
                  {io::TableSpec::of<FrontierCellRow>("cells", /*chunk_rows=*/64),
                   io::TableSpec::of<FrontierLineRow>("frontier", /*chunk_rows=*/16)},
                  exists ? io::Publish::at_finish : io::Publish::at_start, {},
                  [&](hid_t file) { write_header(file, header); });
}

// Not closed (an exception ends the search): a resume copy is published if every write succeeded, a
// new file keeps its rows (published at start), a replacement is discarded (the old file stays).
FrontierRunFile::~FrontierRunFile() = default;

void FrontierRunFile::append_cell(const FrontierCellRow& row) {
  writer_->append("cells", row);
  cells_.push_back(row);
}

void FrontierRunFile::append_line(const FrontierLineRow& row) {
  writer_->append("frontier", row);
  lines_.push_back(row);
}

void FrontierRunFile::set_attr(const std::string& name, double value) { writer_->set_attr(name, value); }

void FrontierRunFile::close() { writer_->finish(utc_now()); }

bool FrontierRunFile::close_interrupted() { return writer_->close_interrupted(); }

FrontierHeader FrontierRunFile::read_header(const std::string& path) {
  h5::prepare_library();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw std::invalid_argument(fmt::format("'{}' is not an HDF5 file", path));
  auto f = h5::open_file_read(path);
  if (h5::read_attr_string(f, "schema") != std::string(kFrontierSchema))
    throw std::invalid_argument(fmt::format("'{}' is not a frontier run file ({})", path, kFrontierSchema));
  FrontierHeader h;
  h.dataset = h5::read_attr_string(f, "dataset").value_or("");
  h.identity = h5::read_attr_string(f, "frontier").value_or("");
  h.partition = h5::read_attr_string(f, "partition").value_or("");
  h.metric = h5::read_attr_string(f, "metric").value_or("");
  h.config = h5::read_attr_string(f, "config").value_or("");
  h.lines = h5::read_attr_int64(f, "lines").value_or(0);
  return h;
}

std::vector<FrontierCellRow> FrontierRunFile::read_cells(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<FrontierCellRow>(f, "cells", cell_type(), path);
}

std::vector<FrontierLineRow> FrontierRunFile::read_lines(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<FrontierLineRow>(f, "frontier", line_type(), path);
}

}  // namespace lobench::train
