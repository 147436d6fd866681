#include "harness/io/h5_io.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <set>

#include "variants/tests/temp_path.hpp"

namespace lobench {
namespace {

using testing::temp_path;

TEST(H5Io, RoundTripsDatasetsAndAttributes) {
  const std::string path = temp_path("h5_roundtrip.h5");
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1e-30f};
  const std::vector<int32_t> t = {1, -1, 5};
  {
    auto f = h5::create_file(path);
    h5::write(f, "A", {2, 3}, a.data());
    h5::write(f, "targets", {3}, t.data());
    h5::write_scalar(f, "loss", 0.693);
    h5::write_attr(f, "reduction", std::string("sum"));
    h5::write_attr(f, "gemm_gflops", 123.5);
  }
  auto f = h5::open_file_read(path);
  auto A = h5::read<float>(f, "A");
  ASSERT_EQ(A.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(A.data, a);
  EXPECT_EQ(h5::read<int32_t>(f, "targets").data, t);
  EXPECT_EQ(h5::read_attr_string(f, "reduction").value(), "sum");
  EXPECT_DOUBLE_EQ(h5::read_attr_double(f, "gemm_gflops").value(), 123.5);
  EXPECT_FALSE(h5::read_attr_string(f, "absent").has_value());
  std::filesystem::remove(path);
}

TEST(H5Io, ErrorsNameTheDatasetAndTheProblem) {
  const std::string path = temp_path("h5_errors.h5");
  const std::vector<double> d = {1.0, 2.0};
  {
    auto f = h5::create_file(path);
    h5::write(f, "A", {2}, d.data());
  }
  auto f = h5::open_file_read(path);
  try {
    h5::read<float>(f, "A");
    FAIL() << "float64 read as float32";
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'A' has dtype float64, expected float32"), std::string::npos) << e.what();
  }
  try {
    h5::read<float>(f, "E");
    FAIL() << "missing dataset read";
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'E' is missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h5::open_file_read(temp_path("does_not_exist.h5")), h5::Error);
  std::filesystem::remove(path);
}

// A compound row as the run files' tables have them: integers, floats and a fixed-size string.
struct TableRow {
  int64_t id = 0;
  double x = 0;
  char tag[8] = {};
};

h5::Handle table_row_type() {
  h5::Handle t(H5Tcreate(H5T_COMPOUND, sizeof(TableRow)), H5Tclose);
  H5Tinsert(t, "id", offsetof(TableRow, id), H5T_NATIVE_INT64);
  H5Tinsert(t, "x", offsetof(TableRow, x), H5T_NATIVE_DOUBLE);
  h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(s, sizeof(TableRow::tag));
  H5Tinsert(t, "tag", offsetof(TableRow, tag), s);
  return t;
}

TableRow table_row(int64_t i) {
  TableRow r;
  r.id = i;
  r.x = 0.5 * double(i) - 1.0;
  r.tag[0] = char('a' + i);
  return r;
}

void expect_error(const std::function<void()>& f, const std::string& want) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one with: " << want;
  } catch (const h5::Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(H5Table, AppendsRowsThatReadBackAfterReopening) {
  const std::string path = temp_path("h5_table.h5");
  const auto type = table_row_type();
  const int n = 5;  // over two chunks of 2 rows and a part
  {
    auto f = h5::create_file(path);
    auto t = h5::Table::create(f, "t", type, /*chunk_rows=*/2, path);
    EXPECT_EQ(t.rows(), 0);
    for (int i = 0; i < n; ++i) t.append(table_row(i));
    EXPECT_EQ(t.rows(), n);
  }
  {
    auto f = h5::open_file_rw(path);
    auto t = h5::Table::open(f, "t", type, path);
    EXPECT_EQ(t.rows(), n);
    EXPECT_TRUE(t.missing_columns().empty());
    t.append(table_row(n), h5::Table::Flush::no);
    EXPECT_EQ(t.rows(), n + 1);
  }
  auto f = h5::open_file_read(path);
  const auto rows = h5::read_table<TableRow>(f, "t", type, path);
  ASSERT_EQ(rows.size(), size_t(n + 1));
  for (int i = 0; i <= n; ++i) {
    EXPECT_EQ(rows[size_t(i)].id, i);
    EXPECT_EQ(rows[size_t(i)].x, table_row(i).x);
    EXPECT_STREQ(rows[size_t(i)].tag, table_row(i).tag);
  }
  // Extendable and chunked as asked.
  h5::Handle ds(H5Dopen2(f, "t", H5P_DEFAULT), H5Dclose);
  h5::Handle space(H5Dget_space(ds), H5Sclose);
  hsize_t dims = 0, max_dims = 0, chunk = 0;
  H5Sget_simple_extent_dims(space, &dims, &max_dims);
  EXPECT_EQ(max_dims, H5S_UNLIMITED);
  h5::Handle props(H5Dget_create_plist(ds), H5Pclose);
  ASSERT_EQ(H5Pget_chunk(props, 1, &chunk), 1);
  EXPECT_EQ(chunk, 2u);
  std::filesystem::remove(path);
}

TEST(H5Table, RowsOfWidthElementsMakeA2DTable) {
  const std::string path = temp_path("h5_table_2d.h5");
  {
    auto f = h5::create_file(path);
    auto t = h5::Table::create(f, "h", H5T_NATIVE_INT64, /*chunk_rows=*/16, path, /*width=*/4);
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t row[4] = {i, 10 * i, 100 * i, -i};
      t.append(row);
    }
  }
  {
    auto f = h5::open_file_rw(path);
    auto t = h5::Table::open(f, "h", H5T_NATIVE_INT64, path, 4);
    EXPECT_EQ(t.rows(), 3);
    const std::vector<int64_t> row = {7, 8, 9, 10};
    t.append(row.data(), row.size() * sizeof(int64_t));
    expect_error([&] { h5::Table::open(f, "h", H5T_NATIVE_INT64, path, 5); }, "has rows of 4 elements, expected 5");
  }
  auto f = h5::open_file_read(path);
  const auto h = h5::read<int64_t>(f, "h");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(h.data, (std::vector<int64_t>{0, 0, 0, 0, 1, 10, 100, -1, 2, 20, 200, -2, 7, 8, 9, 10}));
  std::filesystem::remove(path);
}

// Appending rows of another type: what differs is named, before anything is written.
TEST(H5Table, AnotherRowTypeFailsWithTheTableAndTheProblem) {
  const std::string path = temp_path("h5_table_types.h5");
  const auto type = table_row_type();
  {
    auto f = h5::create_file(path);
    auto t = h5::Table::create(f, "t", type, 8, path);
    t.append(table_row(0));
    h5::Table::create(f, "counts", H5T_NATIVE_INT64, 8, path, 3);
    const double one = 1.0;
    h5::write<double>(f, "fixed", {1}, &one);
  }
  auto f = h5::open_file_rw(path);
  // The same column as another kind of value.
  {
    h5::Handle other(H5Tcreate(H5T_COMPOUND, sizeof(TableRow)), H5Tclose);
    H5Tinsert(other, "id", offsetof(TableRow, id), H5T_NATIVE_INT64);
    h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(s, 8);
    H5Tinsert(other, "x", offsetof(TableRow, x), s);
    H5Tinsert(other, "tag", offsetof(TableRow, tag), s);
    expect_error([&] { h5::Table::open(f, "t", other, path); },
                 "column 'x' of /t in '" + path + "' is float64, the rows appended hold string");
  }
  // A stored column the rows lack: it would be left empty.
  {
    h5::Handle fewer(H5Tcreate(H5T_COMPOUND, 16), H5Tclose);
    H5Tinsert(fewer, "id", 0, H5T_NATIVE_INT64);
    H5Tinsert(fewer, "x", 8, H5T_NATIVE_DOUBLE);
    expect_error([&] { h5::Table::open(f, "t", fewer, path); },
                 "/t in '" + path + "' has a column 'tag' that the rows appended lack");
  }
  expect_error([&] { h5::Table::open(f, "counts", type, path, 3); }, "/counts in '" + path +
                                                                          "' holds int64 rows, not compound");
  expect_error([&] { h5::Table::open(f, "t", H5T_NATIVE_INT64, path, 3); }, "has rank 1, expected 2");
  expect_error([&] { h5::Table::open(f, "fixed", H5T_NATIVE_DOUBLE, path); }, "/fixed in '" + path + "' cannot grow");
  expect_error([&] { h5::Table::open(f, "absent", type, path); }, "'" + path + "' has no /absent table");
  // A row of the wrong size is refused, and the table keeps its rows.
  auto t = h5::Table::open(f, "t", type, path);
  const int32_t small = 1;
  expect_error([&] { t.append(small); }, "cannot append a row of 4 bytes to /t in '" + path + "', whose rows are " +
                                             std::to_string(sizeof(TableRow)) + " bytes");
  EXPECT_EQ(t.rows(), 1);
  std::filesystem::remove(path);
}

// Rows with columns the stored table lacks (a file from before they existed) still append: the
// columns are listed, their values are lost, and the rest is written.
TEST(H5Table, NewerRowsAppendToAnOlderTableWithoutTheirNewColumns) {
  const std::string path = temp_path("h5_table_older.h5");
  struct OldRow {
    int64_t id;
    double x;
  };
  h5::Handle old_type(H5Tcreate(H5T_COMPOUND, sizeof(OldRow)), H5Tclose);
  H5Tinsert(old_type, "id", offsetof(OldRow, id), H5T_NATIVE_INT64);
  H5Tinsert(old_type, "x", offsetof(OldRow, x), H5T_NATIVE_DOUBLE);
  {
    auto f = h5::create_file(path);
    h5::Table::create(f, "t", old_type, 8, path).append(OldRow{0, 1.5});
  }
  {
    auto f = h5::open_file_rw(path);
    auto t = h5::Table::open(f, "t", table_row_type(), path);
    EXPECT_EQ(t.missing_columns(), (std::set<std::string>{"tag"}));
    t.append(table_row(1));
  }
  auto f = h5::open_file_read(path);
  const auto rows = h5::read_table<OldRow>(f, "t", old_type, path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].x, 1.5);
  EXPECT_EQ(rows[1].id, 1);
  EXPECT_EQ(rows[1].x, table_row(1).x);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lobench
