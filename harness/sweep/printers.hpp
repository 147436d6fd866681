// Record, on the terminal: what a sweep prints as its rows complete. One interface, three printers:
// a text table for people (every swept axis shown), CSV and JSON Lines on stdout for scripts (every
// column, in the run file's names). Notes and the summary go to the table for text, to stderr otherwise,
// so that stdout stays machine-readable.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "harness/io/result_row.hpp"

namespace lobench::sweep {

enum class OutputFormat { text, csv, jsonl };
// "text", "csv", "jsonl"; throws std::invalid_argument naming the valid ones.
OutputFormat parse_output_format(const std::string& name);

struct RunSummary {
  int64_t ok = 0, skipped = 0, failed = 0;  // a dry run: ok counts the rows planned
  bool dry_run = false;                      // nothing ran: "N planned (K would be skipped)"
  double wall_seconds = 0;
  std::string file;  // the run file written ("" for none)
};

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void note(const std::string& line) = 0;  // a line about the run (yardstick, limits)
  virtual void row(const io::ResultRow& row) = 0;
  virtual void summary(const RunSummary& s) = 0;
};

// `swept` names the axes with more than one value (the text table shows them as columns).
std::unique_ptr<Printer> make_printer(OutputFormat format, std::ostream& out, std::ostream& err,
                                      const std::vector<std::string>& swept);

// "1:05" or "1:02:03".
std::string format_duration(double seconds);

}  // namespace lobench::sweep
