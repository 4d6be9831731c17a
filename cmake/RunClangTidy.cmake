# Runs clang-tidy with the repository's .clang-tidy over every .cpp of sim/ and tools/, as many
# files at once as the machine has cores; fails on any finding (.clang-tidy: WarningsAsErrors).
# Run: cmake -DCLANG_TIDY=<clang-tidy> -DSOURCE_DIR=<repository>
#            -DBUILD_DIR=<a build's folder, with its compile_commands.json> -P RunClangTidy.cmake
file(GLOB_RECURSE sources ${SOURCE_DIR}/sim/*.cpp ${SOURCE_DIR}/tools/*.cpp)
# Files clang 14 cannot compile, each with its reason (none now); fix them, then drop them from
# the list. The usual one: a lambda capturing a structured binding (C++20, clang 16 and later);
# name it in the capture instead ([&name = binding]).
set(unparsed)
foreach(file IN LISTS unparsed)
  list(REMOVE_ITEM sources ${SOURCE_DIR}/${file})
  message(STATUS "clang-tidy skips ${file} (clang 14 cannot compile it; cmake/RunClangTidy.cmake)")
endforeach()
list(SORT sources)
list(LENGTH sources count)
list(JOIN sources "\n" listing)
file(WRITE ${BUILD_DIR}/clang_tidy_sources.txt "${listing}\n")
cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
message(STATUS "clang-tidy: ${count} files, ${jobs} at a time")
execute_process(COMMAND xargs -P ${jobs} -n 1 ${CLANG_TIDY} -p ${BUILD_DIR} --quiet
                INPUT_FILE ${BUILD_DIR}/clang_tidy_sources.txt RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "clang-tidy: findings above (fix them, or see .clang-tidy)")
endif()
