# Read by ctest before it runs any test (the top directory's TEST_INCLUDE_FILES, CMakeLists.txt): the
# environment every test inherits, whether ctest is run directly or through scripts/test.sh.
#
# Idle OpenMP threads sleep instead of spinning (libgomp spins by default). `ctest -j2` puts two tests'
# four threads on two cores, and a spinning thread takes its core from the thread it waits for: a training
# test of 0.2 s alone took 1–1.5 s beside one busy core and 15 s beside another test, against 0.3 s with
# passive waiting (2-core Zen 5, 2026-12-06). The tests judge results, not speed; the one timed test,
# gate_paired_injected_fails, runs alone and compares two binaries under the same policy. A value the user
# set is kept.
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} passive)
endif()
