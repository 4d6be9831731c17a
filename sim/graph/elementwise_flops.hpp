// SPDX-License-Identifier: MIT
#pragma once
// The vector FLOPs each elementwise op of a transformer block counts per output element.

#include "sim/spec/model.hpp"

#include <array>

namespace rsim {

// Vector FLOPs per output element. These ops are bandwidth-bound by orders of magnitude, so the
// counts only need to be the right size; each is the arithmetic of the textbook formula.
// RMSNorm: x², running sum, × rsqrt, × (1 + w).
inline constexpr double kRmsNormFlops = 4.0;
// LayerNorm: mean, −, x², sum, × rsqrt, × γ, + β.
inline constexpr double kLayerNormFlops = 7.0;
// adaRMSNorm adds a shift: x·(1 + scale) + shift.
inline constexpr double kAdaptiveShiftFlops = 1.0;
// Residual x + y; gated residual x + y · gate (π0.5's adaRMS gate).
inline constexpr double kResidualFlops = 1.0;
inline constexpr double kGatedResidualFlops = 2.0;
// RoPE per pair: x₁cos − x₂sin, x₁sin + x₂cos = 6 FLOPs / 2 elements.
inline constexpr double kRopeFlops = 3.0;
// A position-embedding add, an embedding scale by √D.
inline constexpr double kAddFlops = 1.0;
// act(gate) · up.
inline constexpr double kGateMultiplyFlops = 1.0;
// Softmax: row max, x − max, exp, row sum, ÷ sum (the scale folded).
inline constexpr double kSoftmaxFlops = 5.0;
// Cross-entropy's softmax over the vocabulary, then the target's −log p (one per row, left out);
// its backward p − onehot(target), one subtract per element.
inline constexpr double kCrossEntropyFlops = kSoftmaxFlops;
inline constexpr double kCrossEntropyBackwardFlops = 1.0;

struct ActivationCost {
  Activation activation;
  double flops;
};
// gelu_tanh: 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))) ≈ 8 ops with tanh as one; erf gelu ≈ 5;
// silu: x / (1 + e^-x) ≈ 4; relu: 1 compare.
inline constexpr std::array kActivationFlops{
    ActivationCost{Activation::gelu_tanh, 8.0},
    ActivationCost{Activation::gelu, 5.0},
    ActivationCost{Activation::silu, 4.0},
    ActivationCost{Activation::relu, 1.0},
};

/// FLOPs per element of an activation function (1 for one not in the table).
inline double activation_flops(Activation activation) {
  for (const ActivationCost& entry : kActivationFlops) {
    if (entry.activation == activation) {
      return entry.flops;
    }
  }
  return 1.0;
}

}  // namespace rsim
