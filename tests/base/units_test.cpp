// SPDX-License-Identifier: MIT
#include "sim/base/units.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <optional>

using rsim::Dimension;
using rsim::parse_quantity;

TEST_CASE("decimal prefixes are powers of 10, binary ones powers of 2", "[units]") {
  CHECK(parse_quantity("273 GB/s", Dimension::byte_rate) == Approx(273e9));
  CHECK(parse_quantity("517 TFLOP/s", Dimension::flop_rate) == Approx(517e12));
  CHECK(parse_quantity("394 TOP/s", Dimension::flop_rate) == Approx(394e12));
  CHECK(parse_quantity("128 GB", Dimension::bytes) == Approx(128e9));
  // 128 × 2^30 = 137,438,953,472
  CHECK(parse_quantity("128 GiB", Dimension::bytes) == Approx(137438953472.0));
  // 228 × 1024 = 233,472
  CHECK(parse_quantity("228 KiB", Dimension::bytes) == Approx(233472.0));
  CHECK(parse_quantity("32 MiB", Dimension::bytes) == Approx(32.0 * 1024 * 1024));
  CHECK(parse_quantity("1.575 GHz", Dimension::frequency) == Approx(1.575e9));
  CHECK(parse_quantity("2 us", Dimension::seconds) == Approx(2e-6));
  CHECK(parse_quantity("2 µs", Dimension::seconds) == Approx(2e-6));
  CHECK(parse_quantity("63 ms", Dimension::seconds) == Approx(0.063));
  CHECK(parse_quantity("4.5e10 B/s", Dimension::byte_rate) == Approx(4.5e10));
  // InfiniBand NDR: 400 Gb/s = 400e9 / 8 = 5e10 B/s
  CHECK(parse_quantity("400 Gb/s", Dimension::byte_rate) == Approx(5e10));
  CHECK(parse_quantity("  8.2e11B/s ", Dimension::byte_rate) == Approx(8.2e11));
}

TEST_CASE("quantities of the wrong kind or sign are rejected", "[units]") {
  CHECK_FALSE(parse_quantity("128 GB", Dimension::byte_rate));  // a size given as a rate
  CHECK_FALSE(parse_quantity("273 GB/s", Dimension::bytes));    // a rate given as a size
  CHECK_FALSE(parse_quantity("273", Dimension::byte_rate));     // a bare number has no unit
  CHECK_FALSE(parse_quantity("fast", Dimension::byte_rate));
  CHECK_FALSE(parse_quantity("-5 GB/s", Dimension::byte_rate));
  CHECK_FALSE(parse_quantity("0 B/s", Dimension::byte_rate));
  CHECK_FALSE(parse_quantity("5 KiFLOP/s", Dimension::flop_rate));  // binary prefixes: bytes only
  CHECK_FALSE(parse_quantity("5 mB", Dimension::bytes));            // milli: seconds only
  CHECK_FALSE(parse_quantity("5 GB/h", Dimension::byte_rate));
  CHECK_FALSE(parse_quantity("1e400 B", Dimension::bytes));  // overflows to infinity
}

TEST_CASE("quantities print with 4 significant figures and a prefix", "[units]") {
  CHECK(rsim::format_quantity(273e9, Dimension::byte_rate) == "273 GB/s");
  CHECK(rsim::format_quantity(0.063, Dimension::seconds) == "63 ms");
  CHECK(rsim::format_quantity(2e-6, Dimension::seconds) == "2 µs");
  CHECK(rsim::format_quantity(517e12, Dimension::flop_rate) == "517 TFLOP/s");
  CHECK(rsim::format_quantity(233472.0, Dimension::bytes) == "233.5 kB");
  CHECK(rsim::format_capacity(233472.0) == "228 KiB");
  CHECK(rsim::format_capacity(32.0 * 1024 * 1024) == "32 MiB");
  CHECK(rsim::format_capacity(128e9) == "128 GB");
  CHECK(rsim::format_capacity(1024e3) == "1.024 MB");  // 1,024,000 = 1000 KiB but also 1024 kB
  CHECK(rsim::format_count(1861.2) == "1861");
  CHECK(rsim::format_count(3.353e9) == "3.353G");
}

TEST_CASE("people's numbers: parameters in B, long times in hours, no exponents", "[units]") {
  CHECK(rsim::format_parameters(3.353e9) == "3.353B");
  CHECK(rsim::format_parameters(46.7e9) == "46.7B");
  CHECK(rsim::format_parameters(300.1e6) == "300.1M");
  CHECK(rsim::format_parameters(1.0e12) == "1T");
  // 172,800 s = 48 h = 2 d; 3,000 s = 50 min; 999 s stays in seconds.
  CHECK(rsim::format_quantity(172800.0, Dimension::seconds) == "2 d");
  CHECK(rsim::format_quantity(36000.0, Dimension::seconds) == "10 h");
  CHECK(rsim::format_quantity(3000.0, Dimension::seconds) == "50 min");
  CHECK(rsim::format_quantity(999.0, Dimension::seconds) == "999 s");
  // 2 · 968 · 2048 · 2 · 16384 = 129,922,760,704 FLOPs, in full.
  CHECK(rsim::format_plain(129922760704.0) == "129,922,760,704");
  CHECK(rsim::format_plain(11480.4) == "11,480");
  CHECK(rsim::format_plain(1289.0) == "1289");
  CHECK(rsim::format_plain(0.083333) == "0.08333");
  CHECK(rsim::format_plain(-25000.0) == "-25,000");
}

TEST_CASE("strong quantity types compose into times and intensities", "[units]") {
  const rsim::Flops flops(2e12);
  const rsim::FlopsPerSecond peak(1e12);
  const rsim::Bytes bytes(4e9);
  const rsim::BytesPerSecond bandwidth(2e9);
  CHECK((flops / peak).si() == Approx(2.0));       // 2e12 / 1e12 = 2 s
  CHECK((bytes / bandwidth).si() == Approx(2.0));  // 4e9 / 2e9 = 2 s
  CHECK(rsim::intensity(flops, bytes) == Approx(500.0));
  CHECK(rsim::ridge(peak, bandwidth) == Approx(500.0));
}

TEST_CASE("an optional quantity holds a figure or none in one double", "[units]") {
  // OptionalBytes stands in for std::optional<Bytes> on a sweep's inner loop: the same answers,
  // with NaN as none (no figure of rsim is NaN).
  static_assert(sizeof(rsim::OptionalBytes) == sizeof(double));
  const rsim::OptionalBytes none;
  CHECK_FALSE(none.has_value());
  CHECK_FALSE(static_cast<bool>(none));
  CHECK_FALSE(rsim::OptionalBytes(std::nullopt).has_value());
  CHECK_FALSE(rsim::OptionalBytes(rsim::Bytes(std::numeric_limits<double>::quiet_NaN())));
  // Zero, negative and infinite figures are values, as in std::optional.
  for (const double bytes : {0.0, -1.0, 3.5e9, std::numeric_limits<double>::infinity()}) {
    const rsim::OptionalBytes some = rsim::Bytes(bytes);
    REQUIRE(some.has_value());
    CHECK((*some).si() == bytes);
    CHECK(some->si() == bytes);
  }
}
