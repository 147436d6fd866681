#include "harness/io/h5_io.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

#include "variants/checked_math.hpp"

namespace lobench::h5 {

// HDF5's own cleanup at exit goes off before the library's first use (H5dont_atexit must come first):
// after a close that failed (a full disk: the flush inside H5Fclose fails and HDF5 1.10 keeps the
// half-closed file in its tables), that cleanup crashed the process at exit (SIGSEGV in H5F__close_cb),
// turning a clean error and exit status into a crash (RunFileWriter.AWholeFileThatFails…). Every file
// lobench opens is closed by its Handle, so the cleanup has nothing else to do.
void prepare_library() {
  static const bool no_cleanup_at_exit = H5dont_atexit() >= 0;
  (void)no_cleanup_at_exit;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Handle create_file(const std::string& path) {
  prepare_library();
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot create HDF5 file '{}'", path));
  return Handle(f, H5Fclose);
}

Handle open_file_read(const std::string& path) {
  prepare_library();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot open '{}' as an HDF5 file (missing, unreadable or corrupt)", path));
  return Handle(f, H5Fclose);
}

Handle open_file_rw(const std::string& path) {
  prepare_library();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot open '{}' for appending (missing, unreadable or corrupt)", path));
  return Handle(f, H5Fclose);
}

bool exists(hid_t loc, const std::string& name) { return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0; }

namespace {

// The name of the file holding `obj`, for messages ("" when unknown).
std::string file_name_of(hid_t obj) {
  const ssize_t len = H5Fget_name(obj, nullptr, 0);
  if (len <= 0) return "";
  std::string name(size_t(len) + 1, '\0');
  H5Fget_name(obj, name.data(), name.size());
  name.resize(size_t(len));
  return name;
}

}  // namespace

void flush_to_disk(hid_t obj) {
  errno = 0;
  if (H5Fflush(obj, H5F_SCOPE_GLOBAL) < 0) {
    const int err = errno;  // the failed write's (ENOSPC: a full disk; EFBIG: a file-size limit)
    throw Error(fmt::format("cannot write the HDF5 file '{}' to disk{}", file_name_of(obj),
                            err ? fmt::format(" ({})", std::strerror(err)) : std::string()));
  }
  Handle file(H5Iget_file_id(obj), H5Fclose);
  void* handle = nullptr;
  // The sec2 driver (the default) hands out its file descriptor; other drivers keep their own ways.
  if (!file.valid() || H5Pget_driver(Handle(H5Fget_access_plist(file), H5Pclose)) != H5FD_SEC2 ||
      H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
    return;
  if (fsync(*static_cast<int*>(handle)) != 0 && errno == EIO)  // EINVAL: a file system without fsync
    throw Error(fmt::format("cannot write an HDF5 file to disk: {}", std::strerror(errno)));
}

namespace {

template <typename T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, int32_t>) return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return H5T_NATIVE_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return H5T_NATIVE_UINT16;
  else static_assert(sizeof(T) == 0, "unsupported element type");
}

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, uint8_t>) return "uint8";
  else return "uint16";
}

std::string describe(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  switch (cls) {
    case H5T_FLOAT: return fmt::format("float{}", size * 8);
    case H5T_INTEGER:
      return fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", size * 8);
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    case H5T_ENUM: return "enum (h5py's bool)";
    case H5T_VLEN: return "variable-length sequence";
    case H5T_OPAQUE: return "opaque";
    case H5T_BITFIELD: return "bitfield";
    case H5T_REFERENCE: return "reference";
    default: return "another type";
  }
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

// Filters this HDF5 library may lack, by the ids registered with The HDF Group, so the refusal can say
// what wrote the file.
std::string filter_origin(H5Z_filter_t id) {
  switch (id) {
    case 32000: return " (LZF: h5py's own compressor, compression='lzf')";
    case 32001: return " (Blosc: hdf5plugin / PyTables)";
    case 32004: return " (LZ4: hdf5plugin)";
    case 32008: return " (bitshuffle: hdf5plugin)";
    case 32015: return " (Zstandard: hdf5plugin)";
    case 307: return " (bzip2: hdf5plugin / PyTables)";
    default: return "";
  }
}

// Throws Error naming the dataset and the filter when a filter of its pipeline is not in this HDF5
// library: reading would fail with "can't read data" (or "corrupt file?"), which is not the problem.
void require_available_filters(hid_t dcpl, const std::string& name) {
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    size_t nvalues = 0;
    char filter_name[128] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &nvalues, nullptr, sizeof(filter_name), filter_name, &config);
    if (id < 0) throw Error(fmt::format("dataset '{}' has an unreadable filter pipeline", name));
    if (H5Zfilter_avail(id) <= 0)
      throw Error(fmt::format("dataset '{}' is stored with HDF5 filter {} '{}'{}, which this HDF5 library does not have; "
                              "rewrite it uncompressed or with gzip (h5py: compression='gzip')",
                              name, int(id), filter_name, filter_origin(id)));
  }
}

// Throws Error naming the dataset and the file when a source file of virtual dataset `name` is missing.
// HDF5 looks for a relative source name beside the virtual dataset's own file, then in the working folder.
void require_virtual_sources(hid_t loc, hid_t dcpl, const std::string& name) {
  size_t count = 0;
  if (H5Pget_virtual_count(dcpl, &count) < 0) throw Error(fmt::format("virtual dataset '{}' has an unreadable mapping", name));
  std::string here;
  if (const ssize_t len = H5Fget_name(loc, nullptr, 0); len > 0) {
    here.resize(size_t(len) + 1);
    H5Fget_name(loc, here.data(), here.size());
    here.resize(size_t(len));
  }
  const std::string folder = here.find('/') == std::string::npos ? "." : here.substr(0, here.rfind('/'));
  for (size_t i = 0; i < count; ++i) {
    const ssize_t len = H5Pget_virtual_filename(dcpl, i, nullptr, 0);
    if (len < 0) throw Error(fmt::format("virtual dataset '{}' has an unreadable source file name", name));
    std::string file(size_t(len) + 1, '\0');
    H5Pget_virtual_filename(dcpl, i, file.data(), file.size());
    file.resize(size_t(len));
    if (file == ".") continue;  // a source in the same file
    const bool found = access(file.c_str(), R_OK) == 0 || (file.front() != '/' && access((folder + "/" + file).c_str(), R_OK) == 0);
    if (!found)
      throw Error(fmt::format("virtual dataset '{}' reads from the file '{}', which is missing or unreadable (its data "
                              "would read as fill values)",
                              name, file));
  }
}

}  // namespace

DatasetInfo inspect(hid_t loc, const std::string& name) {
  prepare_library();
  if (!exists(loc, name)) throw Error(fmt::format("dataset '{}' is missing", name));
  {
    Handle obj(H5Oopen(loc, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) throw Error(fmt::format("'{}' cannot be opened (a dangling link?)", name));
    if (H5Iget_type(obj) != H5I_DATASET) throw Error(fmt::format("'{}' is not a dataset (a group or a named type)", name));
  }
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw Error(fmt::format("dataset '{}' cannot be opened", name));
  Handle type(H5Dget_type(ds), H5Tclose);
  Handle space(H5Dget_space(ds), H5Sclose);
  if (!type.valid() || !space.valid()) throw Error(fmt::format("dataset '{}' has an unreadable header", name));
  DatasetInfo info;
  info.type_class = H5Tget_class(type);
  info.type_size = H5Tget_size(type);
  info.is_signed = info.type_class == H5T_INTEGER && H5Tget_sign(type) != H5T_SGN_NONE;
  info.type_name = describe(type);
  const H5S_class_t space_class = H5Sget_simple_extent_type(space);
  if (space_class == H5S_NULL) throw Error(fmt::format("dataset '{}' has a null dataspace (no shape, no data)", name));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0 || rank > H5S_MAX_RANK) throw Error(fmt::format("dataset '{}' has an unreadable shape", name));
  std::vector<hsize_t> dims(size_t(rank) + 1);
  if (H5Sget_simple_extent_dims(space, dims.data(), nullptr) < 0)
    throw Error(fmt::format("dataset '{}' has an unreadable shape", name));
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[size_t(i)] > hsize_t(INT64_MAX))
      throw Error(fmt::format("dataset '{}' has a dimension of {} elements, more than int64 counts", name, dims[size_t(i)]));
    info.shape.push_back(int64_t(dims[size_t(i)]));
  }
  for (int64_t d : info.shape) {
    const auto next = checked_mul(n, d);
    if (!next) throw Error(fmt::format("dataset '{}' has shape {}: its element count overflows int64", name, shape_text(info.shape)));
    n = *next;
  }
  info.elements = n;
  const auto bytes = checked_mul(n, int64_t(info.type_size));
  if (!bytes)
    throw Error(fmt::format("dataset '{}' has shape {} of {}: its byte count overflows int64", name, shape_text(info.shape),
                            info.type_name));
  // Data without filters is stored byte for byte; a header claiming more than the file holds is a
  // truncated file or a forged shape, and reading it would return fill values (or allocate for nothing).
  Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  const bool filtered = dcpl.valid() && H5Pget_nfilters(dcpl) > 0;
  if (filtered) require_available_filters(dcpl, name);
  // A virtual dataset (h5py's VirtualLayout) stores nothing itself: its data is read from its source
  // files, which must all be there (HDF5 would silently read fill values for a missing one).
  if (dcpl.valid() && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
    require_virtual_sources(loc, dcpl, name);
    return info;
  }
  if (!filtered && *bytes > 0 && info.type_class != H5T_STRING && H5Tis_variable_str(type) <= 0 &&
      info.type_class != H5T_VLEN) {
    const hsize_t stored = H5Dget_storage_size(ds);
    if (stored < hsize_t(*bytes))
      throw Error(fmt::format("dataset '{}' claims shape {} of {} ({} bytes) but the file stores only {} bytes of it "
                              "(truncated or never written)",
                              name, shape_text(info.shape), info.type_name, *bytes, stored));
  }
  return info;
}

template <typename T>
void require_type(const DatasetInfo& info, const std::string& name) {
  const H5T_class_t want_class = std::is_floating_point_v<T> ? H5T_FLOAT : H5T_INTEGER;
  const bool ok = info.type_class == want_class && info.type_size == sizeof(T) &&
                  (want_class == H5T_FLOAT || info.is_signed == std::is_signed_v<T>);
  if (!ok) throw Error(fmt::format("dataset '{}' has dtype {}, expected {}", name, info.type_name, type_name<T>()));
}

template <typename T>
Array<T> read(hid_t loc, const std::string& name, int64_t max_bytes) {
  const DatasetInfo info = inspect(loc, name);
  require_type<T>(info, name);
  const int64_t bytes = info.elements * int64_t(sizeof(T));  // inspect checked it fits
  if (bytes > max_bytes)
    throw Error(fmt::format("dataset '{}' has shape {}: {} bytes, more than the {} bytes allowed", name,
                            shape_text(info.shape), bytes, max_bytes));
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  Array<T> out;
  out.shape = info.shape;
  out.data.resize(size_t(info.elements));
  if (info.elements > 0 && H5Dread(ds, native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data.data()) < 0)
    throw Error(fmt::format("dataset '{}' could not be read (corrupt file?)", name));
  return out;
}

template <typename T>
void write(hid_t loc, const std::string& name, const std::vector<int64_t>& shape, const T* data) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle ds(H5Dcreate2(loc, name.c_str(), native_type<T>(), space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
  if (!ds.valid()) throw Error(fmt::format("cannot create dataset '{}'", name));
  if (H5Dwrite(ds, native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw Error(fmt::format("cannot write dataset '{}'", name));
}

void write_scalar(hid_t loc, const std::string& name, double value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle ds(H5Dcreate2(loc, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
  if (!ds.valid() || H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0)
    throw Error(fmt::format("cannot write scalar '{}'", name));
}

#define LOBENCH_H5_INSTANTIATE(T)                                   \
  template Array<T> read<T>(hid_t, const std::string&, int64_t);    \
  template void require_type<T>(const DatasetInfo&, const std::string&); \
  template void write<T>(hid_t, const std::string&, const std::vector<int64_t>&, const T*);
LOBENCH_H5_INSTANTIATE(float)
LOBENCH_H5_INSTANTIATE(double)
LOBENCH_H5_INSTANTIATE(int32_t)
LOBENCH_H5_INSTANTIATE(int64_t)
LOBENCH_H5_INSTANTIATE(uint8_t)
LOBENCH_H5_INSTANTIATE(uint16_t)
#undef LOBENCH_H5_INSTANTIATE

Table::Table(Handle dataset, Handle type, std::string name, std::string what, hsize_t width, int64_t rows)
    : dataset_(std::move(dataset)),
      type_(std::move(type)),
      name_(std::move(name)),
      what_(std::move(what)),
      width_(width),
      rows_(rows) {}

Table Table::create(hid_t loc, const std::string& name, hid_t row_type, hsize_t chunk_rows, const std::string& what,
                    hsize_t width) {
  const int rank = width > 0 ? 2 : 1;
  const hsize_t zero[2] = {0, width}, max_dims[2] = {H5S_UNLIMITED, width}, chunk[2] = {chunk_rows, width};
  Handle space(H5Screate_simple(rank, zero, max_dims), H5Sclose);
  Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(props, rank, chunk);
  Handle ds(H5Dcreate2(loc, name.c_str(), row_type, space, H5P_DEFAULT, props, H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw Error(fmt::format("cannot create /{} in '{}'", name, what));
  return Table(std::move(ds), Handle(H5Tcopy(row_type), H5Tclose), name, what, width, 0);
}

Table Table::open(hid_t loc, const std::string& name, hid_t row_type, const std::string& what, hsize_t width) {
  if (!exists(loc, name)) throw Error(fmt::format("'{}' has no /{} table", what, name));
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw Error(fmt::format("/{} in '{}' cannot be opened", name, what));
  Handle space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space), want_rank = width > 0 ? 2 : 1;
  if (rank != want_rank)
    throw Error(fmt::format("/{} in '{}' has rank {}, expected {}", name, what, rank, want_rank));
  hsize_t dims[2] = {0, 0}, max_dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space, dims, max_dims);
  if (width > 0 && dims[1] != width)
    throw Error(fmt::format("/{} in '{}' has rows of {} elements, expected {}", name, what, dims[1], width));
  if (max_dims[0] != H5S_UNLIMITED) throw Error(fmt::format("/{} in '{}' cannot grow (fixed size)", name, what));

  Handle stored(H5Dget_type(ds), H5Tclose);
  std::set<std::string> missing;
  if (H5Tget_class(stored) != H5T_COMPOUND || H5Tget_class(row_type) != H5T_COMPOUND) {
    if (describe(stored) != describe(row_type))
      throw Error(
          fmt::format("/{} in '{}' holds {} rows, not {}", name, what, describe(stored), describe(row_type)));
  } else {
    auto member_name = [](hid_t type, int i) {
      char* c = H5Tget_member_name(type, unsigned(i));
      std::string out = c ? c : "";
      H5free_memory(c);
      return out;
    };
    // Columns are matched by name (HDF5 converts compound rows member by member): every stored column
    // must be written by the row type, as the same kind of value.
    for (int i = 0; i < H5Tget_nmembers(stored); ++i) {
      const std::string column = member_name(stored, i);
      const int j = H5Tget_member_index(row_type, column.c_str());
      if (j < 0)
        throw Error(fmt::format("/{} in '{}' has a column '{}' that the rows appended lack (another schema version?)",
                                name, what, column));
      Handle have(H5Tget_member_type(stored, unsigned(i)), H5Tclose);
      Handle want(H5Tget_member_type(row_type, unsigned(j)), H5Tclose);
      if (H5Tget_class(have) != H5Tget_class(want))
        throw Error(fmt::format("column '{}' of /{} in '{}' is {}, the rows appended hold {}", column, name, what,
                                describe(have), describe(want)));
    }
    for (int i = 0; i < H5Tget_nmembers(row_type); ++i) {
      const std::string column = member_name(row_type, i);
      if (H5Tget_member_index(stored, column.c_str()) < 0) missing.insert(column);
    }
  }
  Table t(std::move(ds), Handle(H5Tcopy(row_type), H5Tclose), name, what, width, int64_t(dims[0]));
  t.missing_ = std::move(missing);
  return t;
}

void Table::append(const void* row, size_t bytes, Flush flush) {
  if (!valid()) throw Error("cannot append a row to a table that is not open");
  const size_t row_bytes = H5Tget_size(type_) * size_t(width_ > 0 ? width_ : 1);
  if (bytes != row_bytes)
    throw Error(fmt::format("cannot append a row of {} bytes to /{} in '{}', whose rows are {} bytes", bytes, name_,
                            what_, row_bytes));
  const int rank = width_ > 0 ? 2 : 1;
  const hsize_t old_size[2] = {hsize_t(rows_), width_}, new_size[2] = {hsize_t(rows_ + 1), width_};
  const hsize_t start[2] = {hsize_t(rows_), 0}, count[2] = {1, width_};
  if (H5Dset_extent(dataset_, new_size) < 0) throw Error(fmt::format("cannot grow /{} in '{}'", name_, what_));
  Handle file_space(H5Dget_space(dataset_), H5Sclose);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  Handle mem_space(H5Screate_simple(rank, count, nullptr), H5Sclose);
  if (H5Dwrite(dataset_, type_, mem_space, file_space, H5P_DEFAULT, row) < 0) {
    H5Dset_extent(dataset_, old_size);  // no half-written row left behind
    throw Error(fmt::format("cannot write a row of /{} in '{}'", name_, what_));
  }
  ++rows_;
  if (flush == Flush::yes) H5Fflush(dataset_, H5F_SCOPE_GLOBAL);
}

namespace {
void replace_attr(hid_t obj, const std::string& name) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
}
}  // namespace

void write_attr(hid_t obj, const std::string& name, const std::string& value) {
  replace_attr(obj, name);
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* s = value.c_str();
  if (!attr.valid() || H5Awrite(attr, type, &s) < 0) throw Error(fmt::format("cannot write attribute '{}'", name));
}

void write_attr(hid_t obj, const std::string& name, double value) {
  replace_attr(obj, name);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(obj, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Awrite(attr, H5T_NATIVE_DOUBLE, &value) < 0)
    throw Error(fmt::format("cannot write attribute '{}'", name));
}

void write_attr(hid_t obj, const std::string& name, int64_t value) {
  replace_attr(obj, name);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(obj, name.c_str(), H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Awrite(attr, H5T_NATIVE_INT64, &value) < 0)
    throw Error(fmt::format("cannot write attribute '{}'", name));
}

namespace {

// The attribute `name` of `obj`, opened after checking that it holds exactly one value; its stored type
// in `type`. Nothing when absent.
std::optional<Handle> open_single_value_attr(hid_t obj, const std::string& name, Handle& type) {
  prepare_library();
  const htri_t present = H5Aexists(obj, name.c_str());
  if (present < 0) throw Error(fmt::format("attribute '{}' cannot be looked up", name));
  if (present == 0) return std::nullopt;
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) throw Error(fmt::format("attribute '{}' cannot be opened", name));
  type = Handle(H5Aget_type(attr), H5Tclose);
  Handle space(H5Aget_space(attr), H5Sclose);
  if (!type.valid() || !space.valid()) throw Error(fmt::format("attribute '{}' has an unreadable type or shape", name));
  const H5S_class_t cls = H5Sget_simple_extent_type(space);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (cls == H5S_NULL || n != 1)
    throw Error(fmt::format("attribute '{}' holds {} values ({} of {}), expected a single value", name,
                            cls == H5S_NULL ? 0 : n, cls == H5S_NULL ? "a null dataspace" : "an array",
                            describe(type)));
  return attr;
}

}  // namespace

namespace {

// Whether every global heap collection of the file holding `obj` is well formed: HDF5 1.10 walks a
// collection's objects by their recorded sizes without checking that they tile it (H5HG__load), so an
// object whose size was raised past its data makes later objects vanish (their strings read back empty,
// garbage taken for provenance) or a read copy past the collection. Each collection ("GCOL", version 1,
// its size, then objects of a 16-byte header and their data padded to 8 bytes, the free space last) must
// end exactly where its objects do. Found by their signature: a candidate whose header is implausible
// (another version, a size under 4 KiB or past the end of the file) is no collection HDF5 would load.
// The verdict is kept per file (device, inode, size, modification time): a file is scanned once.
bool global_heaps_sound(hid_t obj) {
  const ssize_t name_len = H5Fget_name(obj, nullptr, 0);
  if (name_len <= 0) return true;
  std::string path(size_t(name_len) + 1, '\0');
  H5Fget_name(obj, path.data(), path.size());
  path.resize(size_t(name_len));
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return true;  // HDF5 reads it; what it reads is checked by the child
  static std::map<std::tuple<dev_t, ino_t, off_t, int64_t>, bool> verdicts;
  const auto key = std::tuple(st.st_dev, st.st_ino, st.st_size, int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
  if (const auto v = verdicts.find(key); v != verdicts.end()) return v->second;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  const auto u64 = [](const unsigned char* p, int bytes) {
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | p[k];
    return v;
  };
  // One collection at `at`: true when it is none (implausible header) or its objects tile it exactly.
  const auto sound_at = [&](off_t at) {
    unsigned char head[16];
    if (pread(fd, head, 16, at) != 16 || head[4] != 1) return true;
    const uint64_t size = u64(head + 8, 8);
    if (size < 4096 || size > uint64_t(st.st_size - at)) return true;
    std::vector<unsigned char> c(size);
    if (pread(fd, c.data(), size, at) != ssize_t(size)) return true;
    uint64_t p = 16;
    while (p < size) {
      if (p + 16 > size) return true;  // too small for an object header: free space, as HDF5 takes it
      const uint64_t idx = u64(&c[p], 2), object = u64(&c[p + 8], 8);
      if (object > size) return false;
      const uint64_t need = idx > 0 ? 16 + ((object + 7) & ~uint64_t(7)) : object;
      if (need == 0 || need > size - p) return false;  // past the collection's end
      p += need;
    }
    return p == size;
  };
  bool sound = true;
  std::vector<unsigned char> block(1 << 20);
  for (off_t at = 0; sound && at < st.st_size;) {
    const ssize_t n = pread(fd, block.data(), block.size(), at);
    if (n < 4) break;
    for (ssize_t i = 0; sound && i + 4 <= n; ++i)
      if (block[size_t(i)] == 'G' && std::memcmp(&block[size_t(i)], "GCOL", 4) == 0) sound = sound_at(at + i);
    at += n - 3;  // a signature across two blocks is found in the second
  }
  close(fd);
  verdicts[key] = sound;
  return sound;
}

// What a variable-length string attribute read apart gave: the string, HDF5's refusal, or a damaged heap.
struct VlenRead {
  enum class End { read, refused, damaged } end = End::damaged;
  std::string text;
};

// What the child sent: its length (8 bytes), then the string; anything else is a read that did not end.
VlenRead complete(const std::string& got) {
  VlenRead out;
  uint64_t n = 0;
  if (got.size() < sizeof n) return out;
  std::memcpy(&n, got.data(), sizeof n);
  if (got.size() - sizeof n != n) return out;
  out.end = VlenRead::End::read;
  out.text = got.substr(sizeof n);
  return out;
}

// Reads the variable-length string attribute `attr` in a forked child, which sends the string back
// through a pipe: the parent never reads it itself. Such a string lives in the file's global heap, and
// HDF5 1.10 trusts the heap's recorded object sizes: a corrupted heap makes H5Aread copy from outside
// it (a segfault inside H5HG_read, which no HDF5 error reports), or copy more bytes than the buffer it
// allocated, a read that returns and leaves the heap of the process corrupt (a segfault in a later
// H5Aclose, `free(): invalid pointer` at exit: `lobench merge` of such a part, issue 37). The child only
// reads (HDF5 reads with pread, so the parent's file state is untouched) and leaves with _exit. A child
// killed by a signal, or still reading after kReadSeconds, means the heap is damaged (some damaged heaps
// make H5Aread loop forever instead of crashing). A sound read takes microseconds.
// The child never outlives that wait or its parent: a parent killed meanwhile (a timeout in a test
// harness, Ctrl-C) once left children spinning on a damaged heap at 100 % CPU for the rest of the day.
VlenRead read_vlen_apart(hid_t attr, hid_t mem) {
  constexpr unsigned kReadSeconds = 10;
  constexpr uint64_t kMaxBytes = uint64_t(1) << 26;  // an attribute string longer than 64 MiB is damage
  constexpr int kReadFailed = 3;                     // HDF5 refused the read itself
  std::fflush(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("cannot read a string attribute: pipe: {}", std::strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(fmt::format("cannot read a string attribute: fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // killed with the parent...
    if (getppid() != parent) _exit(kReadFailed);  // ...which may already have gone before prctl
    alarm(kReadSeconds + 1);  // and by itself, should the parent stop waiting without killing it
    // Quiet: what a crash prints here (a sanitizer's report of HDF5's bad read) is not the parent's.
    if (const int devnull = open("/dev/null", O_WRONLY); devnull >= 0) dup2(devnull, STDERR_FILENO);
    char* s = nullptr;
    if (H5Aread(attr, mem, &s) < 0) _exit(kReadFailed);
    const uint64_t n = s ? std::strlen(s) : 0;
    if (n > kMaxBytes) _exit(kReadFailed);
    const auto send = [&](const void* p, size_t bytes) {
      for (size_t at = 0; at < bytes;) {
        const ssize_t w = ::write(fds[1], static_cast<const char*>(p) + at, bytes - at);
        if (w <= 0 && errno != EINTR) _exit(kReadFailed);
        if (w > 0) at += size_t(w);
      }
    };
    send(&n, sizeof n);
    send(s, n);
    H5free_memory(s);  // a heap overflow of the read shows here, in the child, as a crash
    _exit(0);
  }
  close(fds[1]);
  // The string as it comes, while waiting for the child (it blocks on a full pipe until we read).
  std::string got;
  bool eof = false;
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kReadSeconds);
  while (!exited && std::chrono::steady_clock::now() < deadline) {
    if (!eof) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 20) > 0) {
        char buf[65536];
        const ssize_t r = ::read(fds[0], buf, sizeof buf);
        if (r > 0 && got.size() < kMaxBytes + 16) got.append(buf, size_t(r));
        else if (r == 0) eof = true;
        continue;
      }
    }
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      exited = true;
    } else if (done < 0) {  // not ours to wait for (SIGCHLD ignored): the pipe alone says how it ended
      if (eof) return complete(got);
      usleep(200);
    } else if (eof) {
      usleep(200);
    }
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  while (exited && !eof) {  // what the child wrote before it ended (its end of the pipe is closed: no wait)
    char buf[65536];
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r > 0 && got.size() < kMaxBytes + 16) got.append(buf, size_t(r));
    else if (r == 0 || (r < 0 && errno != EINTR)) eof = true;
  }
  close(fds[0]);
  VlenRead out;
  // Anything but those two ends is a crash: a signal, or a sanitizer's own exit status for one.
  if (!exited || !WIFEXITED(status)) return out;
  if (WEXITSTATUS(status) == kReadFailed) {
    out.end = VlenRead::End::refused;
    return out;
  }
  return WEXITSTATUS(status) == 0 ? complete(got) : out;
}

}  // namespace

std::optional<std::string> read_attr_string(hid_t obj, const std::string& name) {
  Handle type;
  const auto attr = open_single_value_attr(obj, name, type);
  if (!attr) return std::nullopt;
  if (H5Tget_class(type) != H5T_STRING)
    throw Error(fmt::format("attribute '{}' is {}, expected a string", name, describe(type)));
  const H5T_cset_t cset = H5Tget_cset(type);  // HDF5 converts no character sets: read as stored
  if (H5Tis_variable_str(type) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, cset);
    if (!global_heaps_sound(obj))
      throw Error(fmt::format("attribute '{}' cannot be read: the file's global heap, where its string is stored, is "
                              "damaged (an object's size runs past its collection; corrupt file?)",
                              name));
    VlenRead r = read_vlen_apart(*attr, mem);
    if (r.end == VlenRead::End::refused) throw Error(fmt::format("cannot read attribute '{}'", name));
    if (r.end == VlenRead::End::damaged)
      throw Error(fmt::format("attribute '{}' cannot be read: the file's global heap, where its string is stored, is "
                              "damaged (corrupt file?)",
                              name));
    return std::move(r.text);
  }
  // Fixed length n: read into n + 1 bytes with a null-terminated memory type, so that a stored string
  // that fills all n bytes (h5py's np.bytes_(b"sum") is 3 bytes, null-padded) keeps its last character.
  const size_t n = H5Tget_size(type);
  if (n == 0 || n > (size_t(1) << 20)) throw Error(fmt::format("attribute '{}' is a string of {} bytes", name, n));
  std::string out(n + 1, '\0');
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem, n + 1);
  H5Tset_strpad(mem, H5T_STR_NULLTERM);
  H5Tset_cset(mem, cset);
  if (H5Aread(*attr, mem, out.data()) < 0) throw Error(fmt::format("cannot read attribute '{}'", name));
  out.resize(out.find('\0'));
  return out;
}

namespace {

template <typename T>
std::optional<T> read_attr_number(hid_t obj, const std::string& name) {
  Handle type;
  const auto attr = open_single_value_attr(obj, name, type);
  if (!attr) return std::nullopt;
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw Error(fmt::format("attribute '{}' is {}, expected a number", name, describe(type)));
  T v{};
  if (H5Aread(*attr, native_type<T>(), &v) < 0)
    throw Error(fmt::format("attribute '{}' ({}) cannot be read as {}", name, describe(type), type_name<T>()));
  return v;
}

}  // namespace

std::optional<double> read_attr_double(hid_t obj, const std::string& name) { return read_attr_number<double>(obj, name); }
std::optional<int64_t> read_attr_int64(hid_t obj, const std::string& name) { return read_attr_number<int64_t>(obj, name); }

}  // namespace lobench::h5
