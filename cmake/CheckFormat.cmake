# Fails when any C++ file under sim/, tools/, tests/, benchmarks/ or python/ differs from
# clang-format's output.
file(GLOB_RECURSE sources ${SOURCE_DIR}/sim/*.cpp ${SOURCE_DIR}/sim/*.hpp ${SOURCE_DIR}/tools/*.cpp
     ${SOURCE_DIR}/tools/*.hpp ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/tests/*.hpp
     ${SOURCE_DIR}/benchmarks/*.cpp ${SOURCE_DIR}/python/*.cpp)
execute_process(COMMAND ${CLANG_FORMAT} --dry-run -Werror ${sources} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "clang-format: files above are not formatted (run clang-format -i)")
endif()
