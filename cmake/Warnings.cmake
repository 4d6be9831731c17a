# One interface target carries the project's warning flags; targets opt in with PRIVATE linkage.
add_library(rsim_warnings INTERFACE)
target_compile_options(rsim_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow)
if(RSIM_WERROR)
  target_compile_options(rsim_warnings INTERFACE -Werror)
endif()
