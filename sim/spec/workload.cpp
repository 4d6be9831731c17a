// SPDX-License-Identifier: MIT
#include "sim/spec/workload.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

namespace rsim {
namespace {

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
    if (const auto error = microbatch_split_error(workload.batch, training.microbatches)) {
      microbatches->fail(*error);
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

}  // namespace

std::int64_t kv_tokens_per_sequence(const Workload& workload, const ModelSpec& model) {
  const std::int64_t tokens = workload.context + std::max<std::int64_t>(workload.decode_steps, 1);
  // Only a model windowed on every layer caps every layer's cache (Gemma 2's global layers keep
  // every token).
  const TransformerSpec* spec =
      model.stages.size() == 1 ? &model.stages.front().component : nullptr;
  const std::int64_t window =
      spec != nullptr && spec->full_attention_layers() == 0 ? spec->sliding_window : 0;
  return window > 0 ? std::min(tokens, window) : tokens;
}

std::optional<std::string> microbatch_split_error(std::int64_t batch, std::int64_t microbatches) {
  if (microbatches < 1 || batch % microbatches == 0) {
    return std::nullopt;
  }
  return fmt::format("{} sequences do not split into {} equal microbatches", batch, microbatches);
}

Workload parse_workload(const ConfigNode& node, ModelSpec& model) {
  Workload workload;
  workload.written_at = node.mark();
  const std::string phase_name =
      node.at("phase").as_choice({"prefill", "decode", "train", "serve"});
  if (phase_name == "serve") {
    // The stream itself is parse_serving's; the workload is a decode step of one sequence (the
    // serving simulation costs its iterations at their own batches and contexts).
    node.allow_only({"phase", "arrivals", "requests", "input_tokens", "output_tokens", "seed"});
    if (model.composite || model.stages.front().component.vocab_size == 0 ||
        !model.stages.front().component.decoder) {
      node.at("phase").fail(fmt::format(
          "serving needs a single-stage decoder with a vocabulary; '{}' is not one", model.name));
    }
    workload.phase = Phase::decode;
    workload.batch = 1;
    workload.context = 1;
    set_decode_step(model.stages.front(), workload.context);
    return workload;
  }
  node.allow_only({"phase", "batch", "seq_len", "context", "decode_steps", "lm_head",
                   "global_batch_tokens", "microbatches", "recompute", "optimizer",
                   "pipeline_interleave", "overlap_gradients", "overlap_tensor", "overlap_weights",
                   "offload"});
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

std::string_view to_string(Recompute recompute) { return name_of(recompute, kRecomputeNames); }
std::string_view to_string(Optimizer optimizer) { return name_of(optimizer, kOptimizerNames); }

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
