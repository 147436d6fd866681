// Small RAII layer over the HDF5 C API: handles that close themselves, typed whole-dataset reads with
// checks that name the dataset and the problem, writes, and attributes.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
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

// Turns off HDF5's own error printing (we throw messages of our own instead). Idempotent.
void silence_errors();

Handle create_file(const std::string& path);     // truncates
Handle open_file_read(const std::string& path);  // throws Error("cannot open ...") if unreadable
Handle open_file_rw(const std::string& path);

bool exists(hid_t loc, const std::string& name);

// A dataset read whole: its dimensions and row-major data.
template <typename T>
struct Array {
  std::vector<int64_t> shape;
  std::vector<T> data;
  int64_t dim(size_t i) const { return i < shape.size() ? shape[i] : 1; }
};

// Reads dataset `name`, checking that its stored type is exactly T's kind and size (float32 is not
// silently converted from float64, nor int32 from int64). Throws Error naming the dataset.
template <typename T>
Array<T> read(hid_t loc, const std::string& name);

template <typename T>
void write(hid_t loc, const std::string& name, const std::vector<int64_t>& shape, const T* data);
void write_scalar(hid_t loc, const std::string& name, double value);

// Reads the whole 1-D table `name` (a compound dataset) into rows of `Row`, whose memory layout is
// described by `row_type`. Throws Error naming `what` (e.g. the file) when it is missing or unreadable.
template <typename Row>
std::vector<Row> read_table(hid_t loc, const std::string& name, hid_t row_type, const std::string& what) {
  if (!exists(loc, name)) throw Error("'" + what + "' has no /" + name + " table");
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(ds), H5Sclose);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  std::vector<Row> rows(n);
  if (n > 0 && H5Dread(ds, row_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) < 0)
    throw Error("cannot read /" + name + " of '" + what + "' (another schema version?)");
  return rows;
}

void write_attr(hid_t obj, const std::string& name, const std::string& value);
void write_attr(hid_t obj, const std::string& name, double value);
void write_attr(hid_t obj, const std::string& name, int64_t value);
std::optional<std::string> read_attr_string(hid_t obj, const std::string& name);
std::optional<double> read_attr_double(hid_t obj, const std::string& name);

}  // namespace lobench::h5
