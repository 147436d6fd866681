# Precompiled headers (CMake's target_precompile_headers) for the libraries of `lobench` with many small
# units: the standard headers most of them include and fmt, parsed once per flag set instead of once per
# unit (issue 43's compile budget; scripts/compile_times.py). A unit then starts from the parsed headers;
# what it compiles is the same, and the objects' code is the same instruction for instruction (checked
# with objdump -d on every unit of these targets; docs/reliability.md, "Build time").
#
# GCC takes a precompiled header only where the unit's flags match the ones it was made with (-fPIC,
# -march, the optimisation options: functions defined in the header keep the header's), and otherwise
# reads the headers again (-Winvalid-pch says so in the build log). So each flag set has one header
# (REUSE_FROM for a target whose flags equal another's), and a file with options of its own (-Og for
# argument parsing, -ffp-contract=off) is compiled without it.
#
# ccache caches a unit that uses a precompiled header only with sloppiness pch_defines,time_macros (no
# file of lobench uses __DATE__ or __TIME__); where the launcher is ccache, the targets below run it with
# that setting in its environment, so that neither the user's ccache.conf nor a build script has to.
# Off with -DLOBENCH_PRECOMPILED_HEADERS=OFF.
option(LOBENCH_PRECOMPILED_HEADERS "Compile lobench's libraries with precompiled standard and fmt headers" ON)

# The headers: those that more than a third of lobench's units include (counted from the build's
# dependency files). Not Eigen or CLI11: a dozen units or fewer include them.
set(LOBENCH_PCH_HEADERS
  <algorithm> <array> <bit> <climits> <cmath> <cstddef> <cstdint> <cstring> <functional> <iterator> <limits>
  <map> <memory> <mutex> <optional> <ostream> <span> <sstream> <stdexcept> <string> <string_view> <tuple>
  <unordered_map> <utility> <vector> <fmt/format.h>)

# lobench_precompiled_headers(TARGET [REUSE_FROM OTHER]): TARGET's units start from the headers above,
# precompiled for TARGET's flags or reused from OTHER (whose flags must equal TARGET's).
function(lobench_precompiled_headers target)
  cmake_parse_arguments(P "" "REUSE_FROM" "" ${ARGN})
  if(NOT LOBENCH_PRECOMPILED_HEADERS OR NOT TARGET ${target})
    return()
  endif()
  if(P_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${P_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${LOBENCH_PCH_HEADERS})
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(NOT IS_ABSOLUTE ${source})
      set(source ${dir}/${source})
    endif()
    get_source_file_property(options ${source} TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
    if(options)
      set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  get_target_property(launcher ${target} CXX_COMPILER_LAUNCHER)
  if(launcher)
    list(GET launcher 0 program)
    get_filename_component(program ${program} NAME)
    if(program STREQUAL "ccache")
      set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
        "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros;${launcher}")
    endif()
  endif()
endfunction()

# One header per flag set: the harness (-fPIC, -march=native); the trainers (-march=native, no -fPIC);
# the data-set readers, the contract and the plugin loader (-fPIC, no -march). A header made with a macro
# defined on the command line is refused where that macro is not defined, and the reverse is allowed: so
# a shared header is made by the target with the fewest definitions (the contract adds
# LOBENCH_PRECISION_HAS_CUDA with CUDA). Not lobench_variants: for an OBJECT library CMake 3.25 installs
# the precompiled header among the objects (cmake --install), and a program built against the installed
# package then links the .gch file.
lobench_precompiled_headers(lobench_harness)
lobench_precompiled_headers(lobench_seqrec)
lobench_precompiled_headers(lobench_train REUSE_FROM lobench_seqrec)
lobench_precompiled_headers(lobench_datasets)
lobench_precompiled_headers(lobench_contract REUSE_FROM lobench_datasets)
lobench_precompiled_headers(lobench_plugin_loader REUSE_FROM lobench_datasets)
