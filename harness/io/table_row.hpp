// A table of a run file, declared once: a column list X(type, name, default, unit, meaning) generates
// the C++ row (LOBENCH_ROW_MEMBERS), its column descriptions (LOBENCH_ROW_COLUMNS) and from them the
// HDF5 compound type (compound_type), so that a row is a plain record that HDF5 stores and h5py reads as
// a NumPy structured array with the columns' names. Every table of every run file is declared this way:
// `/results` of `lobench run` (io/result_row.hpp), `/epochs` of train-xmc (train/run_file.hpp),
// `/steps` and `/epochs` of train-seqrec (seqrec/seqrec_run_file.hpp).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/io/fixed_text.hpp"
#include "harness/io/h5_io.hpp"

namespace lobench::io {

enum class ColumnKind { int32, int64, float64, text };

struct Column {
  const char* name;
  ColumnKind kind;
  size_t offset;
  size_t size;  // bytes (text: its fixed length)
  const char* unit;
  const char* meaning;
};

template <typename T>
struct KindOf;
template <>
struct KindOf<int32_t> : std::integral_constant<ColumnKind, ColumnKind::int32> {};
template <>
struct KindOf<int64_t> : std::integral_constant<ColumnKind, ColumnKind::int64> {};
template <>
struct KindOf<double> : std::integral_constant<ColumnKind, ColumnKind::float64> {};
template <size_t N>
struct KindOf<FixedText<N>> : std::integral_constant<ColumnKind, ColumnKind::text> {};

// Inside a struct: one member per column, initialised to its default.
#define LOBENCH_ROW_MEMBER(type, name, init, unit, doc) type name = init;
#define LOBENCH_ROW_MEMBERS(COLUMNS) COLUMNS(LOBENCH_ROW_MEMBER)

// The columns of `Row` (a struct declared with LOBENCH_ROW_MEMBERS(COLUMNS)), in order, as an
// initializer list: `static const std::vector<io::Column> c = LOBENCH_ROW_COLUMNS(Row, COLUMNS);`.
#define LOBENCH_ROW_COLUMNS(Row, COLUMNS)                                                                \
  [] {                                                                                                   \
    using RowType = Row;                                                                                 \
    return std::vector<::lobench::io::Column>{COLUMNS(LOBENCH_ROW_COLUMN_ENTRY)};                        \
  }()
#define LOBENCH_ROW_COLUMN_ENTRY(type, name, init, unit, doc)                                           \
  ::lobench::io::Column{#name, ::lobench::io::KindOf<type>::value, offsetof(RowType, name), sizeof(type), \
                        unit, doc},

// Adds column `c` to the compound type `t` at `offset` (its offset in a row that embeds it).
void insert_column(hid_t t, const Column& c, size_t offset);

// The rows of a Markdown table `| column | type | unit | meaning |` of these columns (results/SCHEMA.md).
std::string column_markdown_rows(const std::vector<Column>& columns);

// The HDF5 compound type of a row of `row_size` bytes with these columns (text: fixed-length,
// NUL-terminated strings).
h5::Handle compound_type(size_t row_size, const std::vector<Column>& columns);

}  // namespace lobench::io
