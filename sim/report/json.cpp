// SPDX-License-Identifier: MIT
#include "sim/report/json.hpp"

#include "sim/graph/backward.hpp"
#include "sim/report/json_records.hpp"
#include "sim/spec/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

Json provenance_json(const Provenance& provenance) {
  return provenance.derived.empty() ? Json{{"source", provenance.source}}
                                    : Json{{"derived", provenance.derived}};
}

const Totals* stage_totals(const RunResult& result, const std::string& stage) {
  for (const GroupBounds& group : result.bounds.stages) {
    if (group.stage == stage) {
      return &group.totals;
    }
  }
  return nullptr;
}

// Tokens per second at the lower bound (the most), at the expected time and at the upper bound.
Json rate_json(double tokens, PhaseTimes times) {
  return Json{{"at_lower", tokens / times.lower.si()},
              {"at_expected", tokens / times.expected.si()},
              {"at_upper", tokens / times.upper.si()}};
}

// The decode step's rates, its critical batch and the request (null outside decode).
// null outside training; the step's passes, schedule and thresholds (SI units).
Json training_json(const RunResult& result) {
  const Scenario& scenario = result.scenario;
  if (scenario.workload.phase != Phase::train) {
    return nullptr;
  }
  const Training& training = scenario.workload.training;
  Json passes = Json::array();
  for (const PassTotals& pass : pass_totals(result.graph, result.table)) {
    passes.push_back({{"pass", to_string(pass.pass)},
                      {"flops", pass.flops.si()},
                      {"t_math_s", pass.t_math.si()},
                      {"t_mem_s", pass.t_mem.si()},
                      {"t_net_s", pass.t_net.si()},
                      {"t_lower_s", pass.t_lower.si()},
                      {"t_expected_s", pass.t_expected.si()},
                      {"t_upper_s", pass.t_upper.si()}});
  }
  Json thresholds = Json::array();
  for (const AxisThreshold& threshold : result.training_thresholds) {
    Json entry{{"mesh_axis", threshold.mesh_axis},
               {"network", threshold.network},
               {"size", threshold.size},
               {"kind", threshold.data ? "data" : "tensor"},
               {"pass", to_string(threshold.pass)},
               {"t_math_s", threshold.t_math.si()},
               {"t_net_s", threshold.t_net.si()}};
    if (threshold.data) {
      entry["tokens_per_shard"] = threshold.tokens_per_shard;
      entry["critical_tokens_per_shard"] = threshold.critical_tokens_per_shard;
    } else {
      entry["largest_degree"] = threshold.largest_degree;
      entry["beyond_domain"] = threshold.beyond_domain;
    }
    thresholds.push_back(entry);
  }
  Json pipeline = nullptr;
  if (result.pipeline) {
    const PipelineSchedule& schedule = *result.pipeline;
    pipeline = {{"stages", schedule.stages},
                {"microbatches", schedule.microbatches},
                {"chunks", schedule.chunks},
                {"bubble_fraction", schedule.bubble_fraction},
                {"bubble_lower_s", schedule.bubble_lower.si()},
                {"bubble_upper_s", schedule.bubble_upper.si()}};
  }
  Json split = nullptr;
  if (result.fsdp_tp) {
    const FsdpTpSplit& best = *result.fsdp_tp;
    split = {{"data", best.data},
             {"tensor", best.tensor},
             {"t_math_s", best.t_math.si()},
             {"t_fsdp_s", best.t_fsdp.si()},
             {"t_tensor_s", best.t_tensor.si()},
             {"tokens_per_device", best.tokens_per_device},
             {"min_tokens_per_device", best.min_tokens_per_device},
             {"min_tokens_data", best.min_tokens_data}};
  }
  return {{"fsdp_tp", split},
          {"microbatches", training.microbatches},
          {"microbatch_sequences", scenario.workload.microbatch()},
          {"recompute", to_string(training.recompute)},
          {"optimizer", to_string(training.optimizer)},
          {"tokens", scenario.workload.batch * scenario.workload.seq_len},
          {"passes", passes},
          {"pipeline", pipeline},
          {"thresholds", thresholds}};
}

Json decode_json(const RunResult& result) {
  const Scenario& scenario = result.scenario;
  if (scenario.workload.phase != Phase::decode) {
    return nullptr;
  }
  const double batch = static_cast<double>(scenario.workload.batch);
  const double devices = static_cast<double>(scenario.plan.devices());
  const PhaseTimes step{result.bounds.total.t_lower, result.bounds.total.t_upper,
                        result.bounds.total.t_expected};
  Json record{{"step", phase_json(step)},
              {"tokens_per_s", rate_json(batch, step)},
              {"tokens_per_s_per_device", rate_json(batch / devices, step)},
              {"devices", scenario.plan.devices()}};
  if (result.decode_critical) {
    const DecodeCritical& critical = *result.decode_critical;
    const Json per_device = critical_value(critical.matmuls);
    record["critical_batch"] = Json{
        {"matmuls_per_device", per_device},
        {"matmuls_in_all",
         per_device.is_null() ? Json(nullptr) : Json(per_device.get<double>() * critical.replicas)},
        {"replicas", critical.replicas},
        {"ridge", critical.ridge},
        {"attention_intensity", critical.attention_intensity},
        {"group_size", critical.group_size}};
  }
  record["request"] = nullptr;
  if (result.request) {
    const DecodeRequest& request = *result.request;
    const double outputs = batch * static_cast<double>(request.steps + 1);
    record["request"] =
        Json{{"prompt_tokens", request.prompt_tokens},
             {"decode_steps", request.steps},
             {"output_tokens_per_sequence", request.steps + 1},
             {"prefill", phase_json(request.prefill)},
             {"first_step", phase_json(request.first_step)},
             {"last_step", phase_json(request.last_step)},
             {"decode", phase_json(request.decode)},
             {"total", phase_json(request.total())},
             {"per_output_token", phase_json(request.per_output_token())},
             {"tokens_per_s", rate_json(outputs, request.total())},
             {"tokens_per_s_per_device", rate_json(outputs / devices, request.total())},
             {"affine", request.affine},
             {"evaluations", request.evaluations}};
  }
  return record;
}

Json precision_json(const Precision& precision) {
  return Json{
      {"policy", precision.policy},
      {"weights", std::string(to_string(precision.weights))},
      {"activations", std::string(to_string(precision.activations))},
      {"outputs", std::string(to_string(precision.outputs))},
      {"kv_cache", std::string(to_string(precision.kv_cache))},
      {"compute", precision.compute},
      {"attention", precision.attention_path()},
      {"lm_head", std::string(to_string(precision.lm_head_weights()))},
      {"lm_head_compute", precision.lm_head_path()},
      {"gradients", std::string(to_string(gradient_dtype(precision)))},
      {"fallback_from",
       precision.requested_compute.empty() ? Json(nullptr) : Json(precision.requested_compute)}};
}

Json plan_json(const Plan& plan) {
  Json mesh = Json::array();
  for (const MeshAxis& axis : plan.mesh) {
    mesh.push_back({{"name", axis.name}, {"size", axis.size}, {"network", axis.network}});
  }
  const auto rules_json = [](const auto& rules) {
    Json result = Json::object();
    for (const auto& [logical, axis] : rules) {
      result[logical] = axis.empty() ? Json(nullptr) : Json(axis);
    }
    return result;
  };
  return Json{{"name", plan.name},
              {"devices", plan.devices()},
              {"mesh", mesh},
              {"rules", rules_json(plan.rules)},
              {"weight_rules", rules_json(plan.weight_rules)}};
}

Json critical_batches_json(const RunResult& result) {
  Json list = Json::array();
  for (const GroupCritical& group : result.group_critical) {
    list.push_back({{"stage", group.stage},
                    {"group", group.group},
                    {"tokens", critical_value(group.critical)}});
  }
  return list;
}

}  // namespace

Json phase_json(PhaseTimes times) {
  return Json{{"t_lower_s", times.lower.si()},
              {"t_expected_s", times.expected.si()},
              {"t_upper_s", times.upper.si()}};
}

Json critical_value(const std::optional<CriticalBatch>& critical) {
  if (!critical || critical->kind == CriticalBatch::Kind::never) {
    return nullptr;
  }
  return critical->kind == CriticalBatch::Kind::always ? 1.0 : critical->tokens;
}

// Per memory tier: the bytes it serves and their time (× count), and the tile the tier inside
// it holds ("tiles" is keyed by that inner tier).
void add_tier_records(Json& record, const OpCost& cost, double count) {
  Json bytes_by_tier = Json::object();
  Json t_by_tier = Json::object();
  Json intensity_by_tier = Json::object();
  Json tiles = Json::object();
  for (const TierCost& tier : cost.tiers) {
    bytes_by_tier[tier.tier] = tier.bytes.si() * count;
    intensity_by_tier[tier.tier] =
        tier.bytes.si() > 0.0 ? Json(cost.flops.si() / tier.bytes.si()) : Json(nullptr);
    t_by_tier[tier.tier] = tier.timed ? Json(tier.time.si() * count) : Json(nullptr);
    if (tier.tile) {
      tiles[tier.tile_tier] = Json{{"bm", tier.tile->bm},
                                   {"bn", tier.tile->bn},
                                   {"bk", tier.tile->bk},
                                   {"resident", tier.operand_resident}};
    }
  }
  record["bytes_by_tier"] = bytes_by_tier;
  record["t_by_tier_s"] = t_by_tier;
  record["intensity_by_tier"] = intensity_by_tier;
  record["tiles"] = tiles;
}

Json totals_json(const Totals& totals) {
  Json by_tier = Json::object();
  for (const auto& [tier, time] : totals.t_net_by_tier) {
    by_tier[tier] = time.si();
  }
  Json result{{"flops", totals.flops.si()},
              {"bytes", totals.bytes.si()},
              {"t_math_s", totals.t_math.si()},
              {"t_mem_s", totals.t_mem.si()},
              {"t_net_s", totals.t_net.si()},
              {"t_lower_s", totals.t_lower.si()},
              {"t_expected_s", totals.t_expected.si()},
              {"t_upper_s", totals.t_upper.si()},
              {"t_critical_path_s", totals.t_critical.si()},
              {"t_overlapped_s", totals.t_overlapped.si()},
              {"bound", to_string(totals.bound)}};
  result["ideal_bytes"] = totals.ideal_bytes.si();
  result["bound_tier"] = totals.bound_tier.empty() ? Json(nullptr) : Json(totals.bound_tier);
  Json memory_bytes = Json::object();
  Json memory_times = Json::object();
  for (std::size_t index = 0; index < totals.bytes_by_tier.size(); ++index) {
    memory_bytes[totals.bytes_by_tier[index].first] = totals.bytes_by_tier[index].second.si();
    memory_times[totals.t_by_tier[index].first] = totals.t_by_tier[index].second.si();
  }
  result["bytes_by_tier"] = memory_bytes;
  result["t_by_tier_s"] = memory_times;
  result["t_net_by_tier_s"] = by_tier;
  Json bytes_by_tier = Json::object();
  for (const auto& [tier, bytes] : totals.net_bytes_by_tier) {
    bytes_by_tier[tier] = bytes.si();
  }
  result["net_bytes_by_tier"] = bytes_by_tier;
  // What overlap must hide to bring the serial lower bound down to the overlapped one.
  result["overlap_needed_s"] = (totals.t_lower - totals.t_overlapped).si();
  return result;
}

Json variant_record(const RunResult& run, const RunResult& baseline) {
  const Scenario& scenario = run.scenario;
  const Totals& totals = run.bounds.total;
  Json record{{"variant", scenario.variant.empty() ? std::string("baseline") : scenario.variant},
              {"hardware", std::filesystem::path(scenario.hardware.file).stem().string()},
              {"mode", run.roofs.mode},
              {"plan", scenario.plan.name},
              {"devices", scenario.plan.devices()},
              {"batch", scenario.workload.batch}};
  const Json precision = precision_json(scenario.precision);
  for (const auto& item : precision.items()) {
    record[item.key()] = item.value();
  }
  record.update(totals_json(totals));
  record["critical_d"] = run.critical_d ? Json(*run.critical_d) : Json(nullptr);
  record["weights_bytes"] = run.footprint.weights.si();
  record["kv_cache_bytes"] = run.footprint.kv_cache.si();
  record["memory_total_bytes"] = run.footprint.total().si();
  record["fits"] = run.footprint.fits();
  record["lower_vs_baseline"] = totals.t_lower / baseline.bounds.total.t_lower;
  record["upper_vs_baseline"] = totals.t_upper / baseline.bounds.total.t_upper;
  // A decode's tokens per second, and a request's time to first token (its prefill), time per
  // output token and tokens per second: the same record as rsim run's, per variant or plan.
  if (Json decode = decode_json(run); !decode.is_null()) {
    record["decode"] = std::move(decode);
  }
  return record;
}

Json whatif_to_json(const std::vector<RunResult>& runs) {
  Json variants = Json::array();
  for (const RunResult& run : runs) {
    Json entry = variant_record(run, runs.front());
    entry["critical_batches"] = critical_batches_json(run);
    variants.push_back(entry);
  }
  const Scenario& baseline = runs.front().scenario;
  return Json{{"schema_version", kRunJsonSchemaVersion},
              {"scenario", baseline.name},
              {"file", baseline.file},
              {"variants", variants}};
}

Json op_record(const Op& op, const OpCost& cost, double expected,
               const std::optional<CriticalBatch>& critical) {
  const auto count = static_cast<double>(op.count);
  Json record{
      {"name", op.name},
      {"stage", op.stage},
      {"block", to_string(op.block)},
      {"kind", std::string(to_string(op.kind))},
      {"count", op.count},
      {"compute_path", op.compute_path},
      {"flops", cost.flops.si() * count},
      {"bytes", cost.bytes.si() * count},
      {"ideal_bytes", cost.ideal_bytes.si() * count},
      {"intensity", cost.intensity},
      {"ideal_intensity", cost.ideal_intensity},
      {"critical_intensity", cost.critical_intensity},
      {"t_math_s", cost.t_math.si() * count},
      {"t_mem_s", cost.t_mem.si() * count},
      {"t_net_s", cost.t_net.si() * count},
      {"t_lower_s", cost.t_lower.si() * count},
      {"t_expected_s", expected * count},
      {"t_upper_s", cost.t_upper.si() * count},
      {"bound", to_string(cost.bound)},
      {"bound_tier", cost.bound_tier.empty() ? Json(nullptr) : Json(cost.bound_tier)},
      {"critical_batch", critical_value(critical)},
      {"network", op.kind == OpKind::collective ? Json(op.network) : Json(nullptr)},
      {"collective_bytes",
       op.kind == OpKind::collective ? Json(op.collective.bytes.si() * count) : Json(nullptr)}};
  // What the bound, the report's vocabulary, calls the op: a fused elementwise op moves no bytes.
  record["fused"] = op.kind == OpKind::elementwise && op.fused;
  // The figures above are × count (they add up to the totals); one instance's beside them.
  record["per_instance"] = Json{{"flops", cost.flops.si()},
                                {"bytes", cost.bytes.si()},
                                {"t_lower_s", cost.t_lower.si()},
                                {"t_expected_s", expected},
                                {"t_upper_s", cost.t_upper.si()}};
  add_tier_records(record, cost, count);
  return record;
}

Json ridge_record(const Roofs& roofs, const Ridge& ridge) {
  const ComputePath& path = *roofs.find_path(ridge.path);
  return Json{{"path", ridge.path},
              {"unit", std::string(to_string(path.unit))},
              {"peak_flops_per_s", path.peak.si()},
              {"tier", ridge.tier},
              {"kind", ridge.network ? "network" : "memory"},
              {"bandwidth_bytes_per_s", ridge.bandwidth.si()},
              {"ridge_flops_per_byte", ridge.flops_per_byte}};
}

Json roofs_to_json(const Roofs& roofs) {
  Json compute = Json::array();
  for (const ComputePath& path : roofs.compute) {
    Json entry{{"name", path.name},
               {"dtype", std::string(to_string(path.dtype))},
               {"sparse", path.sparse},
               {"unit", std::string(to_string(path.unit))},
               {"peak_flops_per_s", path.peak.si()}};
    entry.update(provenance_json(path.provenance));
    compute.push_back(entry);
  }
  Json memory = Json::array();
  for (const MemoryTier& tier : roofs.memory) {
    Json entry{
        {"name", tier.name},
        {"bandwidth_bytes_per_s", tier.bandwidth ? Json(tier.bandwidth->si()) : Json(nullptr)},
        {"capacity_bytes", tier.capacity.si()},
        {"count", tier.count}};
    entry.update(provenance_json(tier.provenance));
    memory.push_back(entry);
  }
  Json network = Json::array();
  for (const NetworkTier& tier : roofs.network) {
    Json entry{{"name", tier.name},
               {"topology", std::string(to_string(tier.topology))},
               {"bandwidth_bytes_per_s", tier.bandwidth.si()},
               {"devices", tier.devices},
               {"wraparound_size", tier.wraparound_size},
               {"hop_latency_s", tier.hop_latency ? Json(tier.hop_latency->si()) : Json(nullptr)},
               {"in_network_reduction", tier.in_network_reduction}};
    entry.update(provenance_json(tier.provenance));
    network.push_back(entry);
  }
  Json ridge_list = Json::array();
  for (const Ridge& ridge : ridges(roofs)) {
    ridge_list.push_back(ridge_record(roofs, ridge));
  }
  return Json{{"hardware", roofs.hardware},
              {"mode", roofs.mode},
              {"unified_memory", roofs.unified_memory},
              {"vector_path", roofs.vector_path},
              {"compute", compute},
              {"memory", memory},
              {"network", network},
              {"ridges", ridge_list}};
}

Json run_to_json(const RunResult& result) {
  const Scenario& scenario = result.scenario;
  Json stages = Json::array();
  for (const GroupBounds& stage : result.bounds.stages) {
    Json entry{{"name", stage.stage}, {"steps", stage.steps}};
    entry.update(totals_json(stage.totals));
    Json blocks = Json::array();
    for (const GroupBounds& block : result.bounds.blocks) {
      if (block.stage == stage.stage) {
        Json block_entry{{"name", to_string(block.block)}};
        block_entry.update(totals_json(block.totals));
        blocks.push_back(block_entry);
      }
    }
    entry["blocks"] = blocks;
    stages.push_back(entry);
  }
  Json ops = Json::array();
  for (std::size_t row = 0; row < result.table.order.size(); ++row) {
    ops.push_back(op_record(result.graph.op(result.table.order[row]), result.table.costs[row],
                            result.table.expected(static_cast<Eigen::Index>(row)),
                            result.critical[row]));
  }
  Json references = Json::array();
  for (const Reference& reference : scenario.references) {
    const Totals& totals =
        reference.stage.empty() ? result.bounds.total : *stage_totals(result, reference.stage);
    references.push_back(
        {{"stage", reference.stage.empty() ? Json(nullptr) : Json(reference.stage)},
         {"measured_s", reference.time.si()},
         {"t_lower_s", totals.t_lower.si()},
         {"t_expected_s", totals.t_expected.si()},
         {"t_upper_s", totals.t_upper.si()},
         {"lower_over_measured", totals.t_lower / reference.time},
         {"expected_over_measured", totals.t_expected / reference.time},
         {"source", reference.source}});
  }
  // A decode step caches its context and its new token; a request's last step the most.
  const Json kv_tokens = scenario.workload.phase == Phase::decode
                             ? Json(kv_tokens_per_sequence(scenario.workload, scenario.model))
                             : Json(nullptr);
  return Json{
      // Bumped when a key changes meaning or goes away (adding keys keeps it).
      {"schema_version", kRunJsonSchemaVersion},
      {"scenario", scenario.name},
      {"file", scenario.file},
      {"hardware", scenario.hardware.name},
      {"mode", result.roofs.mode},
      {"model", scenario.model.name},
      {"workload",
       {{"phase", to_string(scenario.workload.phase)},
        {"batch", scenario.workload.batch},
        {"context", scenario.workload.context},
        {"decode_steps", scenario.workload.decode_steps},
        {"seq_len", scenario.workload.seq_len}}},
      {"variant", scenario.variant.empty() ? Json(nullptr) : Json(scenario.variant)},
      {"precision", precision_json(scenario.precision)},
      {"per_batch_weights", scenario.per_batch_weights},
      {"plan", plan_json(scenario.plan)},
      {"notes", result.notes},
      {"critical_d", result.critical_d ? Json(*result.critical_d) : Json(nullptr)},
      {"memory",
       {{"weights_bytes", result.footprint.weights.si()},
        {"kv_cache_bytes", result.footprint.kv_cache.si()},
        {"activations_bytes", result.footprint.activations.si()},
        {"gradients_bytes", result.footprint.gradients.si()},
        {"optimizer_state_bytes", result.footprint.optimizer_state.si()},
        {"total_bytes", result.footprint.total().si()},
        {"capacity_bytes", result.footprint.capacity.si()},
        {"free_bytes", result.footprint.free().si()},
        {"host_share_bytes", scenario.host_share.si()},
        {"kv_tokens_per_sequence", kv_tokens},
        {"fits", result.footprint.fits()}}},
      {"fits", result.footprint.fits()},
      {"decode", decode_json(result)},
      {"training", training_json(result)},
      {"critical_batches", critical_batches_json(result)},
      {"parameters",
       {{"total", result.parameters.total()},
        {"active", result.parameters.active()},
        {"embedding", result.parameters.embedding},
        {"layers", result.parameters.layers},
        {"extra", result.parameters.extra}}},
      {"roofs", roofs_to_json(result.roofs)},
      {"totals", totals_json(result.bounds.total)},
      {"stages", stages},
      {"ops", ops},
      {"references", references},
  };
}

std::optional<std::string> find_non_finite(const nlohmann::ordered_json& json) {
  if (json.is_number_float()) {
    return std::isfinite(json.get<double>()) ? std::nullopt : std::optional<std::string>("");
  }
  if (json.is_object()) {
    for (const auto& item : json.items()) {
      if (auto path = find_non_finite(item.value())) {
        return path->empty() || path->front() == '[' ? item.key() + *path
                                                     : item.key() + "." + *path;
      }
    }
  } else if (json.is_array()) {
    for (std::size_t index = 0; index < json.size(); ++index) {
      if (auto path = find_non_finite(json[index])) {
        return fmt::format("[{}]{}{}", index, path->empty() || path->front() == '[' ? "" : ".",
                           *path);
      }
    }
  }
  return std::nullopt;
}

}  // namespace rsim
