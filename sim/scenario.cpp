// SPDX-License-Identifier: MIT
#include "sim/scenario.hpp"

#include "sim/config.hpp"
#include "sim/error.hpp"
#include "sim/presets.hpp"

#include <fmt/format.h>

#include <array>

namespace rsim {
namespace {

struct KindName {
  ElementwiseKind kind;
  std::string_view name;
};
constexpr std::array kElementwiseKinds{
    KindName{ElementwiseKind::norm, "norm"},
    KindName{ElementwiseKind::activation, "activation"},
    KindName{ElementwiseKind::residual, "residual"},
    KindName{ElementwiseKind::rope, "rope"},
    KindName{ElementwiseKind::embedding, "embedding"},
    KindName{ElementwiseKind::softmax, "softmax"},
};

DType parse_dtype_node(const ConfigNode& node) {
  const std::string name = node.as_string();
  const auto dtype = parse_dtype(name);
  if (!dtype) {
    node.fail(
        fmt::format("expected a dtype ({}); got \"{}\"", fmt::join(dtype_names(), ", "), name));
  }
  return *dtype;
}

// A preset reference: resolution failures point at the key that named the preset.
std::filesystem::path resolve_node(const ConfigNode& node, std::string_view kind) {
  try {
    return find_preset(node.as_string(), kind, node.mark().file);
  } catch (const ConfigError&) {
    throw;
  } catch (const InputError& error) {
    node.fail(error.what());
  }
}

Precision parse_precision(const ConfigNode& node, const HardwareSpec& hardware) {
  node.allow_only({"weights", "activations", "outputs", "kv_cache", "compute"});
  Precision precision;
  precision.weights = parse_dtype_node(node.at("weights"));
  precision.activations = parse_dtype_node(node.at("activations"));
  precision.outputs = precision.activations;
  precision.kv_cache = precision.activations;
  if (const ConfigNode* outputs = node.find("outputs")) {
    precision.outputs = parse_dtype_node(*outputs);
  }
  if (const ConfigNode* kv_cache = node.find("kv_cache")) {
    precision.kv_cache = parse_dtype_node(*kv_cache);
  }
  const ConfigNode& compute = node.at("compute");
  precision.compute = compute.as_string();
  std::vector<std::string> paths;
  bool known = false;
  for (const ComputePath& path : hardware.compute) {
    paths.push_back(path.name);
    known = known || path.name == precision.compute;
  }
  if (!known) {
    compute.fail(fmt::format("{} has no compute path '{}' (it has: {})", hardware.name,
                             precision.compute, fmt::join(paths, ", ")));
  }
  return precision;
}

Fusion parse_fusion(const ConfigNode& node) {
  node.allow_only({"attention", "into_matmul"});
  Fusion fusion;
  fusion.attention_fused = node.at("attention").as_choice({"fused", "unfused"}) == "fused";
  for (const ConfigNode& item : node.at("into_matmul").items()) {
    const std::string name = item.as_string();
    bool known = false;
    for (const KindName& entry : kElementwiseKinds) {
      if (entry.name == name) {
        fusion.into_matmul.push_back(entry.kind);
        known = true;
      }
    }
    if (!known) {
      std::vector<std::string_view> names;
      for (const KindName& entry : kElementwiseKinds) {
        names.push_back(entry.name);
      }
      item.fail(fmt::format("expected one of: {}; got \"{}\"", fmt::join(names, ", "), name));
    }
  }
  return fusion;
}

Workload parse_workload(const ConfigNode& node, ModelSpec& model) {
  node.allow_only({"phase", "batch", "seq_len", "lm_head"});
  Workload workload;
  workload.phase = node.at("phase").as_choice({"prefill"});
  workload.batch = node.at("batch").as_positive_int();
  if (model.composite) {
    for (std::string_view key : {"seq_len", "lm_head"}) {
      if (const ConfigNode* fixed = node.find(key)) {
        fixed->fail(
            fmt::format("'{}' is a composite model whose stages fix their own lengths and "
                        "heads (see {}); remove '{}'",
                        model.name, model.file, key));
      }
    }
    return workload;
  }
  StageSpec& stage = model.stages.front();
  if (stage.component.vision) {
    if (const ConfigNode* seq_len = node.find("seq_len")) {
      seq_len->fail(
          fmt::format("a vision model has {} tokens per image; remove 'seq_len'", stage.tokens));
    }
    return workload;
  }
  workload.seq_len = node.at("seq_len").as_positive_int();
  stage.tokens = workload.seq_len;
  stage.embedded_tokens = stage.component.vocab_size > 0 ? workload.seq_len : 0;
  // A prefill computes logits for the last token of each sequence (the next token to sample).
  stage.lm_head = stage.component.vocab_size > 0 ? LmHead::last_token : LmHead::none;
  if (const ConfigNode* lm_head = node.find("lm_head")) {
    const std::string rows = lm_head->as_choice({"none", "last", "all"});
    stage.lm_head = rows == "none"   ? LmHead::none
                    : rows == "last" ? LmHead::last_token
                                     : LmHead::all_tokens;
    if (stage.lm_head != LmHead::none && stage.component.vocab_size == 0) {
      lm_head->fail("the model has no vocabulary (vocab_size 0)");
    }
  }
  return workload;
}

std::vector<Reference> parse_references(const ConfigNode& node, const ModelSpec& model) {
  std::vector<Reference> references;
  for (const ConfigNode& item : node.items()) {
    item.allow_only({"stage", "time", "source"});
    Reference reference;
    if (const ConfigNode* stage = item.find("stage")) {
      reference.stage = stage->as_string();
      if (model.find_stage(reference.stage) == nullptr) {
        stage->fail(fmt::format("model '{}' has no stage '{}'", model.name, reference.stage));
      }
    }
    reference.time = Seconds(item.at("time").as_quantity(Dimension::seconds));
    reference.source = item.at("source").as_string();
    references.push_back(std::move(reference));
  }
  return references;
}

}  // namespace

std::string_view to_string(ElementwiseKind kind) {
  for (const KindName& entry : kElementwiseKinds) {
    if (entry.kind == kind) {
      return entry.name;
    }
  }
  return "unknown";
}

bool Fusion::is_fused(ElementwiseKind kind) const {
  for (ElementwiseKind fused : into_matmul) {
    if (fused == kind) {
      return true;
    }
  }
  return false;
}

Scenario load_scenario(const std::filesystem::path& path, const ScenarioOverrides& overrides) {
  ConfigNode document = load_config_file(path);
  for (const auto& [key, value] : overrides.sets) {
    document.set_path(key, value, SourceMark{"--set " + key, 0, 0});
  }
  document.allow_only(
      {"name", "hardware", "mode", "model", "workload", "precision", "fusion", "reference"});
  Scenario scenario;
  scenario.file = path.string();
  scenario.name = document.at("name").as_string();
  scenario.hardware = load_hardware(resolve_node(document.at("hardware"), "hardware"));
  scenario.mode = scenario.hardware.default_mode;
  if (const ConfigNode* mode = document.find("mode")) {
    scenario.mode = mode->as_string();
    bool known = false;
    std::vector<std::string> names;
    for (const HardwareMode& candidate : scenario.hardware.modes) {
      known = known || candidate.name == scenario.mode;
      names.push_back(candidate.name);
    }
    if (!known) {
      mode->fail(fmt::format("{} has no mode '{}' (modes: {})", scenario.hardware.name,
                             scenario.mode, fmt::join(names, ", ")));
    }
  }
  const ConfigNode& model_node = document.at("model");
  try {
    scenario.model = load_model(resolve_node(model_node, "models"), find_preset);
  } catch (const ConfigError&) {
    throw;
  } catch (const InputError& error) {
    model_node.fail(error.what());
  }
  scenario.workload = parse_workload(document.at("workload"), scenario.model);
  scenario.precision = parse_precision(document.at("precision"), scenario.hardware);
  scenario.fusion = parse_fusion(document.at("fusion"));
  if (const ConfigNode* references = document.find("reference")) {
    scenario.references = parse_references(*references, scenario.model);
  }
  return scenario;
}

}  // namespace rsim
