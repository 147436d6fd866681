// The one sweep grammar of every command: named axes, each a list of values given as "a,b,c" on the
// command line, swept as their Cartesian product. Values stay text here; each command turns a point
// into its typed configuration (run: StepPoint, train-xmc: its run config), so that parsing and
// canonical names live with the types and the product is written once.
//
// A repeated option means the same for every command: the last occurrence wins, so options after a
// named sweep (`lobench run @harness/sweeps/table2.args --B 32`) override the file's values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;  // CLI11, the heaviest header of the build, is included where options are registered (axes.cpp)
}

namespace lobench::sweep {

// "a, b,c" -> {"a", "b", "c"}: spaces around items are dropped, empty items refused.
// Throws std::invalid_argument naming `what` when the list is empty or has an empty item.
std::vector<std::string> split_list(const std::string& text, const std::string& what);

// One point of the product: every axis's value at that point.
class AxisPoint {
 public:
  const std::string& at(const std::string& axis) const;  // throws std::logic_error for an unknown axis
  int64_t int_at(const std::string& axis) const;          // parsed strictly (the Axes validated it)
  double real_at(const std::string& axis) const;
  const std::map<std::string, std::string>& values() const { return values_; }
  // "B=32 N=32 V=100000 ..." in axis order, for --list and messages.
  std::string describe() const;

 private:
  friend class Axes;
  std::map<std::string, std::string> values_;
  std::vector<std::string> order_;
};

enum class AxisKind { integer, real, text };

class Axes {
 public:
  // Declares an axis with its default values. Axes declared first vary slowest.
  void add(const std::string& name, AxisKind kind, std::vector<std::string> defaults, std::string help);
  // Registers every axis as a list option `--NAME LIST` on `cmd`.
  void register_options(CLI::App* cmd);
  // Sets an axis from text ("a,b,c"); validates integer/real values (integers are counts: 1e5 and 100k
  // are stored as 100000, harness/config/counts.hpp). Throws std::invalid_argument.
  void set(const std::string& name, const std::string& list);
  void set(const std::string& name, std::vector<std::string> values);

  const std::vector<std::string>& values(const std::string& name) const;
  std::vector<int64_t> int_values(const std::string& name) const;
  // Number of points (product of the axes' lengths), overflow-checked.
  int64_t size() const;
  // The product, the last-declared axis varying fastest.
  std::vector<AxisPoint> expand() const;
  // The axes that take more than one value (what a table should show).
  std::vector<std::string> swept() const;
  const std::vector<std::string>& names() const { return order_; }

 private:
  struct Axis {
    AxisKind kind = AxisKind::text;
    std::vector<std::string> values;
    std::string help;
  };
  const Axis& axis(const std::string& name) const;
  std::map<std::string, Axis> axes_;
  std::vector<std::string> order_;
};

}  // namespace lobench::sweep
