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

/// The critical token batch of one matmul group of one stage, all its ops taken together.
struct GroupCritical {
  std::string stage;
  std::string group;
  std::optional<CriticalBatch> critical;
};

/// What the run keeps in memory per device (weights and the KV cache), in bytes.
struct Footprint {
  Bytes weights;   ///< all parameters in the weight dtype (× batch for per-batch weights)
  Bytes kv_cache;  ///< K and V of every stage a later stage attends to
};

/// Everything one scenario run produces: the pipeline's stages kept for the reports.
struct RunResult {
  Scenario scenario;
  Roofs roofs;
  OpGraph graph;
  CostTable table;                                     ///< rows in topological order
  std::vector<std::optional<CriticalBatch>> critical;  ///< per table row (matmuls only)
  Bounds bounds;
  ParameterCount parameters;
  std::vector<GroupCritical> group_critical;  ///< per stage, per matmul group present
  Footprint footprint;
};

/// Runs the pipeline: graph → cost → thresholds → bounds. The roofs must come from the
/// scenario's hardware (resolve_roofs); a compute path they lack is an InputError.
RunResult analyze(Scenario scenario, Roofs roofs);

/// The roofs a scenario runs against: its hardware in `mode` (empty: the scenario's mode), with
/// the scenario's (variant's) overrides, then `extra` (the command line's) on top.
Roofs scenario_roofs(const Scenario& scenario, std::string_view mode,
                     const RoofOverrides& extra = {});

/// One X[B,D]·W[D,F] matmul on one device (`rsim matmul`).
struct MatmulResult {
  Roofs roofs;
  Op op;
  OpCost cost;
  std::optional<CriticalBatch> critical;
};

MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs);

}  // namespace rsim
