#include "harness/python/sweep_call.hpp"

#include <CLI/CLI.hpp>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/cli/environment.hpp"
#include "harness/cli/numbers.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/io/result_row.hpp"
#include "harness/plugin/plugin_loader.hpp"
#include "harness/sweep/isolated_row.hpp"

namespace nb = nanobind;

namespace lobench::python {
namespace {

// A stream buffer that hands each complete line to a Python callable, tagged with the stream's name. The
// callable must not raise (lobench/sweep_api.py catches inside it); if it does, the error is reported as
// unraisable rather than thrown through the C++ sweep, which would take it for the sweep's own failure.
class LinesToPython final : public std::streambuf {
 public:
  LinesToPython(nb::callable on_line, const char* stream) : on_line_(std::move(on_line)), stream_(stream) {}
  ~LinesToPython() override { finish(); }

  // The last line, when it did not end with a newline.
  void finish() {
    if (!line_.empty()) hand_over();
  }

 protected:
  int overflow(int ch) override {
    if (ch == traits_type::eof()) return traits_type::not_eof(ch);
    if (ch == '\n') hand_over();
    else line_ += char(ch);
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(static_cast<unsigned char>(s[i]));
    return n;
  }

 private:
  void hand_over() {
    const std::string line = std::move(line_);
    line_.clear();
    try {
      on_line_(stream_, line);
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("lobench.run's line handler");
    }
  }

  nb::callable on_line_;
  const char* stream_;
  std::string line_;
};

// Points a standard stream at another buffer for the guard's life (the sweep writes to std::cout and
// std::cerr, harness/cli/run_command.cpp).
class StreamRedirect {
 public:
  StreamRedirect(std::ostream& os, std::streambuf* to) : os_(os) {
    os_.flush();
    old_ = os_.rdbuf(to);
  }
  ~StreamRedirect() { os_.rdbuf(old_); }
  StreamRedirect(const StreamRedirect&) = delete;
  StreamRedirect& operator=(const StreamRedirect&) = delete;

 private:
  std::ostream& os_;
  std::streambuf* old_;
};

// The `run` command on a fresh CLI app, as main() and `python -m lobench` register it.
void register_run(CLI::App& app, const std::string& provenance_argv) {
  app.require_subcommand(1);
  register_run_command(app, provenance_argv);
  cli::accept_count_notation(app);
}

int sweep_call(const std::vector<std::string>& args, const std::string& provenance_argv,
          const std::vector<std::string>& row_command, nb::callable on_line) {
  if (args.empty() || args.front() != "run") throw nb::value_error("_engine.sweep: args must start with \"run\"");
  sweep::set_row_command(row_command);
  cli::check_environment();           // std::invalid_argument: ValueError, as every check below
  plugin::load_environment_plugins();  // loads each library once per process
  CLI::App app{"lobench.run", "lobench.run"};
  register_run(app, provenance_argv);
  set_command_exit_code(0);
  LinesToPython out(on_line, "out"), err(on_line, "err");
  int code = 0;
  {
    const StreamRedirect to_out(std::cout, &out), to_err(std::cerr, &err);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {  // an unknown option or a value CLI11 itself refused
      throw nb::value_error(e.what());
    } catch (const io::Interrupted& e) {  // the sweep stopped between rows, its file closed
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
      throw nb::python_error();
    }
    code = command_exit_code();
  }
  out.finish();
  err.finish();
  return code;
}

std::vector<std::tuple<std::string, bool>> run_options() {
  CLI::App app;
  register_run(app, "");
  std::vector<std::tuple<std::string, bool>> options;
  for (const CLI::Option* o : app.get_subcommand("run")->get_options()) {
    if (o->get_lnames().empty() || o->get_lnames().front() == "help") continue;
    options.emplace_back("--" + o->get_lnames().front(), o->get_expected_max() == 0);  // a flag takes no value
  }
  return options;
}

}  // namespace

void bind_sweep_call(nb::module_& m) {
  m.def("sweep", &sweep_call, nb::arg("args"), nb::arg("provenance_argv"), nb::arg("row_command"), nb::arg("on_line"));
  m.def("run_options", &run_options);
  m.def("result_units", [] {
    std::vector<std::tuple<std::string, std::string>> units;
    for (const io::Column& c : io::result_columns()) units.emplace_back(c.name, c.unit);
    return units;
  });
}

}  // namespace lobench::python
