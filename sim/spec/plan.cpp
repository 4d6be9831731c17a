// SPDX-License-Identifier: MIT
#include "sim/spec/plan.hpp"

#include "sim/spec/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace rsim {
namespace {

std::string tier_names(const HardwareSpec& hardware) {
  std::vector<std::string> names;
  for (const NetworkTier& candidate : hardware.network) {
    names.push_back(candidate.name);
  }
  return names.empty() ? std::string("none; it is a single device")
                       : fmt::format("{}", fmt::join(names, ", "));
}

const NetworkTier& find_tier(std::string_view name, const HardwareSpec& hardware) {
  for (const NetworkTier& candidate : hardware.network) {
    if (candidate.name == name) {
      return candidate;
    }
  }
  throw PlanError(PlanProblem::unknown_tier,
                  fmt::format("{} has no network tier '{}' (tiers: {})", hardware.name, name,
                              tier_names(hardware)));
}

// "8 over nvlink" → {8, "nvlink"}.
MeshAxis parse_mesh_axis(const ConfigNode::Entry& entry, const HardwareSpec& hardware) {
  const ConfigNode& node = entry.value;
  const std::string text = node.as_string();
  const std::size_t over = text.find(" over ");
  std::int64_t size = 0;
  if (over != std::string::npos) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + over, size);
    if (error != std::errc{} || end != text.data() + over) {
      size = 0;
    }
  }
  if (size < 1) {
    node.fail(fmt::format("expected \"N over TIER\" (e.g. \"8 over nvlink\"), got \"{}\"", text));
  }
  MeshAxis axis{entry.key, size, text.substr(over + 6)};
  try {
    // A file's axis of one device names real tiers too ("1 over bogus" passed silently); the
    // search's own one-device axes are checked by size alone.
    for (std::string_view rest = axis.network; !rest.empty();) {
      const std::size_t plus = rest.find('+');
      (void)find_tier(rest.substr(0, plus), hardware);
      rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
    }
    check_mesh_axis(axis, hardware);
  } catch (const PlanError& error) {
    node.fail(error.what());
  }
  return axis;
}

std::vector<std::pair<std::string, std::string>> parse_rules(const ConfigNode& node,
                                                             const Plan& plan) {
  std::vector<std::pair<std::string, std::string>> rules;
  // A rule for an axis no tensor carries ("head" for "heads") would shard nothing, silently.
  static const std::vector<std::string_view> kLogicalAxes{
      logical_axis::batch, logical_axis::seq,      logical_axis::embed,
      logical_axis::heads, logical_axis::kv_heads, logical_axis::mlp,
      logical_axis::vocab, logical_axis::experts,  logical_axis::layers};
  for (const ConfigNode::Entry& entry : node.entries()) {
    if (std::find(kLogicalAxes.begin(), kLogicalAxes.end(), entry.key) == kLogicalAxes.end()) {
      throw ConfigError(entry.key_mark, fmt::format("'{}' is no logical axis (axes: {})", entry.key,
                                                    fmt::join(kLogicalAxes, ", ")));
    }
    if (entry.value.kind() == ConfigNode::Kind::null) {
      rules.emplace_back(entry.key, "");  // explicitly replicated
      continue;
    }
    const std::string mesh_axis = entry.value.as_string();
    if (plan.find_axis(mesh_axis) == nullptr) {
      entry.value.fail(fmt::format("no mesh axis '{}' in 'mesh'", mesh_axis));
    }
    rules.emplace_back(entry.key, mesh_axis);
  }
  return rules;
}

const PlanPreset* find_preset(std::string_view name) {
  for (const PlanPreset& preset : plan_presets()) {
    if (preset.name == name) {
      return &preset;
    }
  }
  return nullptr;
}

std::string preset_names() {
  std::vector<std::string_view> names;
  for (const PlanPreset& preset : plan_presets()) {
    names.push_back(preset.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::string_view to_string(PlanProblem problem) {
  switch (problem) {
    case PlanProblem::unknown_tier:
      return "names no network tier of the hardware";
    case PlanProblem::uneven_hierarchy:
      return "hierarchy does not split evenly";
    case PlanProblem::exceeds_domain:
      return "mesh exceeds a network domain";
    case PlanProblem::unknown_preset:
      return "no such plan preset";
    case PlanProblem::missing_mesh_axis:
      return "a rule names a mesh axis the mesh lacks";
    case PlanProblem::zero_stage:
      return "ZeRO stage not possible";
    case PlanProblem::does_not_divide:
      return "does not divide the model";
  }
  return "invalid plan";
}

PlanError::PlanError(PlanProblem problem, const std::string& message)
    : InputError(message), problem_(problem) {}

void check_mesh_axis(const MeshAxis& axis, const HardwareSpec& hardware) {
  // "8 over ", "8 over nvlink+": a tier name left out (issue 23: an internal error later).
  const std::string_view network = axis.network;
  if (axis.size > 1 && (network.empty() || network.front() == '+' || network.back() == '+' ||
                        network.find("++") != std::string_view::npos)) {
    throw PlanError(PlanProblem::unknown_tier,
                    fmt::format("'{}' names no network tier after 'over' (tiers: {})", axis.network,
                                tier_names(hardware)));
  }
  // "nvlink+ib": a hierarchy, innermost first; each inner tier holds whole groups of the axis.
  std::string_view rest = axis.network;
  std::int64_t remaining = axis.size;
  while (axis.size > 1 && !rest.empty()) {
    const std::size_t plus = rest.find('+');
    const NetworkTier* tier = &find_tier(rest.substr(0, plus), hardware);
    rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
    if (!rest.empty() && tier->devices > 0) {
      const std::int64_t group = std::min(remaining, tier->devices);
      if (remaining % group != 0) {
        throw PlanError(PlanProblem::uneven_hierarchy,
                        fmt::format("{} devices do not split into groups of {} on {}", remaining,
                                    group, tier->name));
      }
      remaining /= group;
    }
  }
}

// Tiers carry a domain (8 GPUs on NVLink, 256 v5e chips on ICI): the axes over one tier must fit.
void check_domains(const Plan& plan, const HardwareSpec& hardware) {
  for (const NetworkTier& tier : hardware.network) {
    std::int64_t devices = 1;
    for (const MeshAxis& axis : plan.mesh) {
      // A hierarchical axis ("nvlink+ib") was checked against its inner domains on its own.
      devices *= axis.network == tier.name ? axis.size : 1;
    }
    if (tier.devices > 0 && devices > tier.devices) {
      throw PlanError(PlanProblem::exceeds_domain,
                      fmt::format("the mesh puts {} devices on {}, whose domain is {} devices",
                                  devices, tier.name, tier.devices));
    }
  }
}

std::int64_t Plan::devices() const {
  std::int64_t count = 1;
  for (const MeshAxis& axis : mesh) {
    count *= axis.size;
  }
  return count;
}

const MeshAxis* Plan::find_axis(std::string_view axis_name) const {
  for (const MeshAxis& axis : mesh) {
    if (axis.name == axis_name) {
      return &axis;
    }
  }
  return nullptr;
}

std::optional<std::string> Plan::mesh_axis_for(std::string_view logical, bool weight) const {
  if (weight) {
    for (const auto& [rule_axis, axis] : weight_rules) {
      if (rule_axis == logical) {
        return axis.empty() ? std::nullopt : std::optional<std::string>(axis);
      }
    }
  }
  for (const auto& [rule_axis, axis] : rules) {
    if (rule_axis == logical) {
      return axis.empty() ? std::nullopt : std::optional<std::string>(axis);
    }
  }
  return std::nullopt;
}

namespace {

// Rule lists the presets share, in the order they take mesh axes (earlier rules win one).
Rules concat(std::initializer_list<Rules> parts) {
  Rules result;
  for (const Rules& part : parts) {
    result.insert(result.end(), part.begin(), part.end());
  }
  return result;
}

}  // namespace

const std::vector<PlanPreset>& plan_presets() {
  const Rules data{{"batch", "data"}};
  const Rules stages{{"layers", "stage"}};
  const Rules sequence{{"seq", "model"}};
  // Megatron-LM: column-parallel Q/KV and gate/up (heads, mlp sharded), row-parallel o_proj
  // and down_proj (contracting heads / mlp sharded → all-reduce); the LM head by vocab.
  const Rules tensor{{"heads", "model"},
                     {"kv_heads", "model"},
                     {"group", "model"},
                     {"mlp", "model"},
                     {"vocab", "model"}};
  // FSDP / ZeRO-3: each weight's embed axis stored split over 'data', gathered before use.
  const Rules stored_over_data{{"embed", "data"}};
  static const std::vector<PlanPreset> kPresets{
      {"single", "one device", {}, {}},
      {"data_parallel", "sequences split over 'data'; weights replicated", data, {}},
      {"megatron_tp", "Megatron tensor parallel over 'model' (heads, mlp, vocab)", tensor, {}},
      // Megatron sequence parallelism: norms and residuals shard the sequence; the all-reduces
      // become reduce-scatter + all-gather (rule order: heads and mlp before seq).
      {"sequence_parallel",
       "Megatron tensor + sequence parallel over 'model'",
       concat({tensor, sequence}),
       {}},
      {"megatron_tp_dp",
       "Megatron tensor parallel over 'model', data parallel over 'data'",
       concat({data, tensor}),
       {}},
      {"pipeline", "pipeline stages of L/p layers over 'stage'", stages, {}},
      {"pipeline_tp",
       "Megatron tensor parallel over 'model', pipeline stages of L/p layers over 'stage'",
       concat({stages, tensor}),
       {}},
      {"pipeline_dp",
       "pipeline stages of L/p layers over 'stage', data parallel over 'data'",
       concat({data, stages}),
       {}},
      {"fsdp", "sequences and weights split over 'data'", data, stored_over_data},
      // FSDP + TP (scaling book training.md): Megatron TP over 'model', sequences over 'data',
      // and each weight's embed axis stored split over 'data' too (gathered before use).
      {"fsdp_tp", "Megatron tensor parallel over 'model', sequences and weight storage over 'data'",
       concat({data, tensor}), stored_over_data},
      {"shard_d",
       "the model width (contracting embed axis) split over 'model'",
       {{"embed", "model"}},
       {}},
      {"shard_batch", "sequences split over 'model'", {{"batch", "model"}}, {}},
      // 3D parallelism for training (Narayanan et al. 2021, "Efficient Large-Scale Language
      // Model Training on GPU Clusters Using Megatron-LM", §2-3): Megatron tensor parallelism
      // over 'model', pipeline stages of L/p layers over 'stage', data parallelism over 'data'
      // (weights replicated, gradients all-reduced once per step).
      {"megatron_3d",
       "Megatron tensor parallel over 'model', pipeline stages over 'stage', data parallel "
       "over 'data'",
       concat({data, stages, tensor}),
       {}},
      // The same with Megatron sequence parallelism on 'model' (Korthikanti et al. 2022, §4.2.2).
      {"megatron_3d_sp",
       "megatron_3d with sequence parallelism on 'model'",
       concat({data, stages, tensor, sequence}),
       {}},
      // megatron_3d with the weights (and so their gradients and optimizer state) also sharded
      // over 'data' on their embed axis: ZeRO-3 / FSDP across the data-parallel replicas
      // (Rajbhandari et al. 2020, §5.3), gathered before use, gradients reduce-scattered.
      {"zero3_3d",
       "megatron_3d with weights, gradients and optimizer state sharded over 'data' (ZeRO-3)",
       concat({data, stages, tensor}), stored_over_data},
      {"zero3_3d_sp", "zero3_3d with sequence parallelism on 'model'",
       concat({data, stages, tensor, sequence}), stored_over_data},
      // Expert parallelism (GShard, DeepSpeed-MoE): each device holds E/N experts and the
      // tokens of B/N sequences (attention is data parallel); the dispatch and the combine of
      // each MoE block are all-to-alls over 'expert' (scaling book: two AllToAlls per block).
      {"expert_parallel",
       "experts and sequences split over 'expert' (MoE: two all-to-alls per block)",
       {{"batch", "expert"}, {"experts", "expert"}},
       {}},
  };
  return kPresets;
}

namespace {

// Explicit rules override the preset's, key by key.
void merge_rules(Rules& into, const Rules& from) {
  for (const auto& rule : from) {
    bool replaced = false;
    for (auto& existing : into) {
      if (existing.first == rule.first) {
        existing.second = rule.second;
        replaced = true;
      }
    }
    if (!replaced) {
      into.push_back(rule);
    }
  }
}

// The preset's rules on the plan's mesh.
void apply_preset(Plan& plan, const PlanPreset& preset) {
  plan.name = std::string(preset.name);
  plan.rules = preset.rules;
  plan.weight_rules = preset.weight_rules;
  // A one-axis preset on a one-axis mesh shards over that axis whatever it is called.
  std::vector<std::string> preset_axes;
  for (const auto* rules : {&plan.rules, &plan.weight_rules}) {
    for (const auto& rule : *rules) {
      if (std::find(preset_axes.begin(), preset_axes.end(), rule.second) == preset_axes.end()) {
        preset_axes.push_back(rule.second);
      }
    }
  }
  const bool rename = plan.mesh.size() == 1 && preset_axes.size() == 1;
  for (auto* rules : {&plan.rules, &plan.weight_rules}) {
    for (auto& [logical, axis] : *rules) {
      if (rename) {
        axis = plan.mesh.front().name;
      }
      if (plan.find_axis(axis) == nullptr) {
        throw PlanError(
            PlanProblem::missing_mesh_axis,
            fmt::format("preset '{}' shards '{}' over mesh axis '{}', which the mesh lacks",
                        preset.name, logical, axis));
      }
    }
  }
}

void check_zero_stage(const Plan& plan) {
  if (plan.zero_stage == 3) {
    throw PlanError(PlanProblem::zero_stage,
                    "ZeRO-3 shards the weights themselves: use weight_rules {embed: data} "
                    "(presets fsdp, fsdp_tp, zero3_3d)");
  }
  if (plan.zero_stage > 2) {
    throw PlanError(
        PlanProblem::zero_stage,
        "expected 0, 1 (optimizer state sharded over the data axis) or 2 (and gradients)");
  }
  if (plan.zero_stage > 0 && !plan.data_axis()) {
    throw PlanError(PlanProblem::zero_stage,
                    "ZeRO shards over the data-parallel axis: the plan needs a 'batch' rule");
  }
}

void check_rule_axes(const Plan& plan) {
  for (const auto* rules : {&plan.rules, &plan.weight_rules}) {
    for (const auto& [logical, axis] : *rules) {
      if (!axis.empty() && plan.find_axis(axis) == nullptr) {
        throw PlanError(PlanProblem::missing_mesh_axis,
                        fmt::format("rule '{}' names no mesh axis '{}' in 'mesh'", logical, axis));
      }
    }
  }
}

}  // namespace

void validate_plan(const Plan& plan, const HardwareSpec& hardware) {
  for (const MeshAxis& axis : plan.mesh) {
    check_mesh_axis(axis, hardware);
  }
  check_domains(plan, hardware);
  check_rule_axes(plan);
  check_zero_stage(plan);
}

Plan make_plan(std::string_view preset_name, std::vector<MeshAxis> mesh,
               const HardwareSpec& hardware, const Rules& rules, std::int64_t zero_stage) {
  Plan plan;
  plan.mesh = std::move(mesh);
  const PlanPreset* preset = find_preset(preset_name);
  if (preset == nullptr) {
    throw PlanError(PlanProblem::unknown_preset,
                    fmt::format("no plan preset '{}' (presets: {})", preset_name, preset_names()));
  }
  apply_preset(plan, *preset);
  if (!rules.empty()) {
    merge_rules(plan.rules, rules);
    plan.name += "+";
  }
  plan.zero_stage = zero_stage;
  validate_plan(plan, hardware);
  return plan;
}

Plan parse_plan(const ConfigNode& node, const HardwareSpec& hardware) {
  Plan plan;
  if (node.kind() == ConfigNode::Kind::scalar) {
    if (node.as_string() != "single") {
      node.fail(
          fmt::format("a preset over several devices needs a mesh: write "
                      "{{preset: {}, mesh: {{model: \"8 over nvlink\"}}}}",
                      node.as_string()));
    }
    return plan;
  }
  node.allow_only({"preset", "mesh", "rules", "weight_rules", "in_network_reduction", "zero_stage",
                   "vocab_padding"});
  plan.written_at = node.mark();
  if (const ConfigNode* reduction = node.find("in_network_reduction")) {
    plan.in_network_reduction = reduction->as_bool();
  }
  for (const ConfigNode::Entry& entry : node.at("mesh").entries()) {
    if (plan.find_axis(entry.key) != nullptr) {
      throw ConfigError(entry.key_mark, fmt::format("mesh axis '{}' appears twice", entry.key));
    }
    plan.mesh.push_back(parse_mesh_axis(entry, hardware));
  }
  std::int64_t devices = 1;
  for (const MeshAxis& axis : plan.mesh) {
    if (__builtin_mul_overflow(devices, axis.size, &devices) || devices > kMaxMeshDevices) {
      node.at("mesh").fail(
          fmt::format("the mesh axes multiply to more than {} devices", kMaxMeshDevices));
    }
  }
  try {
    check_domains(plan, hardware);
  } catch (const PlanError& error) {
    node.at("mesh").fail(error.what());
  }
  plan.name = "custom";
  if (const ConfigNode* preset_node = node.find("preset")) {
    const PlanPreset* preset = find_preset(preset_node->as_string());
    if (preset == nullptr) {
      preset_node->fail(fmt::format("no plan preset '{}' (presets: {})", preset_node->as_string(),
                                    preset_names()));
    }
    try {
      apply_preset(plan, *preset);
    } catch (const PlanError& error) {
      preset_node->fail(error.what());
    }
  }
  if (const ConfigNode* rules = node.find("rules")) {
    merge_rules(plan.rules, parse_rules(*rules, plan));
    plan.name = node.find("preset") != nullptr ? plan.name + "+" : "custom";
  }
  if (const ConfigNode* rules = node.find("weight_rules")) {
    merge_rules(plan.weight_rules, parse_rules(*rules, plan));
    plan.name = node.find("preset") != nullptr ? plan.name + "+" : "custom";
  }
  if (const ConfigNode* padding = node.find("vocab_padding")) {
    plan.vocab_padding = padding->as_positive_int();
  }
  if (const ConfigNode* zero = node.find("zero_stage")) {
    plan.zero_stage = zero->as_count();
    try {
      check_zero_stage(plan);
    } catch (const PlanError& error) {
      zero->fail(error.what());
    }
  }
  return plan;
}

std::int64_t padded_vocab(const Plan& plan, std::int64_t vocab_size) {
  if (plan.vocab_padding <= 0 || vocab_size <= 0) {
    return vocab_size;
  }
  const std::optional<std::string> axis = plan.mesh_axis_for(logical_axis::vocab, false);
  const std::int64_t devices = axis ? plan.find_axis(*axis)->size : 1;
  const std::int64_t multiple = plan.vocab_padding * devices;
  return (vocab_size + multiple - 1) / multiple * multiple;
}

}  // namespace rsim
