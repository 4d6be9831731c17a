// SPDX-License-Identifier: MIT
#pragma once
// `rsim validate`'s report: per case lower / measured and expected / measured, then the summary.

#include "sim/explore/validation.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

namespace rsim {

void write_validation_text(std::ostream& out, const std::vector<ValidationResult>& results,
                           const ValidationSummary& summary);
nlohmann::ordered_json validation_to_json(const std::vector<ValidationResult>& results,
                                          const ValidationSummary& summary);

}  // namespace rsim
