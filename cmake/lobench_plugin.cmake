# lobench_add_plugin(NAME SOURCES src... [LIBS lib...]): a lobench plug-in, a shared library loaded by
# `lobench run --plugin NAME.so` (or LOBENCH_PLUGIN_PATH) whose sources define the entry point with
# LOBENCH_PLUGIN (variants/plugin_api.hpp). It links the contract (lobench::contract: Variant, Registry,
# StepInputs...) and LIBS. Its symbols are hidden except the entry point, so the library's copy of the
# contract never interposes on the program's. Installed with the package (find_package(lobench)) and
# used in the tree for the loader's tests.
function(lobench_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LIBS")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "lobench_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET lobench::contract)
    set(contract lobench::contract)
  else()
    set(contract lobench_contract)  # inside lobench's own tree
  endif()
  target_link_libraries(${name} PRIVATE ${contract} ${ARG_LIBS})
  set_target_properties(${name} PROPERTIES PREFIX "" CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${name} PRIVATE cxx_std_20)
endfunction()
