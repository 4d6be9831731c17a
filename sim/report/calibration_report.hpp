// SPDX-License-Identifier: MIT
#pragma once
// `rsim calibrate`'s report: the fitted parameters before and after, each measurement's error,
// and the overlay YAML that `--calibration FILE` (or a scenario's `calibration:`) applies.

#include "sim/explore/calibrate.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

namespace rsim {

void write_calibration_text(std::ostream& out, const CalibrationResult& result);
nlohmann::ordered_json calibration_to_json(const CalibrationResult& result);
/// The overlay: `hardware:` and an `efficiency:` section of the fitted parameters, each with a
/// `derived:` naming the fit (docs/yaml.md).
void write_calibration_yaml(std::ostream& out, const CalibrationResult& result);

}  // namespace rsim
