// SPDX-License-Identifier: MIT
#pragma once
// The expected time of an op: its roofs at the fractions real kernels reach (the hardware's
// `efficiency:` section), plus a kernel launch's gap, and a collective's call latency α and its
// algorithm's steps. Beside the lower bound, never below it. Derivation: docs/design/expected.md.

#include "sim/cost/collectives.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/graph/op.hpp"
#include "sim/spec/hardware.hpp"

#include <vector>

namespace rsim {

/// Expected time of one instance of each device row of `table` (its times already filled), in one
/// pass (a batch line re-costs a table per point):
///   max(T_math / η_path, T_tier / η_tier for every memory tier) + kernel overhead
///   (none for an elementwise op fused into its matmul, or an op with no work); a GEMM of two
///   activations adds its math and memory instead, its main memory at its own η
///   (memory_efficiency).
/// A collective's row is left as it is: expected_collective_time fills it, on one tier
///   α + hop latency × the algorithm's steps (a ring's N − 1 per pass) + bandwidth time / η_net;
///   over several tiers the largest α + the lower bound's latency + bandwidth time / the smallest
///   η.
/// Each term is at least its bound's, so the expected time is at least the lower bound.
/// `rows` (if given) are the only rows whose times changed.
void expected_device_rows(const CostPlan& plan, CostTable& table,
                          const std::vector<std::size_t>* rows = nullptr);

/// Whether an op's math and memory time add in its expected time rather than overlap: a batched
/// GEMM of two activations (an unfused attention's score GEMMs and their gradients).
bool serial_math_memory(const Op& op);

/// The fraction of memory tier `tier`'s bandwidth `op` reaches: the tier's (`efficiency.memory`),
/// but on the main memory (tier 0) an unfused attention's GEMM (serial_math_memory) reaches
/// `efficiency.attention.unfused_memory` where the hardware gives it.
double memory_efficiency(const Op& op, std::size_t tier, const Roofs& roofs);

/// The fraction of its compute path's peak `op` reaches: a fused attention's pass's
/// (`efficiency.attention`) where the hardware gives one, else the path's (1 without a path).
double compute_efficiency(const Op& op, const ComputePath* path, const Roofs& roofs);

/// The share of a fused attention pass's peak rate its length leaves after each query tile's fixed
/// work: L / (L + length_overhead), L = the keys a query sees on average (visible pairs / queries).
/// 1 for any other op, or without a length overhead.
double attention_length_share(const Op& op, const Roofs& roofs);

/// The share of a fused attention pass's fraction its head dim d leaves after each score's work
/// beside the matmuls: [d / (d + head_dim_overhead)] / [128 / (128 + head_dim_overhead)] (the
/// fractions are given at head dim 128; above 128 the share exceeds 1). 1 for any other op, or
/// without a head-dim overhead.
double attention_head_dim_share(const Op& op, const Roofs& roofs);

/// Both shares of an attention pass: its length's and its head dim's.
double attention_shape_share(const Op& op, const Roofs& roofs);

/// What multiplies a device op's compute fraction for its shape: a matmul's tile quantization
/// (gemm_quantization.hpp), an attention pass's length and head-dim shares; 1 otherwise.
double op_shape_share(const Op& op, const Roofs& roofs);

/// The same for a device op from its cost (`rsim matmul`).
double expected_device_time(const Op& op, const OpCost& cost, const Roofs& roofs);

/// The same for a collective on its tiers (innermost first).
double expected_collective_time(const Collective& collective,
                                const std::vector<const NetworkTier*>& tiers);

/// The same from the collective's cost on those tiers, already computed (collective_cost).
double expected_collective_time(const CollectiveCost& cost,
                                const std::vector<const NetworkTier*>& tiers);

}  // namespace rsim
