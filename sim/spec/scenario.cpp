// SPDX-License-Identifier: MIT
#include "sim/spec/scenario.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/efficiency.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/presets.hpp"

#include <fmt/format.h>

#include <array>

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
  node.allow_only({"attention", "into_matmul"});
  Fusion fusion;
  fusion.attention_fused = node.at("attention").as_choice({"fused", "unfused"}) == "fused";
  for (const ConfigNode& item : node.at("into_matmul").items()) {
    fusion.into_matmul.push_back(parse_named(item, kElementwiseKinds));
    if (fusion.into_matmul.back() == ElementwiseKind::optimizer) {
      item.fail(
          "the optimizer step reads and writes every parameter; it is not fused into a matmul");
    }
  }
  return fusion;
}

constexpr std::array kRecomputeNames{
    Named<Recompute>{Recompute::none, "none"},
    Named<Recompute>{Recompute::selective, "selective"},
    Named<Recompute>{Recompute::full, "full"},
};
constexpr std::array kOptimizerNames{
    Named<Optimizer>{Optimizer::adam, "adam"},
    Named<Optimizer>{Optimizer::sgd, "sgd"},
};

// phase: train — one step over `batch` sequences (or `global_batch_tokens` / seq_len) of a
// single-stage model, split into `microbatches`; the loss reads the logits of every token.
// `offload:` a list of weights, activations, optimizer (or one of them, or "none").
TrainingOffload parse_offload(const ConfigNode& node) {
  TrainingOffload offload;
  const auto take = [&](const ConfigNode& item) {
    const std::string part = item.as_choice({"none", "weights", "activations", "optimizer"});
    offload.weights = offload.weights || part == "weights";
    offload.activations = offload.activations || part == "activations";
    offload.optimizer = offload.optimizer || part == "optimizer";
  };
  if (node.kind() == ConfigNode::Kind::sequence) {
    for (const ConfigNode& item : node.items()) {
      take(item);
    }
  } else {
    take(node);
  }
  return offload;
}

Workload parse_training(const ConfigNode& node, ModelSpec& model) {
  const ConfigNode& phase = node.at("phase");
  if (model.composite) {
    phase.fail(fmt::format("training is modelled for single-stage models; '{}' has {} stages",
                           model.name, model.stages.size()));
  }
  for (std::string_view key : {"context", "decode_steps", "lm_head"}) {
    if (const ConfigNode* other = node.find(key)) {
      other->fail(fmt::format(
          "'{}' is not a training key (a training step computes the logits of every token)", key));
    }
  }
  Workload workload;
  workload.phase = Phase::train;
  StageSpec& stage = model.stages.front();
  if (stage.component.vision) {
    phase.fail("training a vision encoder is not modelled (it has no token loss)");
  }
  workload.seq_len = node.at("seq_len").as_positive_int();
  const ConfigNode* batch = node.find("batch");
  const ConfigNode* tokens = node.find("global_batch_tokens");
  if ((batch == nullptr) == (tokens == nullptr)) {
    node.fail("give exactly one of 'batch' (sequences per step) and 'global_batch_tokens'");
  }
  if (batch != nullptr) {
    workload.batch = batch->as_positive_int();
  } else {
    const std::int64_t total = tokens->as_positive_int();
    if (total % workload.seq_len != 0) {
      tokens->fail(fmt::format("{} tokens are not a whole number of {}-token sequences", total,
                               workload.seq_len));
    }
    workload.batch = total / workload.seq_len;
  }
  Training& training = workload.training;
  if (const ConfigNode* microbatches = node.find("microbatches")) {
    training.microbatches = microbatches->as_positive_int();
    if (workload.batch % training.microbatches != 0) {
      microbatches->fail(fmt::format("{} sequences do not split into {} equal microbatches",
                                     workload.batch, training.microbatches));
    }
  }
  if (const ConfigNode* recompute = node.find("recompute")) {
    training.recompute = parse_named(*recompute, kRecomputeNames);
  }
  if (const ConfigNode* optimizer = node.find("optimizer")) {
    training.optimizer = parse_named(*optimizer, kOptimizerNames);
  }
  if (const ConfigNode* interleave = node.find("pipeline_interleave")) {
    training.pipeline_interleave = interleave->as_positive_int();
    if (stage.component.num_layers % training.pipeline_interleave != 0) {
      interleave->fail(fmt::format("{} layers do not split into {} chunks",
                                   stage.component.num_layers, training.pipeline_interleave));
    }
  }
  if (const ConfigNode* overlap = node.find("overlap_gradients")) {
    training.overlap_gradients = overlap->as_bool();
  }
  if (const ConfigNode* overlap = node.find("overlap_tensor")) {
    training.overlap_tensor = overlap->as_bool();
  }
  if (const ConfigNode* overlap = node.find("overlap_weights")) {
    training.overlap_weights = overlap->as_bool();
  }
  if (const ConfigNode* offload = node.find("offload")) {
    training.offload = parse_offload(*offload);
  }
  stage.tokens = workload.seq_len;
  stage.embedded_tokens = stage.component.vocab_size > 0 ? workload.seq_len : 0;
  stage.lm_head = stage.component.vocab_size > 0 ? LmHead::all_tokens : LmHead::none;
  return workload;
}

Workload parse_workload(const ConfigNode& node, ModelSpec& model) {
  node.allow_only({"phase", "batch", "seq_len", "context", "decode_steps", "lm_head",
                   "global_batch_tokens", "microbatches", "recompute", "optimizer",
                   "pipeline_interleave", "overlap_gradients", "overlap_tensor", "overlap_weights",
                   "offload"});
  Workload workload;
  const std::string phase_name = node.at("phase").as_choice({"prefill", "decode", "train"});
  workload.phase = phase_name == "train"    ? Phase::train
                   : phase_name == "decode" ? Phase::decode
                                            : Phase::prefill;
  if (!model.composite && !model.stages.front().component.vision &&
      model.stages.front().component.vocab_size == 0) {
    // Nothing feeds the first layer without a token embedding (issue 21 #8: an internal error).
    throw InputError(fmt::format(
        "{}: model '{}' has vocab_size 0 (no token embedding): a model run on its own needs its "
        "vocabulary; vocab_size 0 is for a stage fed by another stage of a composite model",
        model.file, model.name));
  }
  if (workload.phase == Phase::train) {
    return parse_training(node, model);
  }
  for (std::string_view key :
       {"global_batch_tokens", "microbatches", "recompute", "optimizer", "pipeline_interleave",
        "overlap_gradients", "overlap_tensor", "overlap_weights", "offload"}) {
    if (const ConfigNode* train_only = node.find(key)) {
      train_only->fail(fmt::format("'{}' is for phase: train", key));
    }
  }
  workload.batch = node.at("batch").as_positive_int();
  if (workload.phase == Phase::decode) {
    const ConfigNode& phase = node.at("phase");
    if (model.composite || model.stages.front().component.vocab_size == 0 ||
        !model.stages.front().component.decoder) {
      phase.fail(
          fmt::format("a decode step needs a single-stage decoder with a vocabulary; '{}' "
                      "is not one",
                      model.name));
    }
    if (const ConfigNode* seq_len = node.find("seq_len")) {
      seq_len->fail(
          "a decode step processes one token per sequence: give 'context' (the tokens "
          "already cached), not 'seq_len'");
    }
    workload.context = node.at("context").as_positive_int();
    if (const ConfigNode* steps = node.find("decode_steps")) {
      workload.decode_steps = steps->as_positive_int();
    }
    set_decode_step(model.stages.front(), workload.context);
    if (const ConfigNode* lm_head = node.find("lm_head")) {
      lm_head->fail("a decode step always computes the next token's logits");
    }
    return workload;
  }
  for (std::string_view key : {"context", "decode_steps"}) {
    if (const ConfigNode* decode_only = node.find(key)) {
      decode_only->fail(fmt::format("'{}' is for phase: decode", key));
    }
  }
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

void set_decode_step(StageSpec& stage, std::int64_t context) {
  stage.tokens = 1;
  stage.embedded_tokens = 1;
  stage.context = context;
  stage.writes_kv_cache = true;  // the new token's K and V join the cache
  stage.lm_head = LmHead::last_token;
}

std::string_view to_string(ElementwiseKind kind) { return name_of(kind, kElementwiseKinds); }

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

std::string_view to_string(Recompute recompute) { return name_of(recompute, kRecomputeNames); }
std::string_view to_string(Optimizer optimizer) { return name_of(optimizer, kOptimizerNames); }

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
                       "sweep", "variants"});
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
  Scenario scenario;
  scenario.file = path.string();
  scenario.variant = overrides.variant;
  scenario.variant_names = names;
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
  scenario.workload = parse_workload(document.at("workload"), scenario.model);
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

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::prefill:
      return "prefill";
    case Phase::decode:
      return "decode";
    case Phase::train:
      return "train";
  }
  return "prefill";
}

std::string TrainingOffload::label() const {
  std::vector<std::string_view> parts;
  for (const auto& [offloaded, name] :
       {std::pair{weights, "weights"}, std::pair{activations, "activations"},
        std::pair{optimizer, "optimizer"}}) {
    if (offloaded) {
      parts.emplace_back(name);
    }
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, "+"));
}

}  // namespace rsim
