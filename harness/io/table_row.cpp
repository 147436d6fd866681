#include "harness/io/table_row.hpp"

namespace lobench::io {
namespace {

h5::Handle text_type(size_t n) {
  h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(s, n);
  H5Tset_strpad(s, H5T_STR_NULLTERM);
  return s;
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

}  // namespace lobench::io
