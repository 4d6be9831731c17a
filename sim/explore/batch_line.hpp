// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/request.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rsim {

/// One inference scenario as a function of its batch alone, for sweeps: its sharded op graph is
/// built once at probe batches and kept as a template whose sizes are either constant or
/// proportional to the batch. A point re-costs the template with those sizes scaled, which is
/// what analyze() would cost at that batch (checked at a third probe when the line is built, and
/// by tests against analyze() point by point), without rebuilding, re-sharding or re-validating
/// anything: no YAML and no graph construction in the inner loop.
///
/// Not usable (`usable()` false, with `why`) for a training step or a decode request (their
/// analyses add more than the graph's costs), a scenario that does not build at the probes, or a
/// graph whose sizes are not proportional to the batch (e.g. rounded capacities); the caller then
/// runs analyze() per point.
class BatchLine {
 public:
  /// What a sweep keeps of analyze() at one batch: the totals' time sums (compute_time_totals:
  /// the bounds, T_math / T_mem / T_net, per memory tier, the roof; FLOP and byte sums and the
  /// critical path left out) and the footprint.
  struct Point {
    Totals total;
    Footprint footprint;
  };

  /// A thread's copy of the template graph, patched in place point after point. It points into
  /// itself, so it stays where it was made (BatchLine::workspace).
  class Workspace {
   public:
    Workspace() = default;
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
    TileCache cache;
    /// The graph and its costs at the last point evaluated (rows in `table().order`): for
    /// callers that split the totals by op (the serving simulation's iteration costs).
    [[nodiscard]] const OpGraph& graph() const { return graph_; }
    [[nodiscard]] const CostTable& table() const { return table_; }

   private:
    friend class BatchLine;
    using NumberRef = std::variant<std::int64_t*, double*, Bytes*>;
    const BatchLine* line_ = nullptr;  ///< the line that made it (its plans point into its roofs)
    OpGraph graph_;
    /// The proportional integers of graph_, each with the index of its value among the line's
    /// distinct ones (BatchLine::distinct_), and its other proportional numbers with their values
    /// at the probe batch.
    std::vector<std::pair<std::int64_t*, std::uint32_t>> integers_;
    std::vector<std::pair<NumberRef, double>> reals_;
    std::vector<std::int64_t> values_;  ///< the distinct integers at the point being evaluated
    CostPlan plan_;                     ///< table_'s lookups
    CostTable table_;                   ///< graph_'s costs, re-costed in place point after point
    FootprintPlan footprint_;           ///< graph_'s footprint, read point after point
    bool costed_ = false;  ///< every row of table_ costed (then only scaled rows change)
    Point point_;          ///< the last point evaluated
  };

  BatchLine(const Scenario& scenario, const Roofs& roofs);

  [[nodiscard]] bool usable() const { return why_.empty(); }
  /// Why the line is not usable ("" when it is).
  [[nodiscard]] const std::string& why() const { return why_; }

  /// A workspace for this line, valid while the line stays where it is (not moved).
  [[nodiscard]] std::unique_ptr<Workspace> workspace() const;

  /// The run at `batch` ≥ 1, held by the workspace until its next evaluation; nullptr where a
  /// proportional size would not be whole at that batch (the plan does not divide it, or shards
  /// it otherwise): analyze() decides those points.
  [[nodiscard]] const Point* evaluate(std::int64_t batch, Workspace& workspace) const;

 private:
  /// at_probe · batch / probe_batch_ as per_step · (batch / step), the fraction reduced: whole
  /// exactly where step divides the batch, with no division by probe_batch_ per point.
  struct Proportion {
    std::int64_t step = 1;
    std::int64_t per_step = 0;
    bool operator==(const Proportion&) const = default;
  };
  struct Scaled {
    std::size_t index = 0;       ///< in the visiting order of every number of the graph
    double at_probe = 0.0;       ///< its value at probe_batch_
    bool integer = false;        ///< a count or size: must stay whole
    std::uint32_t distinct = 0;  ///< integers: at_probe / probe_batch_ is distinct_[distinct]
  };

  /// A figure along the line (an op's ideal bytes or FLOPs, a working set's bytes) in whole units
  /// of 1 / units_per_figure: constant + slope · batch / probe_batch_, found and checked at the
  /// probes, where every figure is whole in units below 2⁵², so exact.
  struct AffineFigure {
    std::int64_t constant = 0;
    std::int64_t slope = 0;
    bool affine = false;
    Proportion per_batch;  ///< slope / probe_batch_, reduced
    double units_per_figure = 1.0;
  };
  [[nodiscard]] Proportion proportion(std::int64_t at_probe) const;
  /// `whole` at `batch`, nullopt where it is not whole or overflows. `last` keeps the last
  /// step's quotient (points share few steps: one division each).
  static std::optional<std::int64_t> at_batch(const Proportion& whole, std::int64_t batch,
                                              std::pair<std::int64_t, std::int64_t>& last);
  /// Each table row's ideal bytes (op_bytes) in units of 2⁻⁷ B: every dtype's width is a
  /// multiple (tests/base/dtype_test.cpp).
  [[nodiscard]] std::vector<AffineFigure> affine_ideal_bytes(
      const std::vector<ShardedGraph>& probes) const;
  /// Each table row's FLOPs (op_flops): a matmul's whole, a plain op's in units of 2⁻⁷ where its
  /// FLOPs per element are a multiple (then every product that makes them is exact); never
  /// affine for any other op.
  [[nodiscard]] std::vector<AffineFigure> affine_flops(
      const std::vector<ShardedGraph>& probes) const;
  [[nodiscard]] AffineFigure affine_fit(const std::vector<double>& at_probes,
                                        double units_per_figure) const;
  /// Each working-set visit's activation bytes (FootprintPlan::Visit), likewise; nullopt where a
  /// visit counts KV cache or per-batch weights (the footprint is then summed whole).
  [[nodiscard]] std::optional<std::vector<AffineFigure>> affine_working_sets(
      const std::vector<ShardedGraph>& probes) const;
  /// `figure` at `batch` (NaN where not whole or not exact); `last` as at_batch's.
  static double figure_at(const AffineFigure& figure, std::int64_t batch,
                          std::pair<std::int64_t, std::int64_t>& last);
  /// The largest working set at `batch` (the max of working_sets_), where every one is exact.
  [[nodiscard]] OptionalBytes activations_at(std::int64_t batch) const;

  static std::vector<std::size_t> rows_of(OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                                          const std::vector<Scaled>& scaled);

  Scenario scenario_;
  Roofs roofs_;
  ParameterCount parameters_;
  std::int64_t probe_batch_ = 1;
  OpGraph graph_;  ///< sharded, at probe_batch_
  std::vector<OpGraph::Vertex> order_;
  double weight_fraction_ = 1.0;
  std::vector<Scaled> scaled_;
  /// The distinct proportions of the integers of scaled_ (few: most are one axis, the tokens or
  /// sequences per device, seen by tensor after tensor), each found once per point.
  std::vector<Proportion> distinct_;
  /// The table rows (positions in order_) of the ops with a scaled number: the others (an FSDP
  /// weight's all-gather) cost the same at every batch and are costed once per workspace.
  std::vector<std::size_t> scaled_rows_;
  std::vector<AffineFigure> ideal_;                        ///< per table row
  std::vector<AffineFigure> flops_;                        ///< per table row
  std::optional<std::vector<AffineFigure>> working_sets_;  ///< affine_working_sets
  std::string why_;
};

}  // namespace rsim
