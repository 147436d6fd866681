// What "the same content" means for an HDF5 file whose writer moved (issue 42: every file through
// io::RunFileWriter, each file's content kept): every group, dataset and attribute, by path and name,
// with its stored type (HDF5's DDL text: class, size, byte order, string padding and character set,
// compound members and their offsets), its shape, and its stored values, except for the attributes and
// datasets named in `values_ignored` (provenance, times, numbers that depend on the CPU), whose type
// class and shape are still compared. Test support only.
#pragma once

#include <hdf5.h>
#include <hdf5_hl.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/io/h5_io.hpp"

namespace lobench::testing {

namespace h5_content_detail {

inline std::string type_text(hid_t type, bool with_size) {
  if (!with_size) {  // the class only, and for a string whether it is of variable length
    const H5T_class_t c = H5Tget_class(type);
    return "class " + std::to_string(int(c)) + (c == H5T_STRING && H5Tis_variable_str(type) > 0 ? " variable" : "");
  }
  size_t n = 0;
  if (H5LTdtype_to_text(type, nullptr, H5LT_DDL, &n) < 0) return "(no DDL text)";
  std::string s(n, '\0');
  H5LTdtype_to_text(type, s.data(), H5LT_DDL, &n);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// The stored values of `n` elements of `type` as bytes, read through the type packed (a compound's
// members side by side): the padding between members holds whatever the writer's memory held there.
template <typename Read>
std::string values_text(hid_t type, hssize_t n, const Read& read) {
  h5::Handle packed(H5Tcopy(type), H5Tclose);
  if (H5Tget_class(type) == H5T_COMPOUND) H5Tpack(packed);
  std::vector<unsigned char> b(size_t(n) * H5Tget_size(packed));
  if (!b.empty() && read(hid_t(packed), b.data()) < 0) return "(unreadable)";
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

inline std::string shape_text(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(size_t(rank > 0 ? rank : 0));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

inline void add_attributes(hid_t obj, const std::string& path, const std::set<std::string>& ignored,
                           std::map<std::string, std::string>& out) {
  std::vector<std::string> names;
  hsize_t at = 0;
  H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &at,
              [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
                static_cast<std::vector<std::string>*>(data)->push_back(name);
                return 0;
              },
              &names);
  for (const std::string& name : names) {
    h5::Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
    h5::Handle type(H5Aget_type(a), H5Tclose), space(H5Aget_space(a), H5Sclose);
    const bool keep = !ignored.count(name);
    std::string v = type_text(type, keep) + " " + shape_text(space);
    if (keep && H5Tis_variable_str(type) > 0) {
      v += " = '" + h5::read_attr_string(obj, name).value_or("(unreadable)") + "'";
    } else if (keep) {
      v += " = " + values_text(type, H5Sget_simple_extent_npoints(space),
                               [&](hid_t mem, void* into) { return H5Aread(a, mem, into); });
    }
    out[path + "@" + name] = v;
  }
}

inline void add_object(hid_t file, const std::string& path, const std::set<std::string>& ignored,
                       std::map<std::string, std::string>& out) {
  h5::Handle obj(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
  add_attributes(obj, path, ignored, out);
  if (H5Iget_type(obj) == H5I_DATASET) {
    h5::Handle type(H5Dget_type(obj), H5Tclose), space(H5Dget_space(obj), H5Sclose);
    const std::string name = path.substr(path.rfind('/') + 1);
    const bool keep = !ignored.count(name) && H5Tdetect_class(type, H5T_VLEN) <= 0 && H5Tis_variable_str(type) <= 0;
    std::string v = "dataset " + type_text(type, !ignored.count(name)) + " " + shape_text(space);
    if (keep)
      v += " = " + values_text(type, H5Sget_simple_extent_npoints(space), [&](hid_t mem, void* into) {
             return H5Dread(obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, into);
           });
    out[path] = v;
    return;
  }
  out[path] = "group";
  H5G_info_t g;
  H5Gget_info(obj, &g);
  for (hsize_t i = 0; i < g.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string child(size_t(len), '\0');
    H5Lget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, child.data(), size_t(len) + 1, H5P_DEFAULT);
    add_object(file, (path == "/" ? "/" : path + "/") + child, ignored, out);
  }
}

}  // namespace h5_content_detail

// The root attributes of provenance (harness/io/provenance_attrs.cpp: gpu_model and plugins only where
// there are some) and end_utc: where, when and by which build a file was written, which differ between two
// writes of the same content, on two machines even in which of them are there.
inline const std::set<std::string>& provenance_attributes() {
  static const std::set<std::string> names = {
      "lobench_version", "git_commit", "git_dirty", "build_commit", "build_dirty", "host",     "cpu_model", "cpu_id",
      "cpu_simd",        "fp16_epilogue", "gpu_model",  "compiler",      "libraries", "sgemm_library", "plugins", "argv",
      "start_utc",       "hardware_threads", "end_utc"};
  return names;
}

// Every object and attribute of the file at `path`: "PATH" or "PATH@ATTRIBUTE" -> its type, shape and
// value; without the root's provenance attributes when `without_provenance`.
inline std::map<std::string, std::string> h5_content(const std::string& path, const std::set<std::string>& values_ignored = {},
                                                     bool without_provenance = false) {
  h5::prepare_library();
  const h5::Handle f = h5::open_file_read(path);
  std::map<std::string, std::string> out;
  h5_content_detail::add_object(f, "/", values_ignored, out);
  if (without_provenance)
    for (const std::string& name : provenance_attributes()) out.erase("/@" + name);
  return out;
}

// What differs between two contents, one line per object or attribute ("" when they are the same),
// values cut to 160 characters: a failure names what changed, not two whole files.
inline std::string content_differences(const std::map<std::string, std::string>& a,
                                       const std::map<std::string, std::string>& b) {
  const auto cut = [](const std::string& v) { return v.size() > 160 ? v.substr(0, 160) + "..." : v; };
  std::string out;
  for (const auto& [key, value] : a) {
    const auto it = b.find(key);
    if (it == b.end()) out += key + ": only in the first\n";
    else if (it->second != value) out += key + ": " + cut(value) + " | " + cut(it->second) + "\n";
  }
  for (const auto& [key, value] : b)
    if (!a.count(key)) out += key + ": only in the second\n";
  return out;
}

}  // namespace lobench::testing
