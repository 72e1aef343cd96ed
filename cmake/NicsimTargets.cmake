# Thin, declarative target helpers (after Abseil's absl_cc_* and ns-3's build_lib):
#   nicsim_library(NAME n SRCS ... DEPS ...)
#   nicsim_test(NAME n SRCS ... DEPS ...)      -> GoogleTest binary registered with CTest
#   nicsim_bench(NAME n SRCS ... DEPS ...)     -> Google Benchmark binary (not run by CTest)
#   nicsim_fuzzer(NAME n SRCS ... DEPS ...)    -> libFuzzer binary (NICSIM_FUZZ=ON; scripts/fuzz.sh)
# Layering is enforced by the DEPS each library declares.

include(GNUInstallDirs)

set(NICSIM_WARNINGS -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wold-style-cast)
# Warnings are errors in CI and scripts/ (NICSIM_WERROR=ON there), not in a user's build: a
# newer or older compiler's new warning must not stop someone building a release.
if(NICSIM_WERROR)
  list(APPEND NICSIM_WARNINGS -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 at -O3 reports a false -Wrestrict inside std::string (GCC bug 105329).
  list(APPEND NICSIM_WARNINGS -Wno-restrict)
endif()

if(NICSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# The fuzz build (scripts/fuzz.sh: clang, NICSIM_TESTS=OFF, NICSIM_BENCH=OFF) compiles every
# library with ASan + UBSan and libFuzzer's coverage instrumentation, so a target sees and checks
# all the code it reaches (the simulator's target reaches most of the tree).
if(NICSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NICSIM_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=address,undefined)
endif()

# Libraries are static unless NICSIM_SHARED_LIBS=ON (then shared, with an SONAME that changes
# with the minor version while the major is 0: libnicsim_core.so.0.1). The libraries the Python
# module links are compiled position-independent (nicsim_position_independent).
# Each one is installed and exported as nicsim::<name without the nicsim_ prefix>
# (cmake/NicsimInstall.cmake); headers are found as "nicsim/<layer>/x.h" from the source root in
# the build tree and from <prefix>/include once installed.
# Installed shared libraries are found from the installed binary's directory, wherever the
# prefix is (Debian's /usr needs no RPATH: the libraries are on the default search path).
if(NICSIM_SHARED_LIBS AND NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()

function(nicsim_library)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  if(NICSIM_SHARED_LIBS)
    add_library(${A_NAME} SHARED ${A_SRCS})
    set_target_properties(${A_NAME} PROPERTIES
      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  else()
    add_library(${A_NAME} STATIC ${A_SRCS})
  endif()
  target_include_directories(${A_NAME} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(${A_NAME} PRIVATE ${NICSIM_WARNINGS})
  target_link_libraries(${A_NAME} PUBLIC ${A_DEPS})
  nicsim_export_library(${A_NAME})
endfunction()

# Registers a library (also an INTERFACE one that groups a layer, like nicsim_algo) for
# installation and export as nicsim::<name>; in the build tree the same name is an alias, so
# examples/ link the names an installed consumer uses.
function(nicsim_export_library target)
  string(REGEX REPLACE "^nicsim_" "" short ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${short})
  add_library(nicsim::${short} ALIAS ${target})
  set_property(GLOBAL APPEND PROPERTY NICSIM_EXPORTED_LIBRARIES ${target})
endfunction()

function(nicsim_test)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  if(NOT NICSIM_TESTS)
    return()
  endif()
  add_executable(${A_NAME} ${A_SRCS})
  target_compile_options(${A_NAME} PRIVATE ${NICSIM_WARNINGS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  gtest_discover_tests(${A_NAME} DISCOVERY_TIMEOUT 60)
endfunction()

function(nicsim_bench)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  if(NOT NICSIM_BENCH)
    return()
  endif()
  add_executable(${A_NAME} ${A_SRCS})
  target_compile_options(${A_NAME} PRIVATE ${NICSIM_WARNINGS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} benchmark::benchmark benchmark::benchmark_main)
endfunction()

function(nicsim_fuzzer)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  if(NOT NICSIM_FUZZ)
    return()
  endif()
  add_executable(${A_NAME} ${A_SRCS})
  target_include_directories(${A_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${A_NAME} PRIVATE ${NICSIM_WARNINGS} -fsanitize=fuzzer)
  target_link_options(${A_NAME} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS})
  # Targets that load scenarios find the shipped presets here.
  target_compile_definitions(${A_NAME} PRIVATE NICSIM_FUZZ_PRESETS_DIR="${PROJECT_SOURCE_DIR}/presets")
endfunction()

# Compiles `target` and every nicsim library it links, directly or not, as position-independent
# code, so a shared object (the Python module) can link the static libraries. No semantic
# interposition: calls between a library's own functions stay direct and inlinable, as in an
# executable.
function(nicsim_position_independent target)
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(done ${target} POSITION_INDEPENDENT_CODE)
    if(done)
      return()
    endif()
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  endif()
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    if(dep MATCHES "^nicsim_" AND TARGET ${dep})
      nicsim_position_independent(${dep})
    endif()
  endforeach()
endfunction()
