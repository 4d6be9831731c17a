// SPDX-License-Identifier: MIT
#include "sim/spec/scenario.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/efficiency.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/presets.hpp"
#include "sim/spec/workload.hpp"

#include <fmt/format.h>

#include <array>
#include <tuple>

namespace rsim {
namespace {

constexpr std::array kElementwiseKinds{
    Named<ElementwiseKind>{ElementwiseKind::norm, "norm"},
    Named<ElementwiseKind>{ElementwiseKind::activation, "activation"},
    Named<ElementwiseKind>{ElementwiseKind::residual, "residual"},
    Named<ElementwiseKind>{ElementwiseKind::rope, "rope"},
    Named<ElementwiseKind>{ElementwiseKind::embedding, "embedding"},
    Named<ElementwiseKind>{ElementwiseKind::softmax, "softmax"},
    Named<ElementwiseKind>{ElementwiseKind::routing, "routing"},
    Named<ElementwiseKind>{ElementwiseKind::optimizer, "optimizer"},
    Named<ElementwiseKind>{ElementwiseKind::quantize, "quantize"},
    Named<ElementwiseKind>{ElementwiseKind::dropout, "dropout"},
    Named<ElementwiseKind>{ElementwiseKind::loss, "loss"},
    Named<ElementwiseKind>{ElementwiseKind::layout, "layout"},
};

constexpr std::array kAttentionKernels{
    Named<AttentionKernels>{AttentionKernels::fused, "fused"},
    Named<AttentionKernels>{AttentionKernels::unfused, "unfused"},
    Named<AttentionKernels>{AttentionKernels::eager, "eager"},
};

constexpr std::array kLossKernels{
    Named<LossKernels>{LossKernels::single_pass, "single_pass"},
    Named<LossKernels>{LossKernels::torch, "torch"},
    Named<LossKernels>{LossKernels::megatron, "megatron"},
};

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

Fusion parse_fusion(const ConfigNode& node) {
  node.allow_only({"attention", "into_matmul", "loss"});
  Fusion fusion;
  fusion.attention = parse_named(node.at("attention"), kAttentionKernels);
  for (const ConfigNode& item : node.at("into_matmul").items()) {
    fusion.into_matmul.push_back(parse_named(item, kElementwiseKinds));
    if (fusion.into_matmul.back() == ElementwiseKind::optimizer) {
      item.fail(
          "the optimizer step reads and writes every parameter; it is not fused into a matmul");
    }
  }
  if (const ConfigNode* loss = node.find("loss")) {
    fusion.loss = parse_named(*loss, kLossKernels);
  }
  return fusion;
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

void set_decode_step(StageSpec& stage, std::int64_t context) {
  stage.tokens = 1;
  stage.embedded_tokens = 1;
  stage.context = context;
  stage.writes_kv_cache = true;  // the new token's K and V join the cache
  stage.lm_head = LmHead::last_token;
}

std::string_view to_string(ElementwiseKind kind) { return name_of(kind, kElementwiseKinds); }

std::string_view to_string(LossKernels kernels) { return name_of(kernels, kLossKernels); }

std::string_view to_string(AttentionKernels kernels) { return name_of(kernels, kAttentionKernels); }

bool Fusion::is_fused(ElementwiseKind kind) const {
  for (ElementwiseKind fused : into_matmul) {
    if (fused == kind) {
      return true;
    }
  }
  return false;
}

namespace {

// A mesh axis that splits the experts must divide E (every device holds E / N of them); the
// error points at that axis of the mesh.
void check_expert_axis(const ConfigNode& node, const Plan& plan, const ModelSpec& model) {
  for (const bool weight : {true, false}) {
    const auto mesh_name = plan.mesh_axis_for(logical_axis::experts, weight);
    const MeshAxis* mesh = mesh_name ? plan.find_axis(*mesh_name) : nullptr;
    for (const StageSpec& stage : model.stages) {
      const std::int64_t experts = stage.component.num_experts;
      if (mesh == nullptr || experts == 0 || experts % mesh->size == 0) {
        continue;
      }
      const ConfigNode* mesh_node = node.find("mesh");
      const ConfigNode* axis_node = mesh_node != nullptr ? mesh_node->find(mesh->name) : nullptr;
      (axis_node != nullptr ? *axis_node : node)
          .fail(fmt::format("plan '{}' shards the experts over mesh axis '{}' ({} devices), which "
                            "does not divide the {} experts (num_local_experts) of '{}'; expected "
                            "a size that divides {}",
                            plan.name, mesh->name, mesh->size, experts, stage.component.name,
                            experts));
    }
  }
}

std::vector<std::string> parse_per_batch_weights(const ConfigNode& node) {
  std::vector<std::string> groups;
  for (const ConfigNode& item : node.items()) {
    const std::string group = item.as_string();
    if (group == "experts") {
      item.fail(
          "the expert matmuls run on rows gathered from every sequence: per-sequence weights do "
          "not apply to them");
    }
    bool known = false;
    for (std::string_view candidate : matmul_groups()) {
      known = known || candidate == group;
    }
    if (!known) {
      item.fail(fmt::format("no matmul group '{}' (groups: {})", group,
                            fmt::join(matmul_groups(), ", ")));
    }
    groups.push_back(group);
  }
  return groups;
}

Tile parse_tile_node(const ConfigNode& node) {
  node.allow_only({"bm", "bn", "bk"});
  return Tile{node.at("bm").as_positive_int(), node.at("bn").as_positive_int(),
              node.at("bk").as_positive_int()};
}

// `tiles: {bm, bn, bk}` (the kernel's tier: smem or vmem) or `tiles: {TIER: {bm, bn, bk}, ...}`.
TileChoices parse_tiles(const ConfigNode& node, const HardwareSpec& hardware) {
  TileChoices tiles;
  const SourceMark& mark = node.mark();
  tiles.origin = fmt::format("{}:{}:{}", mark.file, mark.line, mark.column);
  if (node.find("bm") != nullptr) {
    const std::string tier = kernel_tile_tier(hardware.memory);
    if (tier.empty()) {
      node.fail(
          fmt::format("{} has no smem or vmem tier: name the tier, tiles: {{TIER: {{bm, "
                      "bn, bk}}}}",
                      hardware.name));
    }
    tiles.by_tier.emplace_back(tier, parse_tile_node(node));
  } else {
    for (const ConfigNode::Entry& entry : node.entries()) {
      tiles.by_tier.emplace_back(entry.key, parse_tile_node(entry.value));
    }
  }
  try {
    check_tile_tiers(tiles, hardware.memory, hardware.name);
  } catch (const InputError& error) {
    node.fail(error.what());
  }
  return tiles;
}

// The declared variants: a list of maps with unique names and known keys.
std::vector<std::string> variant_names(const ConfigNode* variants) {
  std::vector<std::string> names;
  if (variants == nullptr) {
    return names;
  }
  for (const ConfigNode& variant : variants->items()) {
    variant.allow_only({"name", "precision", "mode", "hardware", "model", "batch", "fusion",
                        "per_batch_weights", "plan", "tiles", "peaks", "bandwidths", "set"});
    const ConfigNode& name = variant.at("name");
    for (const std::string& existing : names) {
      if (existing == name.as_string()) {
        name.fail(fmt::format("a variant named '{}' already exists", existing));
      }
    }
    names.push_back(name.as_string());
  }
  return names;
}

// A variant replaces whole top-level keys (precision, mode, hardware, fusion,
// per_batch_weights), sets workload.batch, and applies its `set` map of dotted paths.
void apply_variant(ConfigNode& document, const ConfigNode& variant) {
  for (const ConfigNode::Entry& entry : variant.entries()) {
    if (entry.key == "precision" || entry.key == "mode" || entry.key == "hardware" ||
        entry.key == "fusion" || entry.key == "per_batch_weights" || entry.key == "plan" ||
        entry.key == "model" || entry.key == "tiles") {
      document.set_entry(entry.key, entry.key_mark, entry.value);
    } else if (entry.key == "batch") {
      document.set_path("workload.batch", entry.value.as_string(), entry.value.mark());
    } else if (entry.key == "set") {
      for (const ConfigNode::Entry& assignment : entry.value.entries()) {
        document.set_path(assignment.key, assignment.value.as_string(), assignment.value.mark());
      }
    }
  }
}

const ConfigNode* find_variant(const ConfigNode* variants, const std::string& name) {
  if (variants != nullptr) {
    for (const ConfigNode& variant : variants->items()) {
      if (variant.at("name").as_string() == name) {
        return &variant;
      }
    }
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string_view>& matmul_groups() {
  static const std::vector<std::string_view> kGroups{
      "attention",        "mlp",    "modulation", "dense", "patch_embed", "lm_head",
      "attention_scores", "router", "experts"};
  return kGroups;
}

void pad_vocabulary(Scenario& scenario) {
  for (StageSpec& stage : scenario.model.stages) {
    TransformerSpec& component = stage.component;
    if (component.unpadded_vocab_size == 0) {
      component.unpadded_vocab_size = component.vocab_size;
    }
    component.vocab_size = padded_vocab(scenario.plan, component.unpadded_vocab_size);
  }
}

namespace {

// A scenario file's top-level keys.
void allow_scenario_keys(const ConfigNode& document) {
  document.allow_only({"name", "hardware", "calibration", "mode", "model", "workload", "precision",
                       "fusion", "per_batch_weights", "plan", "tiles", "host_share", "reference",
                       "sweep", "variants", "scheduler", "speculative", "slo", "disaggregated"});
}

// What a scenario may leave out (docs/yaml.md "Scenario"): its name (the file's stem), bf16
// weights, activations and compute, and the fusion serving engines run (FlashAttention, and the
// activation, residual add and RoPE in the matmuls' epilogues, as vLLM's and TensorRT-LLM's
// fused kernels do). The plan defaults to one device where it is read.
void add_defaults(ConfigNode& document, const std::filesystem::path& path) {
  const SourceMark mark{path.string() + " (a default)", 0, 0};
  const std::pair<const char*, std::string> defaults[] = {
      {"name", path.stem().string()},
      {"precision", "bf16"},
      {"fusion", "{attention: fused, into_matmul: [activation, residual, rope]}"}};
  for (const auto& [key, text] : defaults) {
    if (document.find(key) == nullptr) {
      document.set_path(key, text, mark);
    }
  }
}

// A disaggregated pool: a plan (as `plan:` is written) and `replicas:` of it (default 1).
std::pair<Plan, std::int64_t> parse_pool(const ConfigNode& node, const HardwareSpec& hardware) {
  if (node.kind() != ConfigNode::Kind::map) {
    return {parse_plan(node, hardware), 1};
  }
  ConfigNode plan(ConfigNode::Kind::map, node.mark(), node.path());
  std::int64_t replicas = 1;
  for (const ConfigNode::Entry& entry : node.entries()) {
    if (entry.key == "replicas") {
      replicas = entry.value.as_positive_int();
      if (replicas > 1024) {
        entry.value.fail("at most 1024 replicas in a pool");
      }
    } else {
      plan.add_entry(entry);
    }
  }
  return {parse_plan(plan, hardware), replicas};
}

// `phase: serve` with its `scheduler:`, `speculative:` and `slo:` (the draft model loads like the
// scenario's); those keys are refused on any other phase.
void parse_serving_keys(const ConfigNode& document, const ConfigNode& workload, Scenario& scenario,
                        ConfigFiles* files) {
  const ConfigNode* scheduler = document.find("scheduler");
  const ConfigNode* speculative = document.find("speculative");
  const ConfigNode* slo = document.find("slo");
  const ConfigNode* disaggregated = document.find("disaggregated");
  if (workload.at("phase").as_string() != "serve") {
    for (const ConfigNode* serve_only : {scheduler, speculative, slo, disaggregated}) {
      if (serve_only != nullptr) {
        serve_only->fail("is for a serving scenario (workload: {phase: serve, ...})");
      }
    }
    return;
  }
  scenario.serving = parse_serving(workload, scheduler, speculative, slo);
  if (speculative != nullptr) {
    const ConfigNode& draft = speculative->at("draft");
    try {
      scenario.serving->speculative->draft =
          load_model(resolve_node(draft, "models"), find_preset, files);
    } catch (const ConfigError&) {
      throw;
    } catch (const InputError& error) {
      draft.fail(error.what());
    }
    const ModelSpec& draft_model = scenario.serving->speculative->draft;
    if (draft_model.composite || !draft_model.stages.front().component.decoder) {
      draft.fail(fmt::format("the draft '{}' is not a single-stage decoder", draft_model.name));
    }
    set_decode_step(scenario.serving->speculative->draft.stages.front(), 1);
  }
  if (disaggregated != nullptr) {
    disaggregated->allow_only({"prefill", "decode", "transfer"});
    if (scenario.serving->arrivals.concurrency > 0) {
      disaggregated->fail(
          "disaggregated serving is simulated for an open loop: give workload.arrivals.rate");
    }
    if (scenario.hardware.network.empty()) {
      disaggregated->fail(
          fmt::format("{} has no network tier to move KV caches over", scenario.hardware.name));
    }
    Disaggregation pools;
    std::tie(pools.prefill, pools.prefill_replicas) =
        parse_pool(disaggregated->at("prefill"), scenario.hardware);
    std::tie(pools.decode, pools.decode_replicas) =
        parse_pool(disaggregated->at("decode"), scenario.hardware);
    // Between nodes by default: the outermost tier (InfiniBand on an HGX cluster).
    pools.transfer = scenario.hardware.network.back().name;
    if (const ConfigNode* transfer = disaggregated->find("transfer")) {
      pools.transfer = transfer->as_string();
      std::vector<std::string> tiers;
      for (const NetworkTier& tier : scenario.hardware.network) {
        tiers.push_back(tier.name);
      }
      if (std::find(tiers.begin(), tiers.end(), pools.transfer) == tiers.end()) {
        transfer->fail(fmt::format("{} has no network tier '{}' (tiers: {})",
                                   scenario.hardware.name, pools.transfer, fmt::join(tiers, ", ")));
      }
    }
    scenario.serving->disaggregated = std::move(pools);
  }
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& path, const ScenarioOverrides& overrides,
                       ConfigFiles* files) {
  ConfigNode document = load_config_file(path, files);
  allow_scenario_keys(document);
  const ConfigNode* variants = document.find("variants");
  const std::vector<std::string> names = variant_names(variants);
  ConfigNode variant_node;
  if (!overrides.variant.empty()) {
    const ConfigNode* variant = find_variant(variants, overrides.variant);
    if (variant == nullptr) {
      throw InputError(fmt::format(
          "{}: no variant '{}' (variants: {})", path.string(), overrides.variant,
          names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    }
    variant_node = *variant;
    apply_variant(document, variant_node);
  }
  for (const auto& [key, value] : overrides.sets) {
    document.set_path(key, value, SourceMark{"--set " + key, 0, 0});
  }
  // Again, now with the --set keys: a top-level key they add is checked like the file's
  // (`--set preicsion=fp8` ran bf16 silently).
  allow_scenario_keys(document);
  add_defaults(document, path);
  Scenario scenario;
  scenario.file = path.string();
  scenario.variant = overrides.variant;
  scenario.variant_names = names;
  for (const auto& [key, value] : overrides.sets) {
    scenario.changes.push_back(key + "=" + value);
  }
  scenario.name = document.at("name").as_string();
  scenario.hardware = load_hardware(resolve_node(document.at("hardware"), "hardware"), files);
  if (const ConfigNode* calibration = document.find("calibration")) {
    // An overlay of fitted efficiencies (`rsim calibrate`), relative to the file naming it.
    std::filesystem::path overlay = calibration->as_string();
    if (overlay.is_relative()) {
      overlay = std::filesystem::path(calibration->mark().file).parent_path() / overlay;
    }
    try {
      apply_calibration(overlay, scenario.hardware, files);
    } catch (const ConfigError&) {
      throw;
    } catch (const InputError& error) {
      calibration->fail(error.what());
    }
  }
  scenario.mode = scenario.hardware.default_mode;
  if (const ConfigNode* mode = document.find("mode")) {
    scenario.mode = mode->as_string();
    bool known = false;
    std::vector<std::string> mode_names;
    for (const HardwareMode& candidate : scenario.hardware.modes) {
      known = known || candidate.name == scenario.mode;
      mode_names.push_back(candidate.name);
    }
    if (!known) {
      mode->fail(fmt::format("{} has no mode '{}' (modes: {})", scenario.hardware.name,
                             scenario.mode, fmt::join(mode_names, ", ")));
    }
  }
  const ConfigNode& model_node = document.at("model");
  try {
    scenario.model = load_model(resolve_node(model_node, "models"), find_preset, files);
  } catch (const ConfigError&) {
    throw;
  } catch (const InputError& error) {
    model_node.fail(error.what());
  }
  const ConfigNode& workload = document.at("workload");
  scenario.workload = parse_workload(workload, scenario.model);
  parse_serving_keys(document, workload, scenario, files);
  scenario.precision = parse_precision(document.at("precision"), scenario.hardware);
  scenario.fusion = parse_fusion(document.at("fusion"));
  if (const ConfigNode* share = document.find("host_share")) {
    if (!scenario.hardware.unified_memory) {
      share->fail(fmt::format("{} does not share its memory with the host (unified_memory: false)",
                              scenario.hardware.name));
    }
    scenario.host_share = Bytes(share->as_quantity(Dimension::bytes));
    const MemoryTier& main_memory = scenario.hardware.memory.front();
    if (scenario.host_share >= main_memory.capacity) {
      share->fail(fmt::format("{} leaves nothing of the {} of {}",
                              format_quantity(scenario.host_share.si(), Dimension::bytes),
                              format_quantity(main_memory.capacity.si(), Dimension::bytes),
                              main_memory.name));
    }
  }
  if (const ConfigNode* plan = document.find("plan")) {
    scenario.plan = parse_plan(*plan, scenario.hardware);
    check_expert_axis(*plan, scenario.plan, scenario.model);
    pad_vocabulary(scenario);
  }
  if (const ConfigNode* sweep = document.find("sweep")) {
    // KEY: VALUES (a string like "1..4096:log2" or a list); checked by `rsim sweep`.
    for (const ConfigNode::Entry& entry : sweep->entries()) {
      std::vector<std::string> values;
      if (entry.value.kind() == ConfigNode::Kind::sequence) {
        for (const ConfigNode& item : entry.value.items()) {
          values.push_back(item.as_string());
        }
      } else {
        values.push_back(entry.value.as_string());
      }
      const SourceMark& mark = entry.value.mark();
      scenario.sweep.emplace_back(
          fmt::format("{}={}", entry.key, fmt::join(values, ",")),
          fmt::format("{}:{}:{}: sweep", mark.file, mark.line, mark.column));
    }
  }
  if (const ConfigNode* tiles = document.find("tiles")) {
    scenario.tiles = parse_tiles(*tiles, scenario.hardware);
  }
  if (const ConfigNode* groups = document.find("per_batch_weights")) {
    scenario.per_batch_weights = parse_per_batch_weights(*groups);
  }
  if (const ConfigNode* references = document.find("reference")) {
    scenario.references = parse_references(*references, scenario.model);
  }
  if (!overrides.variant.empty()) {
    scenario.roof_overrides = parse_roof_overrides(variant_node, scenario.hardware);
  }
  return scenario;
}

std::vector<Scenario> load_scenario_variants(const std::filesystem::path& path,
                                             const ScenarioOverrides& overrides) {
  ConfigFiles files;
  std::vector<Scenario> scenarios;
  scenarios.push_back(load_scenario(path, {overrides.sets, ""}, &files));
  const std::vector<std::string> names = scenarios.front().variant_names;
  for (const std::string& name : names) {
    scenarios.push_back(load_scenario(path, {overrides.sets, name}, &files));
  }
  return scenarios;
}

}  // namespace rsim
