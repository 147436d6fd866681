// The axes of `lobench run` are declared once (sweep/run_axes.cpp): every declared axis, and an axis a
// test declares at run time, goes through the command line, --list, a run file, resume and merge
// without any other code naming it.
#include "harness/sweep/run_axes.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/io/h5_io.hpp"
#include "harness/io/merge_runs.hpp"
#include "harness/io/results_file.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep/run_sweep.hpp"
#include "variants/tests/temp_path.hpp"

namespace lobench::sweep {
namespace {

std::string joined(const std::vector<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ",") + v;
  return s;
}

// A sweep of `axis` over its test values, every other axis at its first test value.
SweepSettings sweep_of(const RunAxis& axis, const std::string& out) {
  SweepSettings s;
  s.axes = step_axes(1);
  for (const RunAxis& a : run_axes()) s.axes.set(a.name, a.name == axis.name ? a.test_values : std::vector{a.test_values[0]});
  s.reps.fixed_reps = 1;
  s.warmup = 0;
  s.sgemm_n = 64;
  s.accuracy = false;
  s.mem_limit = int64_t(1) << 30;
  s.out = out;
  return s;
}

// The axis's column in every row of `path`, in the order of the rows.
std::vector<std::string> column_of(const RunAxis& axis, const std::string& path) {
  std::vector<std::string> values;
  for (const io::ResultRow& r : ResultsFile::read_all(path))
    values.push_back(io::column_text(r, io::result_column(axis.column)));
  return values;
}

std::multiset<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// The round trip of one axis: the option parses its list, --list names every value, two partitions
// record one value each in their run files, merge joins them, and resuming a part adds only the rows
// it lacks, each value once, in the axis's column; the text table shows the swept axis.
void expect_round_trip(const RunAxis& axis) {
  SCOPED_TRACE("axis " + axis.name);
  ASSERT_GE(axis.test_values.size(), 2u);
  const std::multiset<std::string> expected = as_set(axis.test_values);

  CLI::App app;
  Axes parsed = step_axes(1);
  parsed.register_options(&app);
  app.parse(std::vector<std::string>{joined(axis.test_values), "--" + axis.name});  // CLI11 takes argv reversed
  EXPECT_EQ(parsed.values(axis.name), axis.test_values);

  SweepSettings s = sweep_of(axis, "");
  std::ostringstream list;
  list_rows(s, list);
  for (const std::string& v : axis.test_values) {
    const std::string shown = axis.name == "variants" ? "\n" + v + " " : " " + axis.name + "=" + v;
    EXPECT_NE(("\n" + list.str()).find(shown), std::string::npos) << list.str();
  }
  EXPECT_NE(list.str().find(std::to_string(axis.test_values.size()) + " rows\n"), std::string::npos) << list.str();

  std::vector<std::string> parts;
  for (int k = 0; k < 2; ++k) {
    parts.push_back(testing::temp_path("run_axes_" + axis.name + "_part" + std::to_string(k) + ".h5"));
    s = sweep_of(axis, parts.back());
    s.partition = Partition::parse(std::to_string(k) + "/2");
    s.out_mode = OutMode::overwrite;
    std::ostringstream table, err;
    ASSERT_EQ(run_sweep(s, collect_provenance("t"), table, err), 0) << table.str() << err.str();
    if (!axis.header.empty()) {
      EXPECT_NE(table.str().find(" " + axis.header + " "), std::string::npos) << table.str();
    }
  }
  const std::vector<std::string> part0 = column_of(axis, parts[0]);
  EXPECT_EQ(as_set(part0).size() + as_set(column_of(axis, parts[1])).size(), expected.size());

  const std::string merged = testing::temp_path("run_axes_" + axis.name + "_merged.h5");
  io::merge_runs(merged, parts, collect_provenance("t"), OutMode::overwrite);
  EXPECT_EQ(as_set(column_of(axis, merged)), expected);

  s = sweep_of(axis, parts[0]);
  s.out_mode = OutMode::resume;
  std::ostringstream table, err;
  ASSERT_EQ(run_sweep(s, collect_provenance("t"), table, err), 0) << table.str() << err.str();
  const std::vector<std::string> resumed = column_of(axis, parts[0]);
  EXPECT_EQ(as_set(resumed), expected);
  EXPECT_TRUE(std::equal(part0.begin(), part0.end(), resumed.begin()));  // the part's own rows kept first

  {
    const h5::Handle f = h5::open_file_read(parts[0]);
    EXPECT_NE(h5::read_attr_string(f, "sweep_axes").value_or("").find(axis.name + "=" + joined(axis.test_values)),
              std::string::npos);
  }
  std::filesystem::remove(merged);
  std::filesystem::remove(parts[0]);  // parts[1] stays for the caller to read; the next round trip replaces it
}

// (That results/SCHEMA.md, axes included, is current: ResultSchema.TheCommittedSchemaDocumentIsCurrent, against
// what `lobench schema` prints, since the training jobs' sections come from the jobs the executable links.)

TEST(RunAxes, EveryAxisNamesAnIdentityColumnThatHoldsItsValues) {
  std::set<std::string> names, columns;
  for (const RunAxis& a : run_axes()) {
    SCOPED_TRACE(a.name);
    EXPECT_TRUE(names.insert(a.name).second);
    EXPECT_TRUE(columns.insert(a.column).second);
    const auto& ids = io::identity_columns();
    const auto c = std::find_if(ids.begin(), ids.end(), [&](const io::Column* c) { return a.column == c->name; });
    ASSERT_NE(c, ids.end()) << a.column;
    const bool text = (*c)->kind == io::ColumnKind::text;
    EXPECT_EQ(text, a.kind == AxisKind::text);
    EXPECT_TRUE(a.header.empty() == (a.width == 0));
    EXPECT_TRUE(bool(a.apply));
  }
  EXPECT_EQ(run_axes().back().name, "variants");  // the fastest: one group's inputs serve every variant
}

TEST(RunAxes, EveryDeclaredAxisRoundTripsThroughTheCommandLineListRunFileResumeAndMerge) {
  for (const RunAxis& axis : run_axes()) expect_round_trip(axis);
}

// An axis declared in one entry (here by the test) is swept, listed, recorded in its column, shown in the
// table, resumed and merged with no other change: `weighted`, now a flag, as an axis of 0 and 1.
TEST(RunAxes, AnAxisDeclaredInOneEntryRoundTripsWithNoOtherChange) {
  const ScopedRunAxis weighted({"weighted", AxisKind::integer, {"0"}, "position weights drawn (0 or 1)", false,
                                "weighted", "w", 2, {"0", "1"}, [](const std::string& v, StepPoint& p) {
                                  if (v != "0" && v != "1") throw std::invalid_argument("--weighted: 0 or 1, not " + v);
                                  p.shape.weighted = v == "1";
                                  return v;
                                }});
  EXPECT_EQ(run_axes()[run_axes().size() - 2].name, "weighted");
  expect_round_trip(run_axes()[run_axes().size() - 2]);
  const std::string path = testing::temp_path("run_axes_weighted_part1.h5");
  for (const io::ResultRow& r : ResultsFile::read_all(path)) EXPECT_EQ(r.weighted, 1) << "the point was weighted";

  EXPECT_THROW(ScopedRunAxis({"weighted", AxisKind::integer, {"0"}, "", false, "seed", "", 0, {"0", "1"}, {}}),
               std::logic_error);  // a name taken
  EXPECT_THROW(ScopedRunAxis({"label", AxisKind::text, {"a"}, "", false, "reason", "", 0, {"a", "b"}, {}}),
               std::logic_error);  // not an identity column
  EXPECT_THROW(ScopedRunAxis({"label", AxisKind::text, {"a"}, "", false, "ranks", "", 0, {"a", "b"}, {}}),
               std::logic_error);  // an integer column cannot hold text
}

TEST(RunAxes, ATestsAxisIsGoneAfterItsScope) {
  for (const RunAxis& a : run_axes()) EXPECT_NE(a.name, "weighted");
}

}  // namespace
}  // namespace lobench::sweep
