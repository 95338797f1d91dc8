# Installs mlcc as a CMake package (find_package(mlcc)) and a pkg-config
# file. The targets themselves are installed where they are defined
# (runtime/, tools/mlcc/) into the export set mlccTargets.
#
# Components: mlcc_runtime (libraries, headers), mlcc_compiler (the mlcc
# tool), mlcc_development (CMake package, pkg-config file). A plain
# `cmake --install` installs all three.

include(CMakePackageConfigHelpers)

set(MLCC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mlcc"
  CACHE STRING "Where the mlcc CMake package is installed, under the prefix")

install(EXPORT mlccTargets NAMESPACE mlcc::
  DESTINATION ${MLCC_INSTALL_CMAKEDIR} COMPONENT mlcc_development)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/mlccConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/mlccConfig.cmake
  INSTALL_DESTINATION ${MLCC_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the model ABI, so only the same minor
# version is compatible.
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/mlccConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/cmake/mlccConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/mlccConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/mlccModel.cmake
  DESTINATION ${MLCC_INSTALL_CMAKEDIR} COMPONENT mlcc_development)

# pkg-config: paths relative to ${pcfiledir}, unless GNUInstallDirs made
# them absolute.
set(pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH MLCC_PC_PREFIX_FROM_PCDIR "/prefix/${pcdir}" "/prefix")
string(REGEX REPLACE "/$" "" MLCC_PC_PREFIX_FROM_PCDIR
  "${MLCC_PC_PREFIX_FROM_PCDIR}")
foreach(kind LIBDIR INCLUDEDIR BINDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(MLCC_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(MLCC_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/mlcc.pc.in
  ${CMAKE_BINARY_DIR}/cmake/mlcc.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/mlcc.pc
  DESTINATION ${pcdir} COMPONENT mlcc_development)
