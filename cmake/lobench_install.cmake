# `cmake --install`: the libraries, their headers and the `lobench` binary, a CMake package
# (find_package(lobench) → lobench::contract, lobench::bce_kernels, lobench::precision, lobench::variants, lobench::datasets,
# lobench::harness, lobench::train, lobench::lobench) and a pkg-config file (lobench.pc). All install
# and export rules live here, so that moving source files between folders touches none of them: headers
# are installed by folder, and include directories are mapped from the targets' own usage requirements.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LOBENCH_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/lobench)
set(LOBENCH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lobench)
# target → exported name (lobench::NAME)
set(LOBENCH_EXPORTED lobench_flags:flags lobench_native:native lobench_timing:timing lobench_contract:contract lobench_bce_kernels:bce_kernels lobench_sgemm:sgemm
                     lobench_precision:precision lobench_variants:variants
                     lobench_datasets:datasets lobench_harness:harness lobench_train:train lobench:lobench)

# The targets name source folders as include directories (PUBLIC); installed, the same folders sit
# under include/lobench. Rewrites each target's INTERFACE_INCLUDE_DIRECTORIES into build/install
# forms and collects the installed folders (for lobench.pc).
set(LOBENCH_PC_INCLUDES "")
foreach(entry IN LISTS LOBENCH_EXPORTED)
  string(REPLACE ":" ";" pair ${entry})
  list(GET pair 0 target)
  list(GET pair 1 export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT dirs)
    continue()
  endif()
  set(mapped "")
  foreach(d IN LISTS dirs)
    if(d MATCHES "^\\$<")
      list(APPEND mapped "${d}")  # a generator expression (not a path: RELATIVE_PATH refuses it)
      continue()
    endif()
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${d})
    if(rel MATCHES "^\\.\\.")
      list(APPEND mapped "${d}")  # a folder outside the repository
      continue()
    endif()
    set(installed ${LOBENCH_INSTALL_INCLUDEDIR})
    if(NOT rel STREQUAL "")
      set(installed ${LOBENCH_INSTALL_INCLUDEDIR}/${rel})
    endif()
    list(APPEND mapped "$<BUILD_INTERFACE:${d}>" "$<INSTALL_INTERFACE:${installed}>")
    list(APPEND LOBENCH_PC_INCLUDES "-I\${prefix}/${installed}")
  endforeach()
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${mapped}")
endforeach()
list(REMOVE_DUPLICATES LOBENCH_PC_INCLUDES)

# lobench_variants is an OBJECT library (self-registering variants must not be dropped by the linker):
# its objects are installed and an importing target that links lobench::variants gets them all.
install(TARGETS lobench_flags lobench_native lobench_timing lobench_contract lobench_bce_kernels lobench_sgemm lobench_precision lobench_variants lobench_datasets lobench_harness lobench_train lobench
        EXPORT lobenchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/lobench/objects)
install(EXPORT lobenchTargets NAMESPACE lobench:: DESTINATION ${LOBENCH_INSTALL_CMAKEDIR})

# pkg-config has no object libraries: the same objects as a static archive, linked whole.
add_library(lobench_variants_archive STATIC $<TARGET_OBJECTS:lobench_variants>)
set_target_properties(lobench_variants_archive PROPERTIES OUTPUT_NAME lobench_variants)
install(TARGETS lobench_variants_archive ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Headers, by folder (tests, benchmarks and the Python package excluded).
foreach(dir harness precision_sim variants datasets)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${LOBENCH_INSTALL_INCLUDEDIR}/${dir}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.cuh"
          PATTERN "tests" EXCLUDE PATTERN "bench" EXCLUDE PATTERN "python" EXCLUDE PATTERN "peers" EXCLUDE)
endforeach()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lobenchConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/lobenchConfig.cmake
                              INSTALL_DESTINATION ${LOBENCH_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/lobenchConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/lobenchConfig.cmake ${CMAKE_BINARY_DIR}/cmake/lobenchConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/lobench_plugin.cmake
        DESTINATION ${LOBENCH_INSTALL_CMAKEDIR})

# lobench.pc, relocatable (prefix found from the file's own folder, so `cmake --install --prefix` works).
file(RELATIVE_PATH LOBENCH_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
list(JOIN LOBENCH_PC_INCLUDES " " LOBENCH_PC_CFLAGS)
set(LOBENCH_PC_PRIVATE_LIBS "")
foreach(lib IN LISTS HDF5_HL_LIBRARIES)  # hdf5.pc lists the C library only
  if(lib MATCHES "hdf5_hl")
    list(APPEND LOBENCH_PC_PRIVATE_LIBS ${lib})
  endif()
endforeach()
if(LOBENCH_HAS_CUDA)
  list(APPEND LOBENCH_PC_PRIVATE_LIBS -L${CUDAToolkit_LIBRARY_DIR} -lcudart -ldl)  # cuBLAS is opened at run time (variants/cuda/cublas_on_demand.cpp)
endif()
if(LOBENCH_HAS_ONEDNN)
  get_target_property(_lobench_dnnl_location DNNL::dnnl LOCATION)
  get_filename_component(_lobench_dnnl_dir "${_lobench_dnnl_location}" DIRECTORY)
  list(APPEND LOBENCH_PC_PRIVATE_LIBS -L${_lobench_dnnl_dir} -ldnnl)  # (lobench_sgemm's oneDNN products, variants/cpu/onednn.hpp)
endif()
list(JOIN LOBENCH_PC_PRIVATE_LIBS " " LOBENCH_PC_PRIVATE_LIBS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/lobench.pc.in ${CMAKE_BINARY_DIR}/cmake/lobench.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/lobench.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# A project outside this tree builds against the installed package (CMake and pkg-config) and runs one
# step (cmake/tests/install_consumer_test.sh: a temporary prefix, removed afterwards).
if(LOBENCH_BUILD_TESTS)
  add_test(NAME install_consumer
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tests/install_consumer_test.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
                   ${CMAKE_CURRENT_LIST_DIR}/tests/consumer ${CMAKE_CXX_COMPILER})
  set_tests_properties(install_consumer PROPERTIES LABELS cpu)
endif()
