// SPDX-License-Identifier: MIT
#pragma once

#include "sim/report/chart/roofline_chart.hpp"

#include <string>

namespace rsim {

/// A roofline chart in characters for a terminal (`--plot -`), like the sketches of the Jetson
/// Thor roofline write-up rsim started from (π0.5's FP8 engine on a T5000): the
/// same log axes as the SVG, roofs as '=' (in play) or '-', slopes as '/' (memory) or ':'
/// (network), ridges as 'o', the top points as letters A, B, … (measured kernels as digits 1, 2,
/// …) with a key below, other points as '*'. At least 2 columns and 2 rows.
std::string render_roofline_text(const RooflineChart& chart, int columns = 64, int rows = 20);

}  // namespace rsim
