// SPDX-License-Identifier: MIT
#pragma once
// Single-op probes: one matmul (`rsim matmul`) and one collective (`rsim collective`), costed
// by the same formulas as a scenario's ops.

#include "sim/analysis/bounds.hpp"
#include "sim/analysis/thresholds.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/graph/transformer.hpp"
#include "sim/spec/hardware.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rsim {

/// Which dimension of X[B,D]·W[D,F] a matmul is split over across devices.
enum class MatmulSharding {
  none,      ///< one device
  contract,  ///< D: X[B, D_X]·W[D_X, F] → partial sums, all-reduced (scaling book case 3)
  batch,     ///< B: X[B_X, D]·W[D, F] → [B_X, F], no communication (case 1)
  out,       ///< F: X[B, D]·W[D, F_X] → [B, F_X], no communication (case 1)
};
std::optional<MatmulSharding> parse_matmul_sharding(std::string_view name);  ///< d, batch, f
std::string_view to_string(MatmulSharding sharding);

/// The devices and the split of a `rsim matmul`.
struct MatmulPlan {
  std::int64_t devices = 1;
  MatmulSharding shard = MatmulSharding::none;
  std::string network;                ///< the tier the devices talk over
  bool in_network_reduction = false;  ///< all-reduce in the switch (SHARP), where it can
};

/// One X[B,D]·W[D,F] matmul, on one device or split over several (`rsim matmul`).
struct MatmulResult {
  Roofs roofs;
  MatmulShape global;  ///< the whole matmul
  MatmulPlan plan;
  Op op;                                  ///< the per-device matmul
  OpCost cost;                            ///< per device: T_math and T_mem
  std::optional<CriticalBatch> critical;  ///< per-device token batch meeting the memory ridge
  std::optional<Collective> collective;   ///< the communication the split needs
  std::optional<CollectiveCost> collective_cost;
  Seconds t_net;
  Seconds t_lower;     ///< max(T_math, T per memory tier, T_net)
  Seconds t_upper;     ///< T_math + Σ T per memory tier + T_net
  Seconds t_expected;  ///< the matmul's expected time, then its all-reduce's (sim/cost/expected)
  Bound bound = Bound::memory;
  /// D-sharding only: the model width above which T_math exceeds T_net (the network roof):
  /// T_math ∝ D while the all-reduced partial sums do not grow with D, so D* = D · T_net / T_math.
  std::optional<double> critical_d;
};

/// `tiles` fixes the tile of one or more on-chip tiers (`--tile`); the others are chosen.
MatmulResult analyze_matmul(const MatmulShape& shape, Roofs roofs, const MatmulPlan& plan = {},
                            const TileChoices& tiles = {});

/// One collective on one network tier (`rsim collective`).
struct CollectiveResult {
  std::string hardware;
  NetworkTier tier;       ///< the tier (the innermost, named "nvlink+ib", for a hierarchy)
  Collective collective;  ///< as costed: wraparound resolved against the tier
  CollectiveCost cost;
  std::vector<NetworkTier> levels;  ///< a hierarchy's tiers, innermost first; empty for one
};

/// Costs a collective on the named tier. A torus axis has wraparound links only at the tier's
/// wraparound size, so `collective.wraparound` is kept only where every axis has it.
/// `network` may name a hierarchy, "nvlink+ib" (innermost first), as a mesh axis may. InputError
/// if a tier does not exist.
CollectiveResult analyze_collective(Collective collective, std::string_view network,
                                    const Roofs& roofs);

/// The tier of that name, or an InputError listing the tiers (`flag` names the option).
const NetworkTier& require_network(const Roofs& roofs, std::string_view network,
                                   std::string_view flag);

}  // namespace rsim
