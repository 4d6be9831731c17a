// SPDX-License-Identifier: MIT
#include "sim/spec/precision.hpp"

#include "sim/spec/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace rsim {
namespace {

DType parse_dtype_node(const ConfigNode& node) {
  const std::string name = node.as_string();
  const auto dtype = parse_dtype(name);
  if (!dtype) {
    node.fail(
        fmt::format("expected a dtype ({}); got \"{}\"", fmt::join(dtype_names(), ", "), name));
  }
  return *dtype;
}

std::string policy_names() {
  std::vector<std::string_view> names;
  for (const PrecisionPolicy& policy : precision_policies()) {
    names.push_back(policy.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

Precision preset_or_fail(const ConfigNode& node) {
  const std::string name = node.as_string();
  auto preset = precision_preset(name);
  if (!preset) {
    node.fail(fmt::format("no precision policy '{}' (policies: {})", name, policy_names()));
  }
  return *preset;
}

}  // namespace

const std::vector<PrecisionPolicy>& precision_policies() {
  using enum DType;
  static const std::vector<PrecisionPolicy> kPolicies{
      {"bf16", bf16, bf16, bf16, bf16, "bf16", "bf16 everywhere"},
      {"fp16", fp16, fp16, fp16, fp16, "fp16", "fp16 everywhere"},
      {"int8_weights", int8, bf16, bf16, bf16, "bf16",
       "int8 weights dequantized in the kernel; bf16 activations and compute"},
      {"int8", int8, int8, int8, int8, "int8", "int8 weights and activations on the int8 path"},
      {"fp8", fp8, fp8, fp8, fp8, "fp8", "fp8 (e4m3) weights and activations on the fp8 path"},
      {"fp4", mxfp4, mxfp4, mxfp4, fp8, "fp4",
       "MXFP4 (one 8-bit scale per 32 values) on the fp4 path; fp8 KV cache"},
      {"nvfp4", nvfp4, nvfp4, nvfp4, fp8, "fp4",
       "NVFP4 (one 8-bit scale per 16 values) on the fp4 path; fp8 KV cache"},
      {"int4_weights", int4, bf16, bf16, bf16, "bf16",
       "int4 weights (fp16 scale per 128) dequantized in the kernel; bf16 compute"},
  };
  return kPolicies;
}

std::optional<Precision> precision_preset(std::string_view name) {
  for (const PrecisionPolicy& policy : precision_policies()) {
    if (policy.name == name) {
      return Precision{std::string(policy.name),
                       policy.weights,
                       policy.activations,
                       policy.outputs,
                       policy.kv_cache,
                       std::string(policy.compute),
                       "",
                       "",
                       std::nullopt,
                       "",
                       std::nullopt};
    }
  }
  return std::nullopt;
}

Precision parse_precision(const ConfigNode& node, const HardwareSpec& hardware) {
  Precision precision;
  const ConfigNode* fallback = nullptr;
  const ConfigNode* compute_node = &node;
  if (node.kind() == ConfigNode::Kind::scalar) {
    precision = preset_or_fail(node);
  } else {
    node.allow_only({"policy", "weights", "activations", "outputs", "kv_cache", "compute",
                     "fallback", "attention", "lm_head", "gradients"});
    if (const ConfigNode* policy = node.find("policy")) {
      precision = preset_or_fail(*policy);
      compute_node = policy;
    } else {
      // Without a policy, the three defining choices are required; outputs and KV cache follow
      // the activations unless given.
      precision.weights = parse_dtype_node(node.at("weights"));
      precision.activations = parse_dtype_node(node.at("activations"));
      precision.outputs = precision.activations;
      precision.kv_cache = precision.activations;
      (void)node.at("compute");
    }
    const std::pair<const char*, DType*> fields[] = {{"weights", &precision.weights},
                                                     {"activations", &precision.activations},
                                                     {"outputs", &precision.outputs},
                                                     {"kv_cache", &precision.kv_cache}};
    bool customised = false;
    for (const auto& [key, field] : fields) {
      if (const ConfigNode* value = node.find(key)) {
        *field = parse_dtype_node(*value);
        customised = true;
      }
    }
    if (const ConfigNode* compute = node.find("compute")) {
      precision.compute = compute->as_string();
      compute_node = compute;
      customised = true;
    }
    if (const ConfigNode* attention = node.find("attention")) {
      precision.attention = attention->as_string();  // checked against the paths below
      customised = true;
    }
    if (const ConfigNode* gradients = node.find("gradients")) {
      precision.gradients = parse_dtype_node(*gradients);
      customised = true;
    }
    if (const ConfigNode* lm_head = node.find("lm_head")) {
      precision.lm_head = parse_dtype_node(*lm_head);
      customised = true;
    }
    if (customised) {
      precision.policy = node.find("policy") != nullptr ? precision.policy + "+" : "custom";
    }
    fallback = node.find("fallback");
  }
  std::vector<std::string> paths;
  bool known = false;
  for (const ComputePath& path : hardware.compute) {
    paths.push_back(path.name);
    known = known || path.name == precision.compute;
  }
  if (!precision.attention.empty() &&
      std::find(paths.begin(), paths.end(), precision.attention) == paths.end()) {
    node.at("attention")
        .fail(fmt::format("{} has no compute path '{}' for attention (it has: {})", hardware.name,
                          precision.attention, fmt::join(paths, ", ")));
  }
  if (precision.lm_head) {
    // A 16-bit (or 8-bit) head runs on the path of its own dtype where the hardware has one
    // (an NVFP4 model's FP16 head: Thor's FP16 tensor cores), else on the policy's.
    const std::string head_path(to_string(*precision.lm_head));
    if (head_path != precision.compute &&
        std::find(paths.begin(), paths.end(), head_path) != paths.end()) {
      precision.lm_head_compute = head_path;
    }
  }
  if (known) {
    return precision;
  }
  if (fallback == nullptr) {
    compute_node->fail(
        fmt::format("{} has no compute path '{}' (it has: {}); choose another precision or add "
                    "'fallback: PATH' to run the matmuls on another path",
                    hardware.name, precision.compute, fmt::join(paths, ", ")));
  }
  const std::string fallback_path = fallback->as_string();
  bool fallback_known = false;
  for (const ComputePath& path : hardware.compute) {
    fallback_known = fallback_known || path.name == fallback_path;
  }
  if (!fallback_known) {
    fallback->fail(fmt::format("{} has no compute path '{}' either (it has: {})", hardware.name,
                               fallback_path, fmt::join(paths, ", ")));
  }
  precision.requested_compute = precision.compute;
  precision.compute = fallback_path;
  return precision;
}

std::string describe(const Precision& precision) {
  std::string text =
      fmt::format("{}: weights {}, activations {}, outputs {}, kv_cache {}, compute {}",
                  precision.policy, to_string(precision.weights), to_string(precision.activations),
                  to_string(precision.outputs), to_string(precision.kv_cache), precision.compute);
  if (!precision.requested_compute.empty()) {
    text += fmt::format(" (fallback: the hardware has no {} path)", precision.requested_compute);
  }
  if (!precision.attention.empty()) {
    text += fmt::format(", attention {}", precision.attention);
  }
  if (precision.lm_head) {
    text += fmt::format(", lm_head {}", to_string(*precision.lm_head));
  }
  if (precision.gradients) {
    text += fmt::format(", gradients {}", to_string(*precision.gradients));
  }
  return text;
}

}  // namespace rsim
