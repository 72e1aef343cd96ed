# What `cmake --install` puts where, and the Debian packages CPack builds from it (docs/install.md).
# Included at the end of the top-level CMakeLists.txt, once every library exists. Components:
#   runtime  the nicsim binary, presets, example scenarios, man page, bash completion
#            (install() calls without a COMPONENT land here)
#   dev      headers under include/nicsim/, the libraries, the CMake package, nicsim.pc
#   python   the Python module (python/)
include(CMakePackageConfigHelpers)

# The layers' group targets are plain INTERFACE libraries made in their own directories.
nicsim_export_library(nicsim_algo)
nicsim_export_library(nicsim_model)
get_property(nicsim_libraries GLOBAL PROPERTY NICSIM_EXPORTED_LIBRARIES)

install(TARGETS ${nicsim_libraries} EXPORT nicsimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The public headers keep the source layout, so "nicsim/algo/fq_codel.h" means the same file in
# the tree and installed. nicsim/testing is test support, not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/nicsim/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nicsim
  COMPONENT dev FILES_MATCHING PATTERN "*.h"
  PATTERN testing EXCLUDE PATTERN fuzz_corpus EXCLUDE PATTERN testdata EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/nicsim/scenarios
  COMPONENT runtime)

# The CMake package: find_package(nicsim) -> nicsim::core, nicsim::algo, ...
set(nicsim_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/nicsim)
set(NICSIM_PRESETS_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/nicsim/presets)
get_target_property(nicsim_config_deps nicsim_config INTERFACE_LINK_LIBRARIES)
if("PkgConfig::TOMLPP" IN_LIST nicsim_config_deps)
  set(NICSIM_TOML_FROM_PKGCONFIG 1)
else()
  set(NICSIM_TOML_FROM_PKGCONFIG 0)
endif()
install(EXPORT nicsimTargets NAMESPACE nicsim:: DESTINATION ${nicsim_cmake_dir} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nicsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nicsimConfig.cmake INSTALL_DESTINATION ${nicsim_cmake_dir}
  PATH_VARS NICSIM_PRESETS_INSTALL_DIR)
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nicsimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nicsimConfig.cmake ${PROJECT_BINARY_DIR}/nicsimConfigVersion.cmake
  DESTINATION ${nicsim_cmake_dir} COMPONENT dev)

# pkg-config: the libraries in link order (each before what it depends on), found by a
# depth-first walk of their link dependencies.
function(nicsim_link_order target out_var)
  get_property(done GLOBAL PROPERTY NICSIM_PC_VISITED)
  if(target IN_LIST done OR NOT target IN_LIST nicsim_libraries)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY NICSIM_PC_VISITED ${target})
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    if(TARGET ${dep})
      nicsim_link_order(${dep} ignored)
    endif()
  endforeach()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    set_property(GLOBAL APPEND PROPERTY NICSIM_PC_ORDER ${target})
  endif()
endfunction()
foreach(lib IN LISTS nicsim_libraries)
  nicsim_link_order(${lib} ignored)
endforeach()
get_property(nicsim_pc_order GLOBAL PROPERTY NICSIM_PC_ORDER)
list(REVERSE nicsim_pc_order)
list(TRANSFORM nicsim_pc_order PREPEND "-l")
list(JOIN nicsim_pc_order " " NICSIM_PC_LIBS)
# Relocatable: the prefix is found from where the .pc file is (cmake --install --prefix DIR).
file(RELATIVE_PATH nicsim_pc_up /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
set(NICSIM_PC_PREFIX "\${pcfiledir}/${nicsim_pc_up}")
string(REGEX REPLACE "/$" "" NICSIM_PC_PREFIX "${NICSIM_PC_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/nicsim.pc.in ${PROJECT_BINARY_DIR}/nicsim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/nicsim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

# Debian packages (cpack -G DEB in a build configured with -DCMAKE_INSTALL_PREFIX=/usr;
# scripts/package.sh): nicsim (runtime), nicsim-dev (dev), python3-nicsim (python).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nicsim)
set(CPACK_PACKAGE_VENDOR "nicsim")
set(CPACK_PACKAGE_CONTACT "nicsim maintainers <nicsim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NIC batching simulator and emulator")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
# nicsim-dev and python3-nicsim depend on nicsim (= version): CPACK_COMPONENT_*_DEPENDS below.
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENTS_ALL runtime dev python)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Executables and shared objects stripped, as Debian packages ship them (static libraries keep
# their symbols: CMake strips only executables and shared objects).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME nicsim)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "man-db, gnuplot-nox, iproute2, iputils-ping, iperf3")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "NIC batching simulator and emulator\n nicsim simulates and emulates NIC batching (BQL, xmit_more, USB aggregation,\n qdiscs) and measures latency under load.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME nicsim-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS 
  "nlohmann-json3-dev, libtomlplusplus-dev, zlib1g-dev, libssl-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "g++, make, cmake, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "nicsim C++ libraries and headers\n The algorithm, model and simulator libraries of nicsim with a CMake package\n (find_package(nicsim)) and a pkg-config file.")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-nicsim)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12)")
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-pandas")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
  "nicsim Python module\n Runs nicsim scenarios from Python (results as objects and pandas DataFrames)\n and steps its queueing algorithms.")
set(CPACK_COMPONENT_PYTHON_DEPENDS runtime)
include(CPack)
