// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/dtype.hpp"
#include "sim/graph/graph.hpp"
#include "sim/spec/scenario.hpp"

namespace rsim {

/// Bytes of optimizer state per parameter: Adam keeps two fp32 moments, SGD one fp32 momentum,
/// each beside an fp32 master copy when the weights are stored narrower than fp32 (mixed
/// precision, Micikevicius et al. 2018; ZeRO's K = 12 for Adam: Rajbhandari et al. 2020, §3.1).
double optimizer_state_bytes_per_parameter(Optimizer optimizer, DType weights);

/// The dtype gradients are kept and reduced in: `precision.gradients` where given, else the
/// activations' dtype when it is 16 bits or wider, else bf16 (FP8 training keeps bf16 gradients).
DType gradient_dtype(const Precision& precision);

/// Appends a training step's passes to a forward graph (built with the microbatch as batch and
/// every op's count × microbatches):
/// - recompute: `full` re-runs every op of each layer's forward before its backward, `selective`
///   only attention (Korthikanti et al. 2022);
/// - backward, in reverse order: per matmul Y = X·W a dgrad dX = dY·Wᵀ and a wgrad dW = Xᵀ·dY
///   (each the forward's FLOPs: training = 3 × forward, scaling book transformers.md), whose
///   output is a weight-shaped gradient summed over the step's microbatches (`accumulated`), so
///   a plan's sharder reduces it once per step; fused attention's backward at 2.5 × its forward
///   FLOPs (Dao 2023, FlashAttention-2 §3.1.2: 5 matmuls against 2); per elementwise op one that
///   reads dY and its saved inputs and writes their gradients;
/// - optimizer: per weight, once per step, an update reading the parameter, its gradient and its
///   state and writing parameter and state (in its weight's block, so a pipeline splits it too).
void add_training_passes(OpGraph& graph, const Scenario& scenario);

}  // namespace rsim
