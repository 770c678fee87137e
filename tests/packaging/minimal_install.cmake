# SPDX-License-Identifier: BSD-3-Clause
# cmake -DSOURCE_DIR= -DWORK_DIR= -DGENERATOR= -DMPI_CXX_COMPILER= -DVERSION= -P minimal_install.cmake
# Configures haloshift with every option off (no tests, examples, benchmarks, nor
# the model layer; nlohmann_json made unfindable) and no CMake warnings (also with
# --warn-uninitialized), installs it into WORK_DIR/prefix, checks the installed
# files, and builds the find_package consumer and the component checks against it.
cmake_minimum_required(VERSION 3.21)
set(_build ${WORK_DIR}/build)
set(_prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${_build} -G ${GENERATOR} --warn-uninitialized
                        --no-warn-unused-cli  # CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json is unused when all is well
                        -DHALOSHIFT_BUILD_TESTS=OFF -DHALOSHIFT_BUILD_EXAMPLES=OFF -DHALOSHIFT_BUILD_BENCHMARKS=OFF
                        -DHALOSHIFT_AUTO=OFF -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
                        -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
                RESULT_VARIABLE _status OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
message("${_out}${_err}")
if(NOT _status EQUAL 0)
  message(FATAL_ERROR "configuring with every option off failed")
endif()
if(_err MATCHES "CMake (Deprecation )?Warning")
  message(FATAL_ERROR "configuring with every option off warned (see above)")
endif()
file(STRINGS ${_build}/CMakeCache.txt _nlohmann REGEX "^nlohmann_json_DIR")
if(_nlohmann)
  message(FATAL_ERROR "configuring with HALOSHIFT_AUTO=OFF looked for nlohmann_json (${_nlohmann})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${_build} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${_build} --prefix ${_prefix} COMMAND_ERROR_IS_FATAL ANY)

# The installed files.
file(GLOB_RECURSE _config ${_prefix}/*/cmake/haloshift/haloshiftConfig.cmake)
if(NOT _config)
  message(FATAL_ERROR "no cmake/haloshift/haloshiftConfig.cmake under ${_prefix}")
endif()
get_filename_component(_config_dir ${_config} DIRECTORY)
set(_missing "")
foreach(_file ${_config_dir}/haloshiftConfig.cmake ${_config_dir}/haloshiftConfigVersion.cmake
              ${_config_dir}/haloshiftTargets.cmake ${_prefix}/share/pkgconfig/haloshift.pc
              ${_prefix}/include/haloshift/haloshift.hpp ${_prefix}/include/haloshift/version.hpp
              ${_prefix}/share/doc/haloshift/LICENSE)
  if(NOT EXISTS ${_file})
    list(APPEND _missing ${_file})
  endif()
endforeach()
if(_missing)
  list(JOIN _missing "\n  " _missing)
  message(FATAL_ERROR "not installed:\n  ${_missing}")
endif()
if(EXISTS ${_config_dir}/haloshiftAutoTargets.cmake OR EXISTS ${_prefix}/bin)
  message(FATAL_ERROR "a HALOSHIFT_AUTO=OFF install without examples has haloshiftAutoTargets.cmake or programs")
endif()
file(READ ${_config_dir}/haloshiftTargets.cmake _targets)
file(READ ${_prefix}/share/pkgconfig/haloshift.pc _pc)
if(_targets MATCHES "nlohmann" OR _pc MATCHES "\nRequires:[^\n]*nlohmann")
  message(FATAL_ERROR "the core's targets or haloshift.pc depend on nlohmann_json")
endif()
string(REPLACE "." ";" _v "${VERSION}")
list(GET _v 0 _major)
list(GET _v 1 _minor)
file(STRINGS ${_prefix}/include/haloshift/version.hpp _version_lines REGEX "#define HALOSHIFT_VERSION_(MAJOR|MINOR) ")
if(NOT _version_lines MATCHES "MAJOR ${_major};.*MINOR ${_minor}$")
  message(FATAL_ERROR "installed version.hpp (${_version_lines}) is not version ${VERSION}")
endif()
message(STATUS "installed: config, version file, targets (core only), haloshift.pc, headers, version.hpp, LICENSE")

# Consumers: the core through find_package; COMPONENTS auto is refused with a reason.
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --build-and-test ${CMAKE_CURRENT_LIST_DIR}/find_package
                        ${WORK_DIR}/find_package --build-generator ${GENERATOR}
                        --build-options -DCMAKE_PREFIX_PATH=${_prefix} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
                                        -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
                                        -DEXPECT_haloshift_DIR=${_config_dir}
                        --test-command ${CMAKE_CTEST_COMMAND} --output-on-failure
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/components -B ${WORK_DIR}/components
                        -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${_prefix} -DMPI_CXX_COMPILER=${MPI_CXX_COMPILER}
                        -DHALOSHIFT_EXPECT_AUTO=OFF
                COMMAND_ERROR_IS_FATAL ANY)
