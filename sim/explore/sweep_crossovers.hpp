// SPDX-License-Identifier: MIT
#pragma once

#include "sim/explore/sweep.hpp"
#include "sim/explore/sweep_evaluator.hpp"

#include <vector>

namespace rsim {

/// The crossovers of a finished sweep along its first numeric axis: where the fastest series of
/// its first non-numeric axis changes, and where each series changes its bound; each located by
/// bisection between two grid values, evaluating points with `evaluator`.
std::vector<SweepCrossover> find_sweep_crossovers(const SweepEvaluator& evaluator,
                                                  const SweepResult& result);

}  // namespace rsim
