# Thin, declarative target helpers (after Abseil's absl_cc_* and ns-3's build_lib):
#   nicsim_library(NAME n SRCS ... DEPS ...)
#   nicsim_test(NAME n SRCS ... DEPS ...)      -> GoogleTest binary registered with CTest
#   nicsim_bench(NAME n SRCS ... DEPS ...)     -> Google Benchmark binary (not run by CTest)
#   nicsim_fuzzer(NAME n SRCS ... DEPS ...)    -> libFuzzer binary (NICSIM_FUZZ=ON; scripts/fuzz.sh)
# Layering is enforced by the DEPS each library declares.

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

function(nicsim_library)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${A_NAME} STATIC ${A_SRCS})
  target_include_directories(${A_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${A_NAME} PRIVATE ${NICSIM_WARNINGS})
  target_link_libraries(${A_NAME} PUBLIC ${A_DEPS})
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
