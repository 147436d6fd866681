// The exit status the commands report (commands.hpp). In the harness library beside options.cpp, which
// sets it from `lobench options`, so that every program linking the command line's files finds it there
// (the lobench executable, the Python engine, harness_test).
#include "harness/cli/commands.hpp"

namespace lobench {

namespace {
int g_exit_code = 0;
}
void set_command_exit_code(int code) { g_exit_code = code; }
int command_exit_code() { return g_exit_code; }

}  // namespace lobench
