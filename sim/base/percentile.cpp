// SPDX-License-Identifier: MIT
#include "sim/base/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace rsim {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) {
    return 0.0;
  }
  const double rank = (static_cast<double>(sorted.size()) - 1.0) * p / 100.0;
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - static_cast<double>(below));
}

}  // namespace rsim
