# Combined translation units (CMake unity builds) for the sources whose compile time is headers, not code:
# the commands of the lobench executable and the data-set readers. CLI11 2.1 (Debian 12) is header-only
# and costs ~9 s of CPU per file that includes it at -O3 (its validators are objects defined in the
# header, compiled again in each file); ten of the ~25 files that include it are the commands. Compiled
# in two groups instead of one by one, they take a fraction of the CPU time: the quick start's first
# build on 2 cores.
#
# What stays one file per unit: everything whose floating-point results the run files record (the
# variants, the tile kernels, precision_sim, the trainers, the timing statistics, the meters, the
# scores). In a combined unit a function of one file may be inlined into another, and under
# -march=native GCC may then fuse a multiply and an add that were apart before; files without arithmetic
# on results, or compiled without FMA (datasets and the contract take no -march), cannot change a number.
#
# Groups are named file by file (UNITY_BUILD_MODE GROUP): a file added to a target later compiles on its
# own until it is listed here, and a file listed here that no longer exists is ignored. Two files of one
# group must not define the same name in an anonymous namespace (the build says which). Off with
# -DLOBENCH_UNITY_BUILD=OFF (every file on its own, as before).
option(LOBENCH_UNITY_BUILD "Compile the lobench commands and the data-set readers in combined units" ON)

# lobench_unity_groups(TARGET DIR GROUP name file... [GROUP name file...]): files relative to DIR.
function(lobench_unity_groups target dir)
  if(NOT LOBENCH_UNITY_BUILD OR NOT TARGET ${target})
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set(group "")
  foreach(arg IN LISTS ARGN)
    if(arg STREQUAL "GROUP")
      set(expect_name TRUE)
    elseif(expect_name)
      set(group ${arg})
      set(expect_name FALSE)
    else()
      set_source_files_properties(${dir}/${arg} TARGET_DIRECTORY ${target} PROPERTIES UNITY_GROUP ${target}_${group})
    endif()
  endforeach()
endfunction()

# Two groups per target, so that both cores of a 2-core machine have one to compile. Only groups whose
# objects reach no symbol outside their own link closure: a program that needs one file of a group links
# the whole group's object. (lobench_harness's sweep files are not grouped for that reason: they call the
# float64 reference of lobench_variants, which a harness user links itself; grouped, harness_test failed
# to link.)
# The commands: argument parsing and dispatch to the libraries.
lobench_unity_groups(lobench ${PROJECT_SOURCE_DIR}/harness/cli
  GROUP a main.cpp run_command.cpp list_command.cpp check_command.cpp schema_command.cpp tune_command.cpp
  GROUP b quantize_command.cpp train_xmc_command.cpp train_seqrec_command.cpp merge_command.cpp compare_command.cpp)
# The command line's shared pieces (lobench_cli: the option table, count notation, --plugin, "did you
# mean"): one group, one CLI11 parse instead of four. Its closure is its own and the harness library's (the
# commands' exit status, which options.cpp sets, is defined in the group: command_exit_code.cpp).
lobench_unity_groups(lobench_cli ${PROJECT_SOURCE_DIR}/harness/cli
  GROUP all options.cpp numbers.cpp plugin_option.cpp suggest.cpp training_commands.cpp command_exit_code.cpp)
# The run files' input and output (harness/io: HDF5, rows, merges, partitions; no arithmetic on results;
# nothing outside the folder but variants/checked_math.hpp, a header). Two groups, because merge_runs.cpp
# and merge_run_folders.cpp, and h5_io.cpp and merge_runs.cpp, define helpers of the same name.
lobench_unity_groups(lobench_harness ${PROJECT_SOURCE_DIR}/harness/io
  GROUP io_a h5_io.cpp interrupt_guard.cpp output_path.cpp partition.cpp provenance_attrs.cpp table_row.cpp
             merge_run_folders.cpp
  GROUP io_b result_row.cpp results_file.cpp run_file_writer.cpp recorded_run.cpp merge_runs.cpp)
# Readers and generators of data sets (no -march: no FMA to contract into).
lobench_unity_groups(lobench_datasets ${PROJECT_SOURCE_DIR}/datasets
  GROUP a parse_error.cpp line_reader.cpp tokens.cpp sparse_dataset.cpp xc_format.cpp mulan_xml.cpp arff.cpp
  GROUP b seqrec.cpp alias_table.cpp synthetic_xmc.cpp xmc_presets.cpp propensity.cpp ranking_metrics.cpp
          sha256.cpp public_datasets.cpp)
