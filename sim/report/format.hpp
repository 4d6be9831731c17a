// SPDX-License-Identifier: MIT
#pragma once

// How the reports write quantities, roofs and tier cells: one set for every report source of this
// folder. Include it from sources, never from a public header (html.cpp has cells of its own by
// the names seconds and bytes).

#include "sim/base/units.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/op_cost.hpp"

#include <fmt/format.h>

#include <string>

namespace rsim {

inline std::string seconds(Seconds time) { return format_quantity(time.si(), Dimension::seconds); }
inline std::string seconds(double time_s) { return format_quantity(time_s, Dimension::seconds); }
inline std::string flops(Flops count) { return format_count(count.si()); }
inline std::string bytes(Bytes size) { return format_quantity(size.si(), Dimension::bytes); }
inline std::string rate(FlopsPerSecond peak) {
  return format_quantity(peak.si(), Dimension::flop_rate);
}
inline std::string rate(BytesPerSecond bandwidth) {
  return format_quantity(bandwidth.si(), Dimension::byte_rate);
}
inline std::string percent(double fraction) { return fmt::format("{:.1f} %", 100.0 * fraction); }

inline std::string tier_cell(Bytes served, Seconds time, bool timed) {
  return timed ? fmt::format("{} {}", bytes(served), seconds(time)) : bytes(served);
}

}  // namespace rsim
