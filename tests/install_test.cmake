# `cmake --install` puts rsim and its presets under a prefix, and the installed binary finds them
# there (not in the source tree it was built from): issue 25's install.
# -DBUILD_DIR=… -DPREFIX=… -DSOURCE_DIR=…
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE installed OUTPUT_QUIET)
if(NOT installed EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${installed}")
endif()
foreach(file bin/rsim share/rsim/hardware/h100_sxm.yaml share/rsim/models/llama3_8b.yaml
             share/rsim/scenarios/pi05_thor.yaml)
  if(NOT EXISTS ${PREFIX}/${file})
    message(FATAL_ERROR "not installed: ${PREFIX}/${file}")
  endif()
endforeach()
# From a folder with no presets and without RSIM_DATA_DIR: the models listed are the installed
# ones, and a scenario naming presets by name runs.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=RSIM_DATA_DIR ${PREFIX}/bin/rsim list models
                        --format json
                WORKING_DIRECTORY ${PREFIX} OUTPUT_VARIABLE models RESULT_VARIABLE listed)
string(FIND "${models}" "\"${PREFIX}/share/rsim/models/llama3_8b.yaml\"" at)
if(NOT listed EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "the installed rsim lists models that are not the installed ones:\n${models}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=RSIM_DATA_DIR ${PREFIX}/bin/rsim run
                        ${PREFIX}/share/rsim/scenarios/pi05_thor.yaml
                WORKING_DIRECTORY ${PREFIX} OUTPUT_VARIABLE report RESULT_VARIABLE ran)
if(NOT ran EQUAL 0)
  message(FATAL_ERROR "the installed rsim could not run pi05_thor: ${ran}")
endif()
file(REMOVE_RECURSE ${PREFIX})
