#include "harness/sweep/printers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <stdexcept>

#include "harness/sweep/run_axes.hpp"
#include "harness/system_memory.hpp"

namespace lobench::sweep {
namespace {

// A column's value as text: CSV (NaN empty, text quoted when needed) or JSON (NaN null, text escaped).
std::string column_value(const io::ResultRow& r, const io::Column& c, bool json) {
  const char* p = reinterpret_cast<const char*>(&r) + c.offset;
  switch (c.kind) {
    case io::ColumnKind::int32: {
      int32_t v;
      std::memcpy(&v, p, sizeof v);
      return std::to_string(v);
    }
    case io::ColumnKind::int64: {
      int64_t v;
      std::memcpy(&v, p, sizeof v);
      return std::to_string(v);
    }
    case io::ColumnKind::float64: {
      double v;
      std::memcpy(&v, p, sizeof v);
      if (!std::isfinite(v)) return json ? "null" : "";
      return fmt::format("{}", v);
    }
    case io::ColumnKind::text: break;
  }
  const std::string s(p, strnlen(p, c.size));
  std::string out;
  if (json) {
    out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      if (static_cast<unsigned char>(ch) < 0x20) out += fmt::format("\\u{:04x}", int(ch));
      else out += ch;
    }
    return out + "\"";
  }
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// The printers stream strings made by fmt::format instead of calling fmt::print(stream, ...): fmt 9's
// <fmt/ostream.h> compiles fmt's whole formatting engine into the file (about 2 CPU-s), while fmt::format
// is compiled once in libfmt (docs/reliability.md, "Build time").
void print_summary(std::ostream& os, const RunSummary& s) {
  if (s.dry_run) {
    os << fmt::format("summary: {} planned ({} would be skipped){}\n", s.ok + s.skipped, s.skipped,
                      s.file.empty() ? "" : fmt::format("; wrote {}", s.file));
    return;
  }
  os << fmt::format("summary: {} ok, {} skipped, {} failed in {}{}\n", s.ok, s.skipped, s.failed,
                    format_duration(s.wall_seconds), s.file.empty() ? "" : fmt::format("; wrote {}", s.file));
}

class TextPrinter final : public Printer {
 public:
  // The table's optional columns: the axes with a header of their own (sweep/run_axes.cpp), when swept.
  TextPrinter(std::ostream& out, const std::vector<std::string>& swept) : out_(out) {
    for (const RunAxis& axis : run_axes())
      if (!axis.header.empty() && std::find(swept.begin(), swept.end(), axis.name) != swept.end())
        shown_.push_back({axis.header, axis.width, &io::result_column(axis.column)});
  }
  void note(const std::string& line) override {
    out_ << fmt::format("{}\n", line);
    out_.flush();
  }
  void row(const io::ResultRow& r) override {
    if (!header_done_) header();
    const bool ok = r.status == "ok";
    auto err = [&](double e) { return ok && std::isfinite(e) ? fmt::format("{:.1e}", e) : std::string("-"); };
    auto mib = [](double b) { return std::isfinite(b) ? fmt::format("{:.1f}", b / 1048576.0) : std::string("-"); };
    std::string note = r.reason.str();
    if (r.e_format.view() != "fp32" && !r.e_format.empty())
      note = fmt::format("E {} ({}), {}; kernel-only errors {} {} {} {}", r.e_format, r.e_rounding,
                         format_bytes(double(r.e_stored_bytes)), err(r.rel_loss_err_kernel), err(r.rel_dA_err_kernel),
                         err(r.rel_dE_err_kernel), note);
    std::string axes;
    for (const AxisColumn& c : shown_) {
      const std::string value = io::column_text(r, *c.column);
      axes += fmt::format(" {:>{}}", value.empty() ? "-" : value, c.width);
    }
    out_ << fmt::format("{:<12} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2}{} {:>7} {:>10} {:>5} {:>3} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9}  {}\n",
                        r.variant, r.B, r.N, r.V, r.D, r.L, r.threads, axes, r.status,
                        ok ? fmt::format("{:.2f}", r.time_median_s * 1e3) : "-",
                        ok && std::isfinite(r.time_cv) ? fmt::format("{:.1f}", 100 * r.time_cv) : "-",
                        ok ? std::to_string(r.reps) : "-",
                        ok ? fmt::format("{:.1f}", r.effective_gflops) : "-",
                        !ok || !std::isfinite(r.gemm_fraction) ? "-"
                        : r.gemm_fraction > 1.0                 ? "error"  // above the yardstick: see the note
                                                                : fmt::format("{:.0f}%", 100 * r.gemm_fraction),
                        mib(r.peak_bytes), mib(double(r.predicted_bytes)), err(r.rel_loss_err), err(r.rel_dA_err),
                        err(r.rel_dE_err), r.flags.empty() ? note : fmt::format("[{}] {}", r.flags, note));
    out_.flush();
  }
  void summary(const RunSummary& s) override { print_summary(out_, s); }

 private:
  void header() {
    std::string axes;
    for (const AxisColumn& c : shown_) axes += fmt::format(" {:>{}}", c.header, c.width);
    // The table's short names, in the run file's column names and units (issue 43: they differed unsaid).
    out_ << fmt::format("columns (run file names, results/SCHEMA.md): median_ms = time_median_s in ms, cv% = time_cv "
                        "in %, n = reps, GFLOP/s = effective_gflops, %GEMM = gemm_fraction in %, peak_MiB = "
                        "peak_bytes in MiB, pred_MiB = predicted_bytes in MiB, rel_loss/rel_dA/rel_dE = "
                        "rel_loss_err/rel_dA_err/rel_dE_err\n");
    out_ << fmt::format("{:<12} {:>4} {:>4} {:>8} {:>4} {:>3} {:>2}{} {:>7} {:>10} {:>5} {:>3} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>9}  {}\n",
                        "variant", "B", "N", "V", "D", "L", "T", axes, "status", "median_ms", "cv%", "n", "GFLOP/s", "%GEMM",
                        "peak_MiB", "pred_MiB", "rel_loss", "rel_dA", "rel_dE", "[flags] note");
    header_done_ = true;
  }
  struct AxisColumn {
    std::string header;
    int width;
    const io::Column* column;
  };
  std::ostream& out_;
  std::vector<AxisColumn> shown_;
  bool header_done_ = false;
};

class CsvPrinter final : public Printer {
 public:
  CsvPrinter(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}
  void note(const std::string& line) override { err_ << fmt::format("{}\n", line); }
  void row(const io::ResultRow& r) override {
    if (!header_done_) {
      std::string h;
      for (const io::Column& c : io::result_columns()) {
        if (!h.empty()) h += ',';
        h += c.name;
      }
      out_ << fmt::format("{}\n", h);
      header_done_ = true;
    }
    std::string line;
    for (const io::Column& c : io::result_columns()) {
      if (!line.empty()) line += ',';
      line += column_value(r, c, false);
    }
    out_ << fmt::format("{}\n", line);
    out_.flush();
  }
  void summary(const RunSummary& s) override { print_summary(err_, s); }

 private:
  std::ostream& out_;
  std::ostream& err_;
  bool header_done_ = false;
};

class JsonlPrinter final : public Printer {
 public:
  JsonlPrinter(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}
  void note(const std::string& line) override { err_ << fmt::format("{}\n", line); }
  void row(const io::ResultRow& r) override {
    std::string line;
    for (const io::Column& c : io::result_columns())
      line += fmt::format("{}\"{}\":{}", line.empty() ? "{" : ",", c.name, column_value(r, c, true));
    out_ << fmt::format("{}}}\n", line);
    out_.flush();
  }
  void summary(const RunSummary& s) override { print_summary(err_, s); }

 private:
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace

OutputFormat parse_output_format(const std::string& name) {
  if (name == "text") return OutputFormat::text;
  if (name == "csv") return OutputFormat::csv;
  if (name == "jsonl") return OutputFormat::jsonl;
  throw std::invalid_argument(fmt::format("--format: unknown format '{}' (valid: text, csv, jsonl)", name));
}

std::unique_ptr<Printer> make_printer(OutputFormat format, std::ostream& out, std::ostream& err,
                                      const std::vector<std::string>& swept) {
  switch (format) {
    case OutputFormat::csv: return std::make_unique<CsvPrinter>(out, err);
    case OutputFormat::jsonl: return std::make_unique<JsonlPrinter>(out, err);
    case OutputFormat::text: break;
  }
  return std::make_unique<TextPrinter>(out, swept);
}

std::string format_duration(double s) {
  const int64_t t = int64_t(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace lobench::sweep
