# SPDX-License-Identifier: BSD-3-Clause
# haloshift_pc_locations(<pc dir> <name>...): the paths a pkg-config file installed to <pc dir> (relative
# to the prefix) writes, for haloshift.pc and haloshift-c.pc. Sets HALOSHIFT_PC_PREFIX and, for each
# GNUInstallDirs <name> given (INCLUDEDIR, LIBDIR), HALOSHIFT_PC_<name>: relative to the file's own place
# (${pcfiledir}), so that an installed tree can move, unless an install directory is absolute.
function(haloshift_pc_locations pc_dir)
  set(absolute FALSE)
  if(IS_ABSOLUTE "${pc_dir}")
    set(absolute TRUE)
  endif()
  foreach(name IN LISTS ARGN)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${name}}")
      set(absolute TRUE)
    endif()
  endforeach()
  if(absolute)
    set(HALOSHIFT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
    foreach(name IN LISTS ARGN)
      set(HALOSHIFT_PC_${name} "${CMAKE_INSTALL_FULL_${name}}" PARENT_SCOPE)
    endforeach()
  else()
    file(RELATIVE_PATH up "/haloshift-prefix/${pc_dir}" "/haloshift-prefix")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(HALOSHIFT_PC_PREFIX "\${pcfiledir}/${up}" PARENT_SCOPE)
    foreach(name IN LISTS ARGN)
      set(HALOSHIFT_PC_${name} "\${prefix}/${CMAKE_INSTALL_${name}}" PARENT_SCOPE)
    endforeach()
  endif()
endfunction()
