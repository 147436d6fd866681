#include "harness/io/table_row.hpp"

#include <fmt/format.h>

namespace lobench::io {
namespace {

h5::Handle text_type(size_t n) {
  h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(s, n);
  H5Tset_strpad(s, H5T_STR_NULLTERM);
  return s;
}

const char* kind_name(ColumnKind k) {
  switch (k) {
    case ColumnKind::int32: return "int32";
    case ColumnKind::int64: return "int64";
    case ColumnKind::float64: return "float64";
    case ColumnKind::text: return "string";
  }
  return "?";
}

hid_t native(ColumnKind k) {
  switch (k) {
    case ColumnKind::int32: return H5T_NATIVE_INT32;
    case ColumnKind::int64: return H5T_NATIVE_INT64;
    case ColumnKind::float64: return H5T_NATIVE_DOUBLE;
    case ColumnKind::text: break;
  }
  return -1;
}

}  // namespace

void insert_column(hid_t t, const Column& c, size_t offset) {
  if (c.kind == ColumnKind::text) H5Tinsert(t, c.name, offset, text_type(c.size));
  else H5Tinsert(t, c.name, offset, native(c.kind));
}

h5::Handle compound_type(size_t row_size, const std::vector<Column>& columns) {
  hid_t t = H5Tcreate(H5T_COMPOUND, row_size);
  for (const Column& c : columns) insert_column(t, c, c.offset);
  return h5::Handle(t, H5Tclose);
}

std::string column_markdown_rows(const std::vector<Column>& columns) {
  std::string md;
  for (const Column& c : columns) {
    const std::string type = c.kind == ColumnKind::text ? fmt::format("string[{}]", c.size) : kind_name(c.kind);
    md += fmt::format("| `{}` | {} | {} | {} |\n", c.name, type, c.unit, c.meaning);
  }
  return md;
}

}  // namespace lobench::io
