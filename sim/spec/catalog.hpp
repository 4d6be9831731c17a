// SPDX-License-Identifier: MIT
#pragma once
// What presets rsim ships (`rsim list`): hardware and model files, plan presets, precision
// policies, each with a one-line description; and the closest name to one that is not there.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

enum class CatalogKind { hardware, models, plans, precisions };
std::optional<CatalogKind> parse_catalog_kind(std::string_view name);

struct CatalogEntry {
  std::string name;         ///< what a scenario or an option takes: h100_sxm, megatron_tp, fp8
  std::string description;  ///< one line
  std::string file;         ///< the preset file (hardware and models); empty for built-in ones
};

/// Every preset of a kind, by name. Hardware and models are the YAML files of the first preset
/// folders find_preset searches (./KIND, $RSIM_DATA_DIR/KIND, the source tree's), each described
/// by its `name:` (a file that does not parse says so instead).
std::vector<CatalogEntry> catalog(CatalogKind kind);

/// The candidate nearest to `name` by edit distance (case-insensitive), if any is within half
/// of `name`'s length: what a "no such preset" error suggests.
std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates);

}  // namespace rsim
