// SPDX-License-Identifier: MIT
#pragma once
// The forward graph of a model: one stage after another, each a transformer (or MoE) stack built
// op by op for the workload, precision and fusion of a scenario.

#include "sim/graph/graph.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <string>

namespace rsim {

/// Builds the forward op graph of a scenario's model (training passes are added by
/// build_graph, step_graph.hpp).
OpGraph build_forward_graph(const Scenario& scenario);

/// One X·W matmul on one device, X[batch=B, embed=D] · W[embed=D, mlp=F] → [batch, mlp]; with
/// per-batch weights W is [batch=B, embed=D, mlp=F] (scaling book roofline Q4).
struct MatmulShape {
  std::int64_t batch = 1;
  std::int64_t contract = 1;
  std::int64_t out = 1;
  DType input = DType::bf16;
  DType weights = DType::bf16;
  DType output = DType::bf16;
  std::string compute_path;
  bool per_batch_weights = false;
};
Op make_matmul(const MatmulShape& shape);

}  // namespace rsim
