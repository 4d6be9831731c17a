// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph.hpp"
#include "sim/hardware.hpp"
#include "sim/units.hpp"

#include <Eigen/Core>

#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// Which roof holds an op: its compute path, its main-memory tier or its network tier.
enum class Bound { compute, memory, network };
std::string_view to_string(Bound bound);

/// The cost of one instance of an op against the roofs (multiply by Op::count for all).
struct OpCost {
  Flops flops;
  Bytes bytes;             ///< main memory (DRAM/HBM): operands read once, outputs written once
  Seconds t_math;          ///< FLOPs / peak of the op's compute path
  Seconds t_mem;           ///< bytes / main-memory bandwidth
  Seconds t_net;           ///< collectives: their time on their network tier
  Seconds t_lower;         ///< max(T_math, T_mem, T_net): full overlap
  Seconds t_upper;         ///< T_math + T_mem + T_net: no overlap
  double intensity = 0.0;  ///< FLOPs / byte (0 for an op that moves no bytes)
  double critical_intensity = 0.0;  ///< peak / bandwidth of the roofs this op runs against
  Bound bound = Bound::memory;
};

/// FLOPs of one instance: a matmul is 2 × the product of every distinct axis of its operands
/// (transformers.md: "2 × product of all dims, batch and contracting dims counted once"), plus
/// one add per output element for a bias; fused attention (FMHA) is 4·B·N·H per visible
/// (query, key) pair (QKᵀ and AV; causal masks skip the masked half); elementwise ops count
/// their per-element FLOPs.
Flops op_flops(const Op& op);

/// Main-memory bytes of one instance: every input read once, every output written once, each in
/// its own dtype (seed 004: 2BD + DF + 2BF for int8 weights, bf16 activations). Elementwise ops
/// fused into a matmul move nothing. (Unfused attention is three ops of the graph, so its score
/// matrix is an ordinary output and input.)
Bytes op_bytes(const Op& op);

/// Costs one op against the roofs. InputError if its compute path does not exist.
OpCost cost_op(const Op& op, const Roofs& roofs);

/// Every op of a graph costed against the roofs, in topological order. `times` holds one row per
/// op and one column per roof (kMathColumn, kMemoryColumn, kNetworkColumn), per instance; `counts`
/// the instances, so graph bounds are row-wise max / sum weighted by count.
struct CostTable {
  static constexpr Eigen::Index kMathColumn = 0;
  static constexpr Eigen::Index kMemoryColumn = 1;
  static constexpr Eigen::Index kNetworkColumn = 2;
  std::vector<OpGraph::Vertex> order;
  std::vector<OpCost> costs;
  Eigen::ArrayXXd times;
  Eigen::ArrayXd counts;
};

/// Costs every op of the graph.
CostTable cost_graph(const OpGraph& graph, const Roofs& roofs);

/// The lines of `rsim run --explain`: the op's FLOP and byte formulas with numbers put in.
std::vector<std::string> explain_op(const Op& op, const Roofs& roofs);

}  // namespace rsim
