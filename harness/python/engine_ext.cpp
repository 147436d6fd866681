// lobench._engine: lobench's own sweep engine inside Python, so that Python variants
// (lobench/python_variants.py) are measured by it: `python -m lobench run --variants fused,mymod:MyVariant ...`
// registers each Python variant (python_variant.hpp) through the registry's one path in
// (Registry::register_from, as built-ins and C++ plug-ins) and runs the `run` or `list` command of the
// C++ program in this process, on this thread, with the GIL held. Built in the build tree
// (LOBENCH_PYTHON_PACKAGE=ON); the wheel carries the step library (_ext) only.
#include <CLI/CLI.hpp>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "harness/cli/args_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/environment.hpp"
#include "harness/cli/numbers.hpp"
#include "harness/io/interrupt_guard.hpp"
#include "harness/plugin/plugin_loader.hpp"
#include "harness/sweep/python_peers.hpp"
#include "harness/python/python_variant.hpp"
#include "harness/python/sweep_call.hpp"
#include "harness/sweep/isolated_row.hpp"
#include "variants/plugin_api.hpp"

namespace nb = nanobind;

namespace {

// The variant register_python_variant is handing to the registry (register_from takes a plain function).
std::unique_ptr<lobench::Variant> g_pending;

extern "C" int lobench_register_pending_python_v1(lobench::Registry* registry, int abi) {
  if (abi == LOBENCH_PLUGIN_ABI) registry->add(std::move(g_pending));
  return LOBENCH_PLUGIN_ABI;
}

void register_python_variant(nb::object obj, const std::string& origin) {
  g_pending = lobench::python::make_python_variant(std::move(obj));
  // A Python variant is named in --variants by its bare name, so it may not share one with a variant of
  // another backend (`fused` would then run the CPU one).
  const lobench::Registry& registry = lobench::Registry::instance();
  if (const lobench::Variant* taken = registry.find(g_pending->name())) {
    const std::string name = g_pending->name();
    g_pending.reset();
    throw nb::value_error(("python variant " + name + " (" + origin + "): the name of variant " + taken->backend() +
                           "/" + name + " is already registered (" + registry.origin(*taken) + ")").c_str());
  }
  try {
    lobench::Registry::instance().register_from(lobench_register_pending_python_v1, origin);
  } catch (const std::invalid_argument& e) {
    g_pending.reset();
    throw nb::value_error(e.what());
  }
}

// `lobench run ...` or `lobench list ...` (args[0] is the program's name), as the C++ program's main()
// runs them: usage errors are exit status 2 with one line on stderr.
// `row_command`: how `run --isolate` starts one row again (the interpreter, -m lobench and the arguments
// as `python -m lobench` got them, so that the child loads the same Python variants).
int run_command_line(const std::vector<std::string>& args, const std::vector<std::string>& row_command) {
  lobench::sweep::set_row_command(row_command);
  std::vector<std::string> expanded;
  try {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    expanded = lobench::expand_args_files(int(argv.size()), argv.data());
    lobench::cli::check_environment();
    lobench::plugin::load_environment_plugins();
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: {}\n", e.what());
    return 2;
  }
  std::string joined;
  for (const auto& a : expanded) joined += (joined.empty() ? "" : " ") + a;
  CLI::App app{"lobench (Python engine): run and list with Python variants", "python -m lobench"};
  app.require_subcommand(1);
  lobench::register_list_command(app);
  lobench::register_run_command(app, joined);
  lobench::cli::accept_count_notation(app);
  lobench::set_command_exit_code(0);
  std::vector<std::string> reversed(expanded.rbegin(), expanded.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "lobench: {}\nRun with --help for more information.\n", e.what());
    return 2;
  } catch (const lobench::io::Interrupted& e) {
    fmt::print(stderr, "lobench: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "lobench: error: {}\n", e.what());
    return 2;
  }
  std::cout.flush();
  return lobench::command_exit_code();
}

}  // namespace

NB_MODULE(_engine, m) {
  m.doc() = "lobench's sweep engine for Python variants (use `python -m lobench run` or lobench.run(), not this module)";
  m.def("register_python_variant", &register_python_variant, nb::arg("variant"), nb::arg("origin"));
  m.def("main", &run_command_line, nb::arg("args"), nb::arg("row_command") = std::vector<std::string>{});
  m.def("variant_names", [] {
    std::vector<std::string> names;
    for (const lobench::Variant* v : lobench::Registry::instance().all()) names.push_back(v->name());
    return names;
  });
  m.def("python_peers", [] {
    // (name, module:Class, description) of each framework peer (harness/sweep/python_peers.hpp): the short
    // names `python -m lobench run --variants` takes
    std::vector<std::tuple<std::string, std::string, std::string>> peers;
    for (const lobench::PythonPeer& p : lobench::python_peers()) peers.emplace_back(p.name, p.spec, p.description);
    return peers;
  });
  m.def("expand_args", [](const std::vector<std::string>& args) {
    // args[0] is the program's name; @file arguments expanded as `lobench` does (ValueError naming the file)
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    try {
      return lobench::expand_args_files(int(argv.size()), argv.data());
    } catch (const std::exception& e) {
      throw nb::value_error(e.what());
    }
  });
  lobench::python::bind_sweep_call(m);  // lobench.run(): the `run` command as a library call
  m.attr("plugin_abi") = LOBENCH_PLUGIN_ABI;
}
