#include "h5_io.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace lobench::h5 {

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Handle create_file(const std::string& path) {
  silence_errors();
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot create HDF5 file '{}'", path));
  return Handle(f, H5Fclose);
}

Handle open_file_read(const std::string& path) {
  silence_errors();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot open '{}' as an HDF5 file (missing, unreadable or corrupt)", path));
  return Handle(f, H5Fclose);
}

Handle open_file_rw(const std::string& path) {
  silence_errors();
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) throw Error(fmt::format("cannot open '{}' for appending (missing, unreadable or corrupt)", path));
  return Handle(f, H5Fclose);
}

bool exists(hid_t loc, const std::string& name) { return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0; }

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
    default: return "another type";
  }
}

}  // namespace

template <typename T>
Array<T> read(hid_t loc, const std::string& name) {
  if (!exists(loc, name)) throw Error(fmt::format("dataset '{}' is missing", name));
  Handle ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw Error(fmt::format("dataset '{}' cannot be opened", name));
  Handle type(H5Dget_type(ds), H5Tclose);
  const H5T_class_t want_class = std::is_floating_point_v<T> ? H5T_FLOAT : H5T_INTEGER;
  const bool want_signed = std::is_signed_v<T>;
  const bool ok = H5Tget_class(type) == want_class && H5Tget_size(type) == sizeof(T) &&
                  (want_class == H5T_FLOAT || (H5Tget_sign(type) != H5T_SGN_NONE) == want_signed);
  if (!ok)
    throw Error(fmt::format("dataset '{}' has dtype {}, expected {}", name, describe(type), type_name<T>()));
  Handle space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw Error(fmt::format("dataset '{}' has an unreadable shape", name));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  Array<T> out;
  int64_t n = 1;
  for (hsize_t d : dims) {
    out.shape.push_back(int64_t(d));
    n *= int64_t(d);
  }
  out.data.resize(size_t(n));
  if (n > 0 && H5Dread(ds, native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data.data()) < 0)
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
  template Array<T> read<T>(hid_t, const std::string&);             \
  template void write<T>(hid_t, const std::string&, const std::vector<int64_t>&, const T*);
LOBENCH_H5_INSTANTIATE(float)
LOBENCH_H5_INSTANTIATE(double)
LOBENCH_H5_INSTANTIATE(int32_t)
LOBENCH_H5_INSTANTIATE(int64_t)
LOBENCH_H5_INSTANTIATE(uint8_t)
LOBENCH_H5_INSTANTIATE(uint16_t)
#undef LOBENCH_H5_INSTANTIATE

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

std::optional<std::string> read_attr_string(hid_t obj, const std::string& name) {
  if (H5Aexists(obj, name.c_str()) <= 0) return std::nullopt;
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attr), H5Tclose);
  if (H5Tget_class(type) != H5T_STRING) throw Error(fmt::format("attribute '{}' is not a string", name));
  if (H5Tis_variable_str(type) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));  // HDF5 converts no character sets: read as stored
    char* s = nullptr;
    if (H5Aread(attr, mem, &s) < 0) throw Error(fmt::format("cannot read attribute '{}'", name));
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  const size_t n = H5Tget_size(type);
  std::string out(n, '\0');
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem, n);
  H5Tset_cset(mem, H5Tget_cset(type));
  if (H5Aread(attr, mem, out.data()) < 0) throw Error(fmt::format("cannot read attribute '{}'", name));
  out.resize(out.find('\0') == std::string::npos ? n : out.find('\0'));
  return out;
}

std::optional<double> read_attr_double(hid_t obj, const std::string& name) {
  if (H5Aexists(obj, name.c_str()) <= 0) return std::nullopt;
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  double v = 0;
  if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) throw Error(fmt::format("cannot read attribute '{}'", name));
  return v;
}

}  // namespace lobench::h5
