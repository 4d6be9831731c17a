// SPDX-License-Identifier: MIT
#pragma once

#include "sim/explore/search.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>

namespace rsim {

/// The counts (seen, costed, rejected by reason), the top `top` plans with their breakdowns and
/// what each loses to the one above it, and the Pareto front.
void write_search_text(std::ostream& out, const SearchResult& result, std::size_t top);
nlohmann::ordered_json search_to_json(const SearchResult& result, std::size_t top);

/// A training search: the space's counts (seen, costed, analyses run, rejected by reason with
/// one example each), then the top `top` plans (0 = all) with their step time, its breakdown,
/// the bubble, memory per device, MFU, and what each loses to the one above it.
void write_training_search_text(std::ostream& out, const TrainingSearchResult& result,
                                std::size_t top);
nlohmann::ordered_json training_search_to_json(const TrainingSearchResult& result, std::size_t top);

}  // namespace rsim
