# One interface target carries the project's warning flags; targets opt in with PRIVATE linkage.
add_library(rsim_warnings INTERFACE)
target_compile_options(rsim_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
if(RSIM_WERROR)
  target_compile_options(rsim_warnings INTERFACE -Werror)
endif()
# Implicit conversions that may change a value (narrowing, float → int, signed ↔ unsigned), enabled
# folder by folder: sim/CMakeLists.txt applies them to the sources of the stages that build clean.
set(RSIM_CONVERSION_WARNINGS -Wconversion -Wsign-conversion)
