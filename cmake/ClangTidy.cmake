# The clang_tidy test (RSIM_CLANG_TIDY): the repository's .clang-tidy over every .cpp of sim/ and
# tools/ with this build's compile_commands.json. tools/install-deps.sh installs clang-tidy;
# without it the test fails and says so.
find_program(CLANG_TIDY NAMES clang-tidy clang-tidy-14)
if(CLANG_TIDY)
  add_test(NAME clang_tidy
           COMMAND ${CMAKE_COMMAND} -DCLANG_TIDY=${CLANG_TIDY} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DBUILD_DIR=${PROJECT_BINARY_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/RunClangTidy.cmake)
  set_tests_properties(clang_tidy PROPERTIES TIMEOUT 1800)
else()
  add_test(NAME clang_tidy COMMAND ${CMAKE_COMMAND} -E false)
  message(WARNING "clang-tidy not found (package clang-tidy): the clang_tidy test will fail")
endif()
