// SPDX-License-Identifier: MIT
#pragma once

// A whole graph's costs as a table (CostTable: one row per op, one column per roof, Eigen) and the
// fast path that re-costs it after its sizes changed: a CostPlan, compiled for a batch line, reads
// sizes through pointers and keeps the tile searches settled (recost_graph, recost_times).

#include "sim/cost/op_cost.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/tile.hpp"

#include <Eigen/Core>

#include <cstddef>
#include <string>
#include <vector>

namespace rsim {

/// Everything costing a graph looks up besides its sizes, per row of its table; it points into
/// the roofs and the tile choices it was made from.
struct CostPlan {
  std::vector<InnerTier> inner_tiers;
  std::vector<OpCostPlan> ops;  ///< in the table's row order
  /// Per row, what its expected time needs besides its times (sim/cost/expected.hpp): whether it
  /// runs on the device (not a collective), 1 / its compute path's efficiency (1 without a path),
  /// and the launch gap it pays when it does work (none for an elementwise op fused into its
  /// matmul); per memory tier, 1 / its efficiency.
  Eigen::Array<bool, Eigen::Dynamic, 1> device_rows;
  Eigen::ArrayXd inverse_path_efficiency;
  Eigen::ArrayXd launch_overhead;
  /// Rows whose math and memory time add rather than overlap (serial_math_memory).
  Eigen::Array<bool, Eigen::Dynamic, 1> serial_rows;
  std::vector<double> inverse_tier_efficiency;
  /// 1 / the main memory's fraction for the serial rows (memory_efficiency).
  double inverse_serial_main_efficiency = 1.0;
  /// Compiles the plan for re-costing `graph` (the graph it was planned for, which must stay
  /// where it is) at size after size, a batch line's: matmuls and plain ops read their sizes
  /// through pointers, and matmuls keep their settled tile searches and answer from them. The
  /// same figures, bit for bit (the same arithmetic in the same order: the batch line's tests
  /// hold them to analyze()'s), with no walk over tensors and no lookup.
  void compile(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order);
};
CostPlan plan_costs(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                    const Roofs& roofs, const TileChoices& tiles);

/// Every op of a graph costed against the roofs, in topological order. `times` holds one row per
/// op and one column per roof (kMathColumn, kMemoryColumn, kNetworkColumn, then one per on-chip
/// memory tier from kFirstOnChipColumn), per instance; `counts` the instances, so graph bounds
/// are row-wise max / sum weighted by count.
struct CostTable {
  static constexpr Eigen::Index kMathColumn = 0;
  static constexpr Eigen::Index kMemoryColumn = 1;
  static constexpr Eigen::Index kNetworkColumn = 2;
  static constexpr Eigen::Index kFirstOnChipColumn = 3;
  /// The column of memory tier `tier` (0: main memory, then the on-chip tiers outermost first).
  static constexpr Eigen::Index tier_column(std::size_t tier) {
    return tier == 0 ? kMemoryColumn : kFirstOnChipColumn + static_cast<Eigen::Index>(tier) - 1;
  }
  std::vector<OpGraph::Vertex> order;
  std::vector<std::string> tier_names;  ///< the roofs' memory tiers, outermost first
  std::vector<OpCost> costs;
  Eigen::ArrayXXd times;
  Eigen::ArrayXd counts;
  /// Per row, one instance's expected time (sim/cost/expected.hpp): beside `times`, not a roof.
  Eigen::ArrayXd expected;
};

/// Costs every op of the graph.
CostTable cost_graph(const OpGraph& graph, const Roofs& roofs, const TileChoices& tiles = {},
                     TileCache* cache = nullptr);
/// The same, with the graph's topological order already at hand.
CostTable cost_graph(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                     const Roofs& roofs, const TileChoices& tiles = {}, TileCache* cache = nullptr);

/// A table for `order` against the roofs' tiers with every time zero and every cost empty: the
/// shape recost_graph fills (costing nothing, so it cannot fail where the sizes will change).
CostTable empty_cost_table(const std::vector<OpGraph::Vertex>& order, const Roofs& roofs);

/// Re-costs the graph `table` was made for (same order, `plan` from plan_costs) after its sizes
/// changed, in place: what cost_graph would return, without allocating or looking up names.
/// `rows` (if given) are the only table rows whose ops' sizes changed: the others keep their
/// costs (an op's cost depends on its own sizes only).
void recost_graph(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache* cache, CostTable& table,
                  const std::vector<std::size_t>* rows = nullptr);

/// recost_graph into the table's times and counts alone, what compute_time_totals reads: the ops
/// of a compiled plan (CostPlan::compile: matmuls and plain ops) go from their sizes straight to
/// their row's times, by cost_op's arithmetic but with no OpCost in between (their `costs` entries
/// are left as they were: stale); the others are costed whole. The same times, bit for bit.
void recost_times(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache& cache, CostTable& table,
                  const std::vector<std::size_t>* rows = nullptr);

/// The time one op instance holds the device (not the network): max over compute and tiers.
double device_time(const CostTable& table, Eigen::Index row);

}  // namespace rsim
