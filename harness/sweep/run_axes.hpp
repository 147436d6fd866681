// The axes of `lobench run`, declared once: each entry names the axis, its kind, default values and help,
// its /results column, how the text table shows it, and the code that turns a value into the typed point.
// Everything else reads this table: the options (`--NAME LIST`, `lobench options`, docs/options.md), the
// product and its points (step_point.cpp), --list, the sweep_axes attribute, the row's columns (plan.cpp),
// the resume and merge key (the column is an identity column, io/result_row.hpp) and the printers.
//
// A new axis is one entry in run_axes.cpp plus, when no column holds it yet, its column in
// io/result_row.hpp (harness/README.md, "Adding an axis to `run`", has a worked example).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/sweep/axes.hpp"
#include "harness/sweep/step_point.hpp"

namespace lobench::sweep {

struct RunAxis {
  std::string name;  // the option --NAME; its name in --list and in the sweep_axes attribute
  AxisKind kind = AxisKind::text;
  std::vector<std::string> defaults;  // {}: one value, the machine's core count (threads)
  // The --help text (followed by " (comma-separated list)"); for a `shared` axis, the detail that follows
  // the shared option table's help (cli/options.cpp: the option means the same in every command).
  std::string help;
  bool shared = false;
  std::string column;  // its /results column (an identity column), holding the canonical value
  // The text table shows a swept axis as a column `header` of `width` characters (an empty value as
  // "-"); no header: one of the table's fixed columns (B, N, V, D, L, threads, variant).
  std::string header;
  int width = 0;
  // Two or more values the round-trip test sweeps (harness/tests/run_axes_test.cpp), every other axis
  // held at its first test value; each must give its own row, stored as written (canonical names).
  std::vector<std::string> test_values;
  // The code that uses the value: sets the point's typed fields from one value (the axes before this one
  // already set) and returns the canonical spelling that the column and the key store. Throws
  // std::invalid_argument naming --NAME and the value.
  std::function<std::string(const std::string& value, StepPoint& point)> apply;
};

// Every axis of `lobench run`, slowest first (the variants vary fastest, so one group's inputs serve all).
const std::vector<RunAxis>& run_axes();

// The rows `| option | column | kind | default |` of every axis, for results/SCHEMA.md (io::schema_markdown).
std::string run_axes_markdown();

// A test's axis (the built-in ones are the entries in run_axes.cpp), declared before `variants` for the
// lifetime of this object. Throws std::logic_error for a name or column taken, or a column that is not an
// identity column of /results or whose type does not hold the axis's kind.
class ScopedRunAxis {
 public:
  explicit ScopedRunAxis(RunAxis axis);
  ~ScopedRunAxis();
  ScopedRunAxis(const ScopedRunAxis&) = delete;
  ScopedRunAxis& operator=(const ScopedRunAxis&) = delete;

 private:
  std::string name_;
};

}  // namespace lobench::sweep
