// SPDX-License-Identifier: MIT
#pragma once

// The cost of one op against the roofs: its FLOPs and bytes by kind (matmul, attention,
// elementwise, gather, cache write, collective), the bytes each memory tier serves (the best tile
// that fits, tile_search.hpp), its times and its bound. What costing an op looks up besides its
// sizes is its OpCostPlan; the table of a whole graph and its re-costing: cost_table.hpp.

#include "sim/base/units.hpp"
#include "sim/cost/tile_cache.hpp"
#include "sim/cost/tile_search.hpp"
#include "sim/cost/tiling.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/tile.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// Which roof holds an op: its compute path, its main-memory tier or its network tier.
enum class Bound { compute, memory, network };
std::string_view to_string(Bound bound);
/// What holds an op or a sum in the words of every report: "compute", "memory (dram)",
/// "network (nvlink)" (the tier in parentheses where one is known).
std::string bound_label(Bound bound, const std::string& tier);

/// The bytes one memory tier serves to the tier inside it (the innermost: to the math units),
/// for one instance of an op, and their time at the tier's bandwidth.
struct TierCost {
  std::string tier;
  Bytes bytes;
  Seconds time;              ///< bytes / bandwidth; zero where the tier has no bandwidth figure
  bool timed = false;        ///< the tier has a bandwidth figure
  std::optional<Tile> tile;  ///< the tile held by the next inner tier that set these bytes
  std::string tile_tier;     ///< that inner tier's name
  bool operand_resident = false;  ///< an operand (or attention's K/V) stays in the inner tier
  bool panels = false;  ///< the inner tier keeps full-K panels while waves sweep the tile (L2)
};

/// The cost of one instance of an op against the roofs (multiply by Op::count for all).
struct OpCost {
  Flops flops;
  Bytes bytes;                      ///< main memory (DRAM/HBM) traffic with the chosen tiles
  Bytes ideal_bytes;                ///< operands read once, outputs written once (perfect reuse)
  Seconds t_math;                   ///< FLOPs / peak of the op's compute path
  Seconds t_mem;                    ///< bytes / main-memory bandwidth
  Seconds t_net;                    ///< collectives: their time on their network tier
  std::vector<TierCost> tiers;      ///< every memory tier, outermost (main memory) first
  Seconds t_lower;                  ///< max(T_math, every tier's time, T_net): full overlap
  Seconds t_upper;                  ///< T_math + Σ tier times + T_net: no overlap
  double intensity = 0.0;           ///< FLOPs / main-memory byte with tiling (0 for no bytes)
  double ideal_intensity = 0.0;     ///< FLOPs / ideal byte (read once)
  double critical_intensity = 0.0;  ///< peak / bandwidth of the roofs this op runs against
  Bound bound = Bound::memory;
  std::string bound_tier;  ///< memory-bound: the tier whose time is the largest; network-bound:
                           ///< the network tier of the collective
};

/// FLOPs of one instance: a matmul is 2 × the product of every distinct axis of its operands
/// (transformers.md: "2 × product of all dims, batch and contracting dims counted once"), plus
/// one add per output element for a bias; fused attention (FMHA) is 4·B·N·H per visible
/// (query, key) pair (QKᵀ and AV; causal masks skip the masked half); elementwise ops count
/// their per-element FLOPs.
Flops op_flops(const Op& op);

/// Main-memory bytes of one instance: every input read once, every output written once, each in
/// its own dtype (How to Scale Your Model, roofline chapter, Q3: 2BD + DF + 2BF for int8 weights,
/// bf16 activations). Elementwise ops fused into a matmul move nothing. (Unfused attention is
/// three ops of the graph, so its score matrix is an ordinary output and input.)
Bytes op_bytes(const Op& op);

/// The bytes each memory tier serves to the next inner one: for matmuls and fused attention the
/// traffic of the best tile that fits the inner tier (or the user's tile), for every other op
/// (and for the innermost tier) the ideal bytes, since each byte passes every level once.
/// InputError when a user's tile does not fit its tier. `cache` (optional, one per thread) keeps
/// the tile searches' candidates between calls: the same result, found faster.
std::vector<TierCost> tier_costs(const Op& op, const Roofs& roofs, const TileChoices& tiles = {},
                                 TileCache* cache = nullptr);

/// The compute path an op runs on. InputError naming the paths there are if it does not exist.
const ComputePath& compute_path_of(const Op& op, const Roofs& roofs);

/// What costing an op looks up besides its sizes: its compute path, a collective's network tiers,
/// a matmul's GEMM axes and the distinct axes of its einsum operands (op_flops' product, in its
/// order). Found once, it re-costs the same op at other sizes (a sweep along the batch) with no
/// name matching; it points into `roofs`, so it lives no longer than they stay where they are.
/// Where a matmul's or a plain op's (elementwise, gather, cache write) costing finds its sizes:
/// pointers to them in the graph the plan was compiled for (CostPlan::compile), which re-costing
/// reads in the order walking the op's tensors would.
struct OpSizes {
  /// One tensor's sizes: `sizes[first, last)`, and its bytes per element.
  struct Tensor {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    double width = 0.0;
  };
  std::vector<const std::int64_t*> sizes;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  /// Matmuls: the sizes of the GEMM's batch, M, N and K axes (GemmAxes), and of op_flops' axes.
  std::array<std::vector<const std::int64_t*>, 4> gemm;
  std::vector<const std::int64_t*> einsum;
};

struct OpCostPlan {
  const ComputePath* path = nullptr;
  std::vector<const NetworkTier*> networks;  ///< collectives: innermost first
  std::optional<GemmAxes> gemm;              ///< matmuls
  std::vector<GemmAxis> einsum_axes;         ///< matmuls: X's axes, then W's not in X
  /// Matmuls of a compiled plan (CostPlan::compile): per inner tier, its tile search and its
  /// panel search once settled (SettledGemm), which answer the same searches at the op's later
  /// sizes without a lookup. Empty otherwise.
  std::vector<SettledGemm> settled;
  /// Matmuls and plain ops of a compiled plan: their sizes.
  std::optional<OpSizes> sizes;
  /// Fused attentions of a compiled plan: where their FlashShape reads its figures, and per inner
  /// tier the rows its flash search last looked up.
  std::optional<FlashLayout> flash;
  std::vector<KeptFlashRows> flash_rows;
  /// The op's ideal bytes (op_bytes) at its current sizes, where the caller knows them exactly
  /// (a batch line: affine in the batch); recost_times then takes them instead of summing the
  /// tensors. Unset: summed.
  OptionalBytes ideal_bytes;
  /// Its FLOPs (op_flops) likewise, for a matmul or a plain op. Unset: from the sizes.
  OptionalFlops flops;
};

/// InputError if the op's compute path does not exist.
OpCostPlan plan_op_cost(const Op& op, const Roofs& roofs);

/// An on-chip tier as the tile searches see it: what a tile there may occupy, whether it also
/// keeps full-K panels (a shared L2), and the user's tile for it if one is fixed.
struct InnerTier {
  const MemoryTier* tier = nullptr;
  TileBudget budget;
  bool panels = false;
  const Tile* fixed = nullptr;  ///< points into the TileChoices
};

/// Every tier inside main memory, innermost last (roofs.memory from its second entry).
std::vector<InnerTier> plan_inner_tiers(const Roofs& roofs, const TileChoices& tiles);

/// Costs one op against the roofs. InputError if its compute path does not exist.
/// An op's bound_label, or "fused" for an elementwise op fused into a matmul's epilogue: it
/// moves no bytes of its own, so no roof holds it.
std::string bound_label(const Op& op, const OpCost& cost);

OpCost cost_op(const Op& op, const Roofs& roofs, const TileChoices& tiles = {},
               TileCache* cache = nullptr);

}  // namespace rsim
