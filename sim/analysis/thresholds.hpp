// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// The ridge (critical intensity) of one compute path against one memory tier.
struct Ridge {
  std::string path;
  std::string tier;
  bool network = false;  ///< a network tier (its one-way link or per-device bandwidth)
  BytesPerSecond bandwidth;
  double flops_per_byte = 0.0;  ///< peak FLOP/s / bandwidth B/s
};

/// Every (compute path, memory tier with a bandwidth) ridge of the roofs, then every (compute
/// path, network tier) ridge against the tier's one-way bandwidth (v5e ICI: 1.97e14 / 4.5e10 =
/// 4377, the scaling book's network roofline example).
std::vector<Ridge> ridges(const Roofs& roofs);

/// Where a matmul's main-memory intensity meets the ridge as its token batch grows.
struct CriticalBatch {
  enum class Kind {
    at,      ///< compute-bound from `tokens` on
    always,  ///< compute-bound at any token batch
    never,   ///< the intensity cannot reach the ridge (e.g. per-batch weights)
  };
  Kind kind = Kind::never;
  double tokens = 0.0;  ///< the exact root (not rounded); meaningful for Kind::at
};

/// The critical token batch of a matmul: the exact root in T of I(T) = I_crit, where T is the
/// token batch (the product of the activation's batch and seq axes) and I(T) = FLOPs(T)/bytes(T)
/// is evaluated through cost_op on the op with its batch axis scaled. FLOPs and bytes are
/// affine in T, f₀ + f₁T and m₀ + m₁T, so T* = (I·m₀ − f₀)/(f₁ − I·m₁): for X[B,D]·W[D,F],
/// 2BDF / (s_x·BD + s_w·DF + s_o·BF) = I ⇒ B = I·s_w·DF / (2DF − I·(s_x·D + s_o·F)).
/// Returns nullopt for ops that are not matmuls or have no batch axis.
std::optional<CriticalBatch> critical_token_batch(const Op& op, const Roofs& roofs);

/// The critical token batch of several matmuls taken together (a matmul group of one stage):
/// the root of Σ FLOPs(T) / Σ bytes(T) = I_crit, each op weighted by its count, T the token batch
/// of the first op. All ops must be matmuls on one compute path.
std::optional<CriticalBatch> critical_token_batch(const std::vector<const Op*>& ops,
                                                  const Roofs& roofs);

}  // namespace rsim
