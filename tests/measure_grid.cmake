# tools/measure/measure_gpu.py --dry-run writes the GEMM grid it would measure; every row must be
# a GEMM `rsim matmul` takes on that hardware (so `rsim calibrate` can read the measured CSV).
# -DPYTHON3, -DRSIM, -DSCRIPT, -DOUT_DIR.
execute_process(COMMAND ${PYTHON3} ${SCRIPT} --dry-run --hardware h200_sxm --out ${OUT_DIR}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "measure_gpu.py --dry-run exited ${status}")
endif()
file(STRINGS ${OUT_DIR}/gemm.csv lines)
list(POP_FRONT lines header)
if(NOT header STREQUAL "hardware,b,d,f,dtype,measured_s")
  message(FATAL_ERROR "gemm.csv header '${header}' is not what rsim calibrate reads")
endif()
list(LENGTH lines rows)
if(rows LESS 100)
  message(FATAL_ERROR "gemm.csv has ${rows} rows; the grid has 120")
endif()
foreach(line IN LISTS lines)
  string(REPLACE "," ";" cells "${line}")
  list(GET cells 0 hardware)
  list(GET cells 1 b)
  list(GET cells 2 d)
  list(GET cells 3 f)
  list(GET cells 4 dtype)
  execute_process(COMMAND ${RSIM} matmul --hardware ${hardware} --b ${b} --d ${d} --f ${f}
                          --dtype ${dtype} --format json
                  RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "rsim matmul refuses the grid row '${line}': ${error}")
  endif()
endforeach()
message(STATUS "${rows} GEMMs of the measurement grid run through rsim matmul")
