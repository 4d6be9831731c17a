// SPDX-License-Identifier: MIT
#pragma once
// `rsim list`: the presets of one kind, a line each, or as JSON.

#include "sim/spec/catalog.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

namespace rsim {

void write_catalog_text(std::ostream& out, CatalogKind kind,
                        const std::vector<CatalogEntry>& entries);
/// An array of {"name", "description"}.
nlohmann::ordered_json catalog_to_json(const std::vector<CatalogEntry>& entries);

}  // namespace rsim
