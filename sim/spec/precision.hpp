// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/dtype.hpp"
#include "sim/spec/hardware.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

class ConfigNode;

/// Dtypes of each tensor role and the compute path matmuls and attention run on.
struct Precision {
  std::string policy = "custom";  ///< the preset it started from, or "custom"
  DType weights = DType::bf16;
  DType activations = DType::bf16;
  DType outputs = DType::bf16;  ///< matmul outputs
  DType kv_cache = DType::bf16;
  std::string compute;            ///< a compute path of the hardware, e.g. "fp8"
  std::string requested_compute;  ///< the path asked for when `fallback` replaced it, else ""
  /// The compute path attention's matmuls run on where it differs from `compute`, else "":
  /// Transformer Engine's FP8 recipes run GEMMs in FP8 and dot-product attention in BF16 unless
  /// `fp8_dpa` is set (its recipe API: fp8_dpa, default False).
  std::string attention;
  /// The LM head's weight dtype where the quantizer left it out, else nullopt (= weights):
  /// ModelOpt, TensorRT Edge-LLM (`--lm_head_quantization`, default off), AutoAWQ and GPTQ
  /// keep the LM head in 16 bits unless asked.
  std::optional<DType> lm_head;
  /// The compute path the LM head runs on where `lm_head` has one of its own, else "".
  std::string lm_head_compute;
  /// Training: the weight gradients' dtype where it is not the default (the activations' if
  /// 16 bits or wider, else bf16): Megatron-LM accumulates and reduces BF16 runs' gradients in
  /// FP32 (`--accumulate-allreduce-grads-in-fp32`, forced for --bf16 unless
  /// --grad-reduce-in-bf16).
  std::optional<DType> gradients;

  [[nodiscard]] const std::string& attention_path() const {
    return attention.empty() ? compute : attention;
  }
  [[nodiscard]] DType lm_head_weights() const { return lm_head.value_or(weights); }
  [[nodiscard]] const std::string& lm_head_path() const {
    return lm_head_compute.empty() ? compute : lm_head_compute;
  }
};

/// A named precision policy (a preset).
struct PrecisionPolicy {
  std::string_view name;
  DType weights;
  DType activations;
  DType outputs;
  DType kv_cache;
  std::string_view compute;
  std::string_view description;
};

/// Every preset: bf16, fp16, int8_weights, int8, fp8, fp4, nvfp4, int4_weights.
const std::vector<PrecisionPolicy>& precision_policies();

/// The preset of that name, or nullopt.
std::optional<Precision> precision_preset(std::string_view name);

/// Parses `precision:` — a preset name ("int8_weights"), or a map with an optional `policy`
/// whose fields the other keys override, and an optional `fallback` compute path used (and
/// reported) when the hardware lacks the requested one. Errors name file:line:col.
Precision parse_precision(const ConfigNode& node, const HardwareSpec& hardware);

/// "weights fp8, activations fp8, outputs fp8, kv_cache fp8, compute fp8"
std::string describe(const Precision& precision);

}  // namespace rsim
