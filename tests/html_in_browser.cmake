# Loads rsim's HTML report in headless Chromium: the page must log nothing to the console (a
# script error would), every table must be made sortable by the inline script, the chart must be
# inline SVG, "#sort=ops-table:1" must sort the op table by count, and a screenshot is taken.
# Arguments: -DRSIM=… -DCHROMIUM=… -DSCENARIO=… -DKERNELS=… -DOUT_DIR=…
file(MAKE_DIRECTORY ${OUT_DIR})
set(html ${OUT_DIR}/pi05_report.html)
execute_process(COMMAND ${RSIM} run ${SCENARIO} --html ${html} --measured ${KERNELS}
                        --match gate_up=prefix/layer/gate_up_proj
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rsim run --html failed (${rc})")
endif()

function(chromium fragment)
  execute_process(
    COMMAND ${CHROMIUM} --headless --no-sandbox --disable-gpu --no-first-run
            --user-data-dir=${OUT_DIR}/profile --enable-logging=stderr --v=0 ${ARGN}
            "file://${html}${fragment}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE log TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "chromium failed (${rc}): ${log}")
  endif()
  # Console messages (script errors included) are logged as "...:INFO:CONSOLE(...)".
  string(REGEX MATCHALL "[^\n]*CONSOLE[^\n]*" console "${log}")
  if(console)
    message(FATAL_ERROR "console output in the report: ${console}")
  endif()
  set(dom "${out}" PARENT_SCOPE)
endfunction()

# The first body row of the op table after sorting: its count cell's value.
function(first_count dom result)
  string(FIND "${dom}" "id=\"ops-table\"" at)
  string(SUBSTRING "${dom}" ${at} -1 table)
  string(REGEX MATCH "<tbody>[ \n]*<tr><td>[^<]*</td><td class=\"num\" data-v=\"([0-9]+)\"" row
         "${table}")
  set(${result} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

chromium("#sort=ops-table:1" --dump-dom)
string(REGEX MATCHALL "data-sortable=\"ready\"" ready "${dom}")
list(LENGTH ready tables)
# ops, stages, measured, compute paths, memory tiers, ridges
if(NOT tables EQUAL 6)
  message(FATAL_ERROR "${tables} sortable tables, expected 6")
endif()
if(NOT dom MATCHES "<svg[^>]*width=\"1180\"" OR NOT dom MATCHES "rmsnorm_kernel")
  message(FATAL_ERROR "the roofline chart or the measured kernels are missing")
endif()
# The text report's own tables, rendered as HTML outside the collapsed text (issue 25): the
# memory tiers ("dram bytes, time") and the tiles ("tile in smem") among them.
string(FIND "${dom}" "<details>" collapsed)
string(FIND "${dom}" "<th>tile in smem</th>" tiles)
string(FIND "${dom}" "<th>dram bytes, time</th>" tiers)
if(tiles EQUAL -1 OR tiers EQUAL -1 OR NOT tiles LESS collapsed OR NOT tiers LESS collapsed)
  message(FATAL_ERROR "the text report's tables are missing from the page or only collapsed")
endif()
# Sorted by count, descending: the action expert's ops run 18 layers × 10 steps = 180 times.
first_count("${dom}" count)
if(NOT count EQUAL 180)
  message(FATAL_ERROR "first op after sorting by count: count ${count}, expected 180")
endif()
# Ascending: embed and head ops run once (vision, prefix) — the smallest count.
chromium("#sort=ops-table:1:asc" --dump-dom)
first_count("${dom}" count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "first op after sorting by count ascending: ${count}, expected 1")
endif()

set(png ${OUT_DIR}/pi05_report.png)
file(REMOVE ${png})
chromium("" --screenshot=${png} --window-size=1280,2400 --hide-scrollbars)
file(SIZE ${png} bytes)
if(bytes LESS 100000)
  message(FATAL_ERROR "screenshot of ${bytes} bytes: the page looks empty")
endif()
message(STATUS "${html}: 6 sortable tables, chart inline, no console output; ${png}")
