// SPDX-License-Identifier: MIT
#include "sim/explore/rank_by.hpp"

#include "sim/base/named.hpp"

#include <array>

namespace rsim {
namespace {

constexpr std::array kRankByNames{
    Named<RankBy>{RankBy::lower, "lower"},
    Named<RankBy>{RankBy::expected, "expected"},
    Named<RankBy>{RankBy::upper, "upper"},
};

}  // namespace

std::optional<RankBy> parse_rank_by(std::string_view name) {
  return find_named(name, kRankByNames);
}

std::string_view to_string(RankBy rank_by) { return name_of(rank_by, kRankByNames); }

}  // namespace rsim
