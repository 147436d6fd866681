// Small RAII layer over the HDF5 C API: handles that close themselves, typed whole-dataset reads with
// checks that name the dataset and the problem, writes, tables read whole or appended row by row, and
// attributes.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace lobench::h5 {

// Any HDF5 failure, with a message that names the file or dataset.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns one hid_t and closes it with the right H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// Called before any use of HDF5 (every open and create here calls it): turns off HDF5's own error printing
// (we throw messages of our own instead) and, at the first call, its cleanup at exit (h5_io.cpp says
// why). Idempotent.
void prepare_library();

Handle create_file(const std::string& path);     // truncates
Handle open_file_read(const std::string& path);  // throws Error("cannot open ...") if unreadable
Handle open_file_rw(const std::string& path);

bool exists(hid_t loc, const std::string& name);

// Flushes the file holding `obj` (H5Fflush: every change handed to the OS, so the file on disk is
// complete and consistent if the process dies now) and fsyncs it (so it survives power loss too, where
// the file system supports it). Throws Error when the flush fails or the disk reports an I/O error.
void flush_to_disk(hid_t obj);

// What a dataset's header says, read without touching its data: the shape (empty: a scalar), the
// element count (overflow-checked) and the stored element type.
struct DatasetInfo {
  std::vector<int64_t> shape;
  int64_t elements = 0;
  H5T_class_t type_class = H5T_NO_CLASS;
  size_t type_size = 0;
  bool is_signed = false;
  std::string type_name;  // float32, int64, uint8, string, compound, ...
  int64_t dim(size_t i) const { return i < shape.size() ? shape[i] : 1; }
};

// Reads the header of dataset `name`. Throws Error naming the dataset when it is missing, is not a
// dataset (a group, a link to nothing), has an unreadable or null shape, when its element count or byte
// count does not fit in int64, or when it claims more bytes than the file stores for it (a small file
// whose header claims D = 2^62, or a truncated one: unfiltered data must be stored in full).
DatasetInfo inspect(hid_t loc, const std::string& name);

// "[2, 3]" for messages.
std::string shape_text(const std::vector<int64_t>& shape);

// A dataset read whole: its dimensions and row-major data.
template <typename T>
struct Array {
  std::vector<int64_t> shape;
  std::vector<T> data;
  int64_t dim(size_t i) const { return i < shape.size() ? shape[i] : 1; }
};

// Reads dataset `name`, checking first (inspect) its header, that its stored type is exactly T's kind
// and size (float32 is not silently converted from float64, nor int32 from int64), and that it holds at
// most `max_bytes` bytes, all before allocating. Throws Error naming the dataset.
template <typename T>
Array<T> read(hid_t loc, const std::string& name, int64_t max_bytes = INT64_MAX);

// Throws Error naming `name` unless `info` describes elements of exactly T's kind, size and sign.
template <typename T>
void require_type(const DatasetInfo& info, const std::string& name);

template <typename T>
void write(hid_t loc, const std::string& name, const std::vector<int64_t>& shape, const T* data);
void write_scalar(hid_t loc, const std::string& name, double value);

// Reads the whole 1-D table `name` (a compound dataset) into rows of `Row`, whose memory layout is
// described by `row_type`. Throws Error naming `what` (e.g. the file) when it is missing or unreadable.
// The row count is checked against what the file stores before the rows are allocated.
template <typename Row>
std::vector<Row> read_table(hid_t loc, const std::string& name, hid_t row_type, const std::string& what) {
  if (!exists(loc, name)) throw Error("'" + what + "' has no /" + name + " table");
  DatasetInfo info;
  try {
    info = inspect(loc, name);
  } catch (const Error& e) {
    throw Error("/" + name + " of '" + what + "': " + e.what());
  }
  if (info.shape.size() != 1) throw Error("/" + name + " of '" + what + "' is not a 1-D table of rows");
  if (info.type_class != H5T_COMPOUND)
    throw Error("/" + name + " of '" + what + "' holds " + info.type_name + " rows, not a table's records");
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  std::vector<Row> rows(size_t(info.elements));
  if (info.elements > 0 && H5Dread(ds, row_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) < 0)
    throw Error("cannot read /" + name + " of '" + what + "' (another schema version?)");
  return rows;
}

// A table on disk that grows one row at a time, so that a killed run keeps every row it finished:
// dataset `name`, 1-D with rows of `row_type` (a compound type: one row a record), or with width > 0
// 2-D [rows, width] with rows of `width` elements of `row_type`. Created empty with unlimited rows,
// chunked `chunk_rows` rows at a time. Errors name the table and `what` (the file).
class Table {
 public:
  enum class Flush { yes, no };

  Table() = default;
  // Creates the table in `loc` (a file or group); throws Error if it cannot.
  static Table create(hid_t loc, const std::string& name, hid_t row_type, hsize_t chunk_rows, const std::string& what,
                      hsize_t width = 0);
  // Opens an existing table to append `row_type` rows after those there. Throws Error when it is
  // missing, has another rank or width, holds another kind of row, or (compound rows) has a column
  // that `row_type` lacks or holds a column as another kind (string, integer, float, array). Columns of
  // `row_type` the stored table lacks (a file written before they existed) are allowed and listed in
  // missing_columns(): appended rows lose them.
  static Table open(hid_t loc, const std::string& name, hid_t row_type, const std::string& what, hsize_t width = 0);

  bool valid() const { return dataset_.valid(); }
  hid_t id() const { return dataset_.get(); }  // the dataset, e.g. for attributes
  int64_t rows() const { return rows_; }
  const std::set<std::string>& missing_columns() const { return missing_; }

  // Extends the table by one row, writes `row` (`bytes` long: the row type's size, times width) into
  // it and, with Flush::yes, flushes the file.
  void append(const void* row, size_t bytes, Flush flush = Flush::yes);
  template <typename Row>
  void append(const Row& row, Flush flush = Flush::yes) {
    static_assert(std::is_trivially_copyable_v<Row>, "a row is a plain record; pass a pointer and size otherwise");
    append(&row, sizeof(Row), flush);
  }

 private:
  Table(Handle dataset, Handle type, std::string name, std::string what, hsize_t width, int64_t rows);
  Handle dataset_, type_;
  std::string name_, what_;
  hsize_t width_ = 0;
  int64_t rows_ = 0;
  std::set<std::string> missing_;
};

void write_attr(hid_t obj, const std::string& name, const std::string& value);
void write_attr(hid_t obj, const std::string& name, double value);
void write_attr(hid_t obj, const std::string& name, int64_t value);
// Attributes are read through one validated reader: nothing when absent; otherwise the attribute must
// hold exactly one value (a scalar, or an array of one element as h5py writes `[x]`) of the right kind,
// or Error names it and says what it holds instead. Strings: variable-length or fixed-length (h5py's
// np.bytes_, whose stored size has no room for a terminator), ASCII or UTF-8, read in full up to the
// first NUL. Numbers: any integer or float type, converted to the type asked for.
std::optional<std::string> read_attr_string(hid_t obj, const std::string& name);
std::optional<double> read_attr_double(hid_t obj, const std::string& name);
std::optional<int64_t> read_attr_int64(hid_t obj, const std::string& name);

}  // namespace lobench::h5
