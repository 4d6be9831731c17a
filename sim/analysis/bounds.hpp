// SPDX-License-Identifier: MIT
#pragma once

#include "sim/cost/cost_table.hpp"
#include "sim/graph/graph.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// Sums over a set of ops, each op weighted by its instance count.
struct Totals {
  Flops flops;
  Bytes bytes;        ///< main memory with the chosen tiles
  Bytes ideal_bytes;  ///< main memory if every operand were read once
  Seconds t_math;     ///< Σ T_math
  Seconds t_mem;      ///< Σ T_mem
  Seconds t_net;      ///< Σ T_net (collectives)
  std::vector<std::pair<std::string, Seconds>> t_net_by_tier;    ///< Σ T_net per network tier
  std::vector<std::pair<std::string, Bytes>> net_bytes_by_tier;  ///< Σ collective bytes per tier
  /// Σ bytes each memory tier serves, and their time, outermost first (every tier of the roofs).
  std::vector<std::pair<std::string, Bytes>> bytes_by_tier;
  std::vector<std::pair<std::string, Seconds>> t_by_tier;
  Seconds t_lower;  ///< Σ max(T_math, T_mem): ops run one after another, each overlapped
  Seconds t_upper;  ///< Σ (T_math + T_mem): nothing overlaps
  /// Σ expected per op (sim/cost/expected.hpp): the roofs at the fractions kernels reach, each op
  /// after the one before, collectives exposed (a training step: what its schedule hides)
  Seconds t_expected;
  Seconds t_critical;    ///< critical path over a device stream and a network stream
  Seconds t_overlapped;  ///< max(Σ T_math, Σ T per memory tier, Σ T_net): all overlaps (loosest)
  Bound bound = Bound::memory;  ///< the roof with the larger Σ
  std::string bound_tier;       ///< memory-bound: the memory tier with the largest Σ time
};

/// Totals of one stage (or one block of a stage: embed, layer, head).
struct GroupBounds {
  std::string stage;
  Block block = Block::none;  ///< none for a whole stage
  std::int64_t steps = 1;     ///< times the stage runs (π0.5's denoising steps)
  Totals totals;
};

/// Max (full overlap) and sum (no overlap) bounds per stage, per block and in total.
struct Bounds {
  Totals total;
  std::vector<GroupBounds> stages;
  std::vector<GroupBounds> blocks;
};

Bounds compute_bounds(const OpGraph& graph, const CostTable& table);

/// compute_bounds' total without its critical path (t_critical stays 0): the sums over every op.
Totals compute_totals(const OpGraph& graph, const CostTable& table);
/// The same into `totals`, reusing its vectors' storage (a sweep's point after point).
void compute_totals(const OpGraph& graph, const CostTable& table, Totals& totals);
/// compute_totals' time sums alone, from the table's times and counts (its costs unread): t_math,
/// t_mem, t_net, t_lower, t_upper, t_by_tier, t_overlapped and the bound, bit for bit
/// compute_totals' (the same sums in the same order). The FLOP, byte and network sums are left
/// as they were. What a sweep keeps of a point.
void compute_time_totals(const CostTable& table, Totals& totals);

/// The roof that holds a sum, as reports name it: "compute", "memory (hbm)", "network" (a
/// sum may span network tiers; its ops name theirs).
std::string bound_label(const Totals& totals);

/// The memory side of a sum: the tier with the largest Σ time (main memory on ties; its name is
/// empty for a sum of no ops).
struct MemorySide {
  std::string tier;
  Seconds time;
};
MemorySide memory_side(const Totals& totals);

}  // namespace rsim
