// SPDX-License-Identifier: MIT
#include "sim/base/dtype.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string_view>

TEST_CASE("bytes per element follow the storage width", "[dtype]") {
  using rsim::DType;
  CHECK(rsim::bytes_per_element(DType::fp32) == 4.0);
  CHECK(rsim::bytes_per_element(DType::tf32) == 4.0);  // stored as FP32
  CHECK(rsim::bytes_per_element(DType::bf16) == 2.0);
  CHECK(rsim::bytes_per_element(DType::fp8) == 1.0);
  CHECK(rsim::bytes_per_element(DType::int8) == 1.0);
  CHECK(rsim::bytes_per_element(DType::fp4) == 0.5);  // two values per byte
  // Block scales count: NVFP4 one 1-byte E4M3 scale per 16 values: 0.5 + 1/16 = 0.5625
  CHECK(rsim::bytes_per_element(DType::nvfp4) == 0.5625);
  // MXFP4 one 1-byte E8M0 scale per 32 values: 0.5 + 1/32 = 0.53125
  CHECK(rsim::bytes_per_element(DType::mxfp4) == 0.53125);
  // int4 with one 2-byte fp16 scale per group of 128: 0.5 + 2/128 = 0.515625
  CHECK(rsim::bytes_per_element(DType::int4) == 0.515625);
}

TEST_CASE("every storage width is dyadic (k / 2^j, j <= 7)", "[dtype]") {
  // Byte counts are elements × width: with a dyadic width they are exact in a double, which a
  // sweep's batch line relies on to scale them by the batch without rounding (sim/batch_line).
  for (const std::string_view name : rsim::dtype_names()) {
    INFO(name);
    const double width = rsim::bytes_per_element(*rsim::parse_dtype(name));
    const double scaled = width * 128.0;
    CHECK(scaled == std::floor(scaled));
  }
}

TEST_CASE("dtype and compute path names parse", "[dtype]") {
  CHECK(rsim::parse_dtype("bf16") == rsim::DType::bf16);
  CHECK_FALSE(rsim::parse_dtype("bfloat16"));  // no synonyms
  CHECK(rsim::compute_path_dtype("fp8_sparse") == rsim::DType::fp8);
  CHECK(rsim::compute_path_dtype("int8") == rsim::DType::int8);
  CHECK_FALSE(rsim::compute_path_dtype("_sparse"));
  CHECK_FALSE(rsim::compute_path_dtype("fp9"));
}
