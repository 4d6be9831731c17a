# The instruction set rsim is built for. On x86-64, x86-64-v2 (SSSE3, SSE4.1/4.2, POPCNT: every
# x86-64 CPU since 2009, and the baseline RHEL 9 and SLES 16 require): std::ceil and std::floor
# compile to one roundsd instead of a compare-and-mask sequence, which the GEMM quantization runs
# per tile at every sweep point. No FMA (x86-64-v3) is enabled: results stay bit for bit those of
# the baseline build. Measured (docs/performance.md): one batch-line point 2.11 → 1.97 µs.
option(RSIM_X86_64_V2 "On x86-64, build for x86-64-v2 (SSE4.2; no AVX, no FMA)" ON)

if(RSIM_X86_64_V2 AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=x86-64-v2 RSIM_HAS_MARCH_X86_64_V2)
  if(RSIM_HAS_MARCH_X86_64_V2)
    add_compile_options(-march=x86-64-v2)
  endif()
endif()
