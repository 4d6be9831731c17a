// SPDX-License-Identifier: MIT
#pragma once
// Which time the searches rank plans by and a sweep picks its fastest series by: the expected
// time (kernel efficiency, collective latency, only the overlaps a plan names) by default, or
// either bound (`--rank-by lower|expected|upper`).

#include "sim/analysis/bounds.hpp"
#include "sim/base/units.hpp"

#include <optional>
#include <string_view>

namespace rsim {

enum class RankBy { lower, expected, upper };
std::optional<RankBy> parse_rank_by(std::string_view name);
std::string_view to_string(RankBy rank_by);

/// Of a lower bound, an expected time and an upper bound, the one `rank_by` names.
template <typename Time>
Time by_rank(RankBy rank_by, Time lower, Time expected, Time upper) {
  switch (rank_by) {
    case RankBy::lower:
      return lower;
    case RankBy::upper:
      return upper;
    case RankBy::expected:
      break;
  }
  return expected;
}

/// The time `rank_by` names of any figures with t_lower, t_expected and t_upper (Totals, a sweep
/// point's figures).
template <typename Figures>
Seconds ranked_time(const Figures& figures, RankBy rank_by) {
  return by_rank(rank_by, figures.t_lower, figures.t_expected, figures.t_upper);
}

}  // namespace rsim
