// SPDX-License-Identifier: MIT
#pragma once

#include "sim/bounds.hpp"
#include "sim/cost.hpp"
#include "sim/graph.hpp"
#include "sim/hardware.hpp"
#include "sim/model.hpp"
#include "sim/scenario.hpp"
#include "sim/thresholds.hpp"

#include <optional>
#include <vector>

namespace rsim {

/// Everything one scenario run produces: the pipeline's stages kept for the reports.
struct RunResult {
  Scenario scenario;
  Roofs roofs;
  OpGraph graph;
  CostTable table;                                     ///< rows in topological order
  std::vector<std::optional<CriticalBatch>> critical;  ///< per table row (matmuls only)
  Bounds bounds;
  ParameterCount parameters;
};

/// Runs the pipeline: graph → cost → thresholds → bounds. The roofs must come from the
/// scenario's hardware (resolve_roofs); a compute path they lack is an InputError.
RunResult analyze(Scenario scenario, Roofs roofs);

/// One X[B,D]·W[D,F] matmul on one device (`rsim matmul`).
struct MatmulResult {
  Roofs roofs;
  Op op;
  OpCost cost;
  std::optional<CriticalBatch> critical;
};

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs);

}  // namespace rsim
