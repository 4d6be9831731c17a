# One interface target carries the project's warning flags; targets opt in with PRIVATE linkage.
add_library(rsim_warnings INTERFACE)
target_compile_options(rsim_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
if(RSIM_WERROR)
  target_compile_options(rsim_warnings INTERFACE -Werror)
endif()
# Implicit conversions that may change a value (narrowing, float → int, signed ↔ unsigned): the
# library (sim/CMakeLists.txt) and the command line (tools/CMakeLists.txt) build with them; the
# tests and benchmarks do not.
set(RSIM_CONVERSION_WARNINGS -Wconversion -Wsign-conversion)
