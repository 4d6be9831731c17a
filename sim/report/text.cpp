// SPDX-License-Identifier: MIT
#include "sim/report/text.hpp"

#include "sim/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

namespace rsim {
namespace {

using Align = TextTable::Align;

std::string seconds(Seconds time) { return format_quantity(time.si(), Dimension::seconds); }
std::string seconds(double time_s) { return format_quantity(time_s, Dimension::seconds); }
std::string flops(Flops count) { return format_count(count.si()); }
std::string bytes(Bytes size) { return format_quantity(size.si(), Dimension::bytes); }
std::string rate(FlopsPerSecond peak) { return format_quantity(peak.si(), Dimension::flop_rate); }
std::string rate(BytesPerSecond bandwidth) {
  return format_quantity(bandwidth.si(), Dimension::byte_rate);
}
std::string percent(double fraction) { return fmt::format("{:.1f} %", 100.0 * fraction); }

void add_totals_row(TextTable& table, const std::string& label, const std::string& steps,
                    const Totals& totals) {
  table.add_row({label, steps, flops(totals.flops), bytes(totals.bytes), seconds(totals.t_math),
                 seconds(totals.t_mem), seconds(totals.t_net), seconds(totals.t_lower),
                 seconds(totals.t_upper), seconds(totals.t_critical), seconds(totals.t_overlapped),
                 std::string(to_string(totals.bound))});
}

void write_header(std::ostream& out, const RunResult& result) {
  const Scenario& scenario = result.scenario;
  const Roofs& roofs = result.roofs;
  const ComputePath& path = *roofs.find_path(scenario.precision.compute);
  const ComputePath& vector = *roofs.find_path(roofs.vector_path);
  const MemoryTier& memory = roofs.main_memory();
  const Precision& precision = scenario.precision;
  std::vector<std::string> stage_names;
  for (const StageSpec& stage : scenario.model.stages) {
    stage_names.push_back(fmt::format(
        "{} ({}, {} tokens{})", stage.name, stage.component.name, stage.tokens * stage.images,
        stage.steps > 1 ? fmt::format(" × {} steps", stage.steps) : std::string()));
  }
  std::vector<std::string> fused;
  for (ElementwiseKind kind : scenario.fusion.into_matmul) {
    fused.emplace_back(to_string(kind));
  }
  out << fmt::format(
      "{}{}  ({})\n\n", scenario.name,
      scenario.variant.empty() ? std::string() : fmt::format(" — variant '{}'", scenario.variant),
      scenario.file);
  out << fmt::format(
      "  hardware   {}, mode {}{}\n", roofs.hardware, roofs.mode,
      roofs.unified_memory ? " (unified memory: the CPU shares DRAM bandwidth)" : "");
  out << fmt::format(
      "  roofs      {} {} ({}) · {} {} · ridge {:.4g} FLOP/B · elementwise on {} {}\n", path.name,
      rate(path.peak), to_string(path.unit), memory.name, rate(*memory.bandwidth),
      ridge(path.peak, *memory.bandwidth), vector.name, rate(vector.peak));
  const ParameterCount& parameters = result.parameters;
  out << fmt::format("  model      {}: {} parameters{}; {}\n", scenario.model.name,
                     format_count(static_cast<double>(parameters.total())),
                     parameters.inactive_experts > 0
                         ? fmt::format(" ({} active per token: top-k experts)",
                                       format_count(static_cast<double>(parameters.active())))
                         : std::string(),
                     fmt::join(stage_names, ", "));
  const Workload& workload = scenario.workload;
  if (workload.phase == "train") {
    const Training& training = workload.training;
    out << fmt::format(
        "  workload   train step: {} sequences × {} tokens ({} tokens) in {} microbatch{} of {}; "
        "recompute {}; optimizer {}{}\n",
        workload.batch, workload.seq_len,
        format_count(static_cast<double>(workload.batch) * static_cast<double>(workload.seq_len)),
        training.microbatches, training.microbatches > 1 ? "es" : "", workload.microbatch(),
        to_string(training.recompute), to_string(training.optimizer),
        training.pipeline_interleave > 1
            ? fmt::format("; {} layer chunks per pipeline stage", training.pipeline_interleave)
            : std::string());
  } else {
    out << fmt::format(
        "  workload   {}, batch {}{}\n",
        workload.phase != "decode"  ? "prefill"
        : workload.decode_steps > 0 ? "decode request (prompt prefill + decode steps)"
                                    : "decode step",
        workload.batch,
        workload.phase != "decode" ? std::string()
        : workload.decode_steps > 0
            ? fmt::format(", prompt (context) {} tokens, {} decode steps; the tables below are its "
                          "first step",
                          workload.context, workload.decode_steps)
            : fmt::format(", context {} tokens", workload.context));
  }
  out << fmt::format("  precision  {}\n", describe(precision));
  if (!scenario.per_batch_weights.empty()) {
    out << fmt::format("  per-batch  weights of: {} (one copy per sequence)\n",
                       fmt::join(scenario.per_batch_weights, ", "));
  }
  out << fmt::format(
      "  fusion     attention {}; into matmul: {}\n",
      scenario.fusion.attention_fused ? "fused (FMHA)" : "unfused",
      fused.empty() ? std::string("none") : fmt::format("{}", fmt::join(fused, ", ")));
  const Plan& plan = scenario.plan;
  if (plan.devices() > 1) {
    std::vector<std::string> mesh;
    for (const MeshAxis& axis : plan.mesh) {
      mesh.push_back(fmt::format("{}: {} over {}", axis.name, axis.size, axis.network));
    }
    std::vector<std::string> rules;
    for (const auto& [logical, axis] : plan.rules) {
      rules.push_back(fmt::format("{} → {}", logical, axis.empty() ? "-" : axis));
    }
    for (const auto& [logical, axis] : plan.weight_rules) {
      rules.push_back(fmt::format("weight {} → {}", logical, axis.empty() ? "-" : axis));
    }
    out << fmt::format("  plan       {} on {} devices {{{}}}; rules: {}; figures are per device\n",
                       plan.name, plan.devices(), fmt::join(mesh, ", "), fmt::join(rules, ", "));
  }
  for (const std::string& note : result.notes) {
    out << fmt::format("  note       {}\n", note);
  }
  out << '\n';
}

// The per-device memory table; a plan that does not fit says so with the numbers.
void write_memory(std::ostream& out, const RunResult& result) {
  const Scenario& scenario = result.scenario;
  const Footprint& footprint = result.footprint;
  const MemoryTier& memory = result.roofs.main_memory();
  const Workload& workload = scenario.workload;
  std::string when;
  if (workload.phase == "decode") {
    // A step holds its cached context and its new token; a request's last step the most.
    when = fmt::format("; KV cache of {} tokens per sequence{}",
                       workload.context + std::max<std::int64_t>(workload.decode_steps, 1),
                       workload.decode_steps > 0 ? ", at the request's last step" : "");
  }
  out << fmt::format("Memory per device ({}{}{})\n", memory.name,
                     scenario.host_share.si() > 0.0
                         ? fmt::format(", less {} left to the host", bytes(scenario.host_share))
                         : std::string(),
                     when);
  TextTable table({{"part", Align::left}, {"bytes"}, {"of capacity"}});
  const double capacity = footprint.capacity.si();
  const auto add = [&](const std::string& part, Bytes size) {
    table.add_row({part, bytes(size), capacity > 0.0 ? percent(size.si() / capacity) : "-"});
  };
  add(scenario.plan.devices() > 1 ? "weights (this device's shard)" : "weights", footprint.weights);
  const bool training = workload.phase == "train";
  if (training) {
    add("gradients", footprint.gradients);
    add(fmt::format("optimizer state ({})", to_string(workload.training.optimizer)),
        footprint.optimizer_state);
    add(fmt::format("activations (saved for backward, recompute {})",
                    to_string(workload.training.recompute)),
        footprint.activations);
  } else {
    add("KV cache", footprint.kv_cache);
    add("activations (largest op)", footprint.activations);
  }
  table.add_rule();
  add("total", footprint.total());
  add("capacity", footprint.capacity);
  add(footprint.fits() ? "free" : "short by",
      footprint.fits() ? footprint.free() : Bytes(0.0) - footprint.free());
  table.print(out, "  ");
  if (footprint.fits()) {
    out << fmt::format("  fits: {} of {} used\n\n", bytes(footprint.total()),
                       bytes(footprint.capacity));
  } else {
    out << fmt::format(
        "  DOES NOT FIT: needs {} per device, {} available (short by {}); the times below are "
        "what the plan would take if it fit\n\n",
        bytes(footprint.total()), bytes(footprint.capacity), bytes(Bytes(0.0) - footprint.free()));
  }
}

void write_stages(std::ostream& out, const RunResult& result) {
  out << "Stages (all steps; lower = Σ per-op max, upper = Σ per-op sum, critical path = a device\n"
         "and a network stream overlapping independent ops, overlapped = max(ΣT_math, ΣT_mem, "
         "ΣT_net))\n";
  TextTable table({{"stage", Align::left},
                   {"runs"},
                   {"FLOPs"},
                   {"DRAM bytes"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"upper"},
                   {"critical path"},
                   {"overlapped"},
                   {"bound", Align::left}});
  for (const GroupBounds& stage : result.bounds.stages) {
    add_totals_row(table, stage.stage, fmt::format("{}", stage.steps), stage.totals);
    for (const GroupBounds& block : result.bounds.blocks) {
      if (block.stage != stage.stage) {
        continue;
      }
      std::int64_t runs = block.steps;
      for (const OpGraph::Stage& graph_stage : result.graph.stages) {
        if (graph_stage.name == stage.stage && block.block == "layer") {
          runs *= graph_stage.layers;
        }
      }
      add_totals_row(table, "  " + block.block, fmt::format("{}", runs), block.totals);
    }
  }
  table.add_rule();
  add_totals_row(table, "total", "", result.bounds.total);
  table.print(out, "  ");
  out << '\n';
}

// "compute", "network", or the memory tier that holds the op ("dram", "smem").
std::string bound_label(Bound bound, const std::string& tier) {
  return bound == Bound::memory && !tier.empty() ? tier : std::string(to_string(bound));
}

std::string tier_cell(Bytes served, Seconds time, bool timed) {
  return timed ? fmt::format("{} {}", bytes(served), seconds(time)) : bytes(served);
}

// Σ bytes (and time, where the tier has a bandwidth) per memory tier, per stage: how far the
// tiled main-memory traffic is from the read-once ideal, and which tier holds the memory side.
void write_tier_stages(std::ostream& out, const RunResult& result) {
  const Roofs& roofs = result.roofs;
  out << fmt::format(
      "Memory tiers (all steps; each tier serves the traffic of the best tile that fits the tier "
      "inside it; {} vs ideal = tiled / read-once bytes)\n",
      roofs.main_memory().name);
  std::vector<TextTable::Column> columns{{"stage", Align::left}};
  for (const MemoryTier& tier : roofs.memory) {
    columns.push_back({tier.bandwidth ? tier.name + " bytes, time" : tier.name + " bytes"});
  }
  columns.push_back({roofs.main_memory().name + " vs ideal"});
  columns.push_back({"memory side", Align::left});
  TextTable table(columns);
  const auto add_row = [&](const std::string& label, const Totals& totals) {
    std::vector<std::string> cells{label};
    for (std::size_t index = 0; index < roofs.memory.size(); ++index) {
      cells.push_back(tier_cell(totals.bytes_by_tier[index].second, totals.t_by_tier[index].second,
                                roofs.memory[index].bandwidth.has_value()));
    }
    cells.push_back(totals.ideal_bytes.si() > 0.0
                        ? fmt::format("{:.3f}×", totals.bytes / totals.ideal_bytes)
                        : std::string("-"));
    const std::string side = memory_side(totals).tier;
    cells.push_back(side.empty() ? "-" : side);
    table.add_row(cells);
  };
  for (const GroupBounds& stage : result.bounds.stages) {
    add_row(stage.stage, stage.totals);
  }
  table.add_rule();
  add_row("total", result.bounds.total);
  table.print(out, "  ");
  out << '\n';
}

// Per op of `rows`: the bytes each tier serves and the tile (in the next inner tier) that set them.
void write_tier_ops(std::ostream& out, const RunResult& result,
                    const std::vector<std::size_t>& rows) {
  const Roofs& roofs = result.roofs;
  out << "Tiles of the top ops (per instance: bytes each tier serves, and the bm×bn×bk tile the "
         "tier inside it holds; * = an operand stays resident, read once)\n";
  std::vector<TextTable::Column> columns{{"op", Align::left}};
  for (const MemoryTier& tier : roofs.memory) {
    columns.push_back({tier.name});
  }
  for (std::size_t index = 1; index < roofs.memory.size(); ++index) {
    columns.push_back({"tile in " + roofs.memory[index].name, Align::left});
  }
  columns.push_back({"bound", Align::left});
  TextTable table(columns);
  for (std::size_t row : rows) {
    const Op& op = result.graph.op(result.table.order[row]);
    const OpCost& cost = result.table.costs[row];
    std::vector<std::string> cells{op.qualified_name()};
    for (const TierCost& tier : cost.tiers) {
      cells.push_back(tier_cell(tier.bytes, tier.time, tier.timed));
    }
    for (std::size_t index = 0; index + 1 < cost.tiers.size(); ++index) {
      const TierCost& tier = cost.tiers[index];
      cells.push_back(tier.tile ? to_string(*tier.tile) + (tier.operand_resident ? "*" : "")
                                : std::string("-"));
    }
    cells.push_back(bound_label(cost.bound, cost.bound_tier));
    table.add_row(cells);
  }
  table.print(out, "  ");
  out << '\n';
}

void write_top_ops(std::ostream& out, const RunResult& result, std::size_t limit) {
  std::vector<std::size_t> rows(result.table.order.size());
  std::iota(rows.begin(), rows.end(), 0);
  const auto total_lower = [&](std::size_t row) {
    return result.table.costs[row].t_lower.si() *
           result.table.counts(static_cast<Eigen::Index>(row));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t left, std::size_t right) {
    return total_lower(left) > total_lower(right);
  });
  if (limit > 0 && rows.size() > limit) {
    rows.resize(limit);
  }
  out << fmt::format(
      "Top {} ops by time (per instance, then × count; FLOP/B: against the tiled {} bytes, ideal: "
      "each operand read once; crit. tokens: the token batch where a matmul meets the ridge)\n",
      rows.size(), result.roofs.main_memory().name);
  TextTable table({{"op", Align::left},
                   {"count"},
                   {"FLOPs"},
                   {"bytes"},
                   {"FLOP/B"},
                   {"ideal"},
                   {"T_math"},
                   {"T_mem"},
                   {"T_net"},
                   {"bound", Align::left},
                   {"lower × count"},
                   {"share"},
                   {"crit. tokens"}});
  const double total = result.bounds.total.t_lower.si();
  for (std::size_t row : rows) {
    const Op& op = result.graph.op(result.table.order[row]);
    const OpCost& cost = result.table.costs[row];
    table.add_row({op.qualified_name(), fmt::format("{}", op.count), flops(cost.flops),
                   bytes(cost.bytes), fmt::format("{:.4g}", cost.intensity),
                   fmt::format("{:.4g}", cost.ideal_intensity), seconds(cost.t_math),
                   seconds(cost.t_mem), seconds(cost.t_net),
                   bound_label(cost.bound, cost.bound_tier), seconds(total_lower(row)),
                   percent(total_lower(row) / total),
                   result.critical[row] ? describe_critical(result.critical[row]) : "-"});
  }
  table.print(out, "  ");
  out << '\n';
  write_tier_ops(out, result, rows);
}

void write_references(std::ostream& out, const RunResult& result) {
  if (result.scenario.references.empty()) {
    return;
  }
  out << "Against measurements (roofline lower bound / measured = the fraction of the roof the "
         "measured run reached)\n";
  TextTable table({{"scope", Align::left},
                   {"measured"},
                   {"lower"},
                   {"upper"},
                   {"lower / measured"},
                   {"source", Align::left}});
  for (const Reference& reference : result.scenario.references) {
    const Totals* totals = &result.bounds.total;
    for (const GroupBounds& stage : result.bounds.stages) {
      if (stage.stage == reference.stage) {
        totals = &stage.totals;
      }
    }
    table.add_row({reference.stage.empty() ? "total" : reference.stage, seconds(reference.time),
                   seconds(totals->t_lower), seconds(totals->t_upper),
                   percent(totals->t_lower / reference.time), reference.source});
  }
  table.print(out, "  ");
  out << '\n';
}

std::string tokens_per_second(double tokens, PhaseTimes time) {
  return fmt::format("{:.4g} … {:.4g}", tokens / time.upper.si(), tokens / time.lower.si());
}

// The training summary: the passes, throughput and MFU, the pipeline bubble, the thresholds.
void write_training(std::ostream& out, const RunResult& result) {
  const Scenario& scenario = result.scenario;
  if (scenario.workload.phase != "train") {
    return;
  }
  out << "Training step by pass (per device, all microbatches)\n";
  TextTable table({{"pass", Align::left},
                   {"FLOPs"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"upper"}});
  Flops model_flops;
  for (const PassTotals& pass : pass_totals(result.graph, result.table)) {
    table.add_row({std::string(to_string(pass.pass)), format_count(pass.flops.si()),
                   seconds(pass.t_math), seconds(pass.t_mem), seconds(pass.t_net),
                   seconds(pass.t_lower), seconds(pass.t_upper)});
    if (pass.pass == Pass::forward || pass.pass == Pass::backward) {
      model_flops += pass.flops;
    }
  }
  table.print(out, "  ");
  const Totals& total = result.bounds.total;
  const Workload& workload = scenario.workload;
  const double tokens = static_cast<double>(workload.batch) * static_cast<double>(workload.seq_len);
  const double devices = static_cast<double>(scenario.plan.devices());
  const double peak = result.roofs.find_path(scenario.precision.compute)->peak.si();
  // MFU: the forward and backward FLOPs (not recomputation's) over the peak for the step time.
  out << fmt::format(
      "  step {} … {} (critical path {}); {} … {} tokens/s in all, {} … {} per device; MFU {} … "
      "{}\n",
      seconds(total.t_lower), seconds(total.t_upper), seconds(total.t_critical),
      format_count(tokens / total.t_upper.si()), format_count(tokens / total.t_lower.si()),
      format_count(tokens / devices / total.t_upper.si()),
      format_count(tokens / devices / total.t_lower.si()),
      percent(model_flops.si() / (peak * total.t_upper.si())),
      percent(model_flops.si() / (peak * total.t_lower.si())));
  if (result.pipeline) {
    const PipelineSchedule& pipeline = *result.pipeline;
    out << fmt::format(
        "  pipeline: {} stages × {} microbatches{} (1F1B): bubble (p − 1)/(v·m + p − 1) = {} of "
        "the step, {} … {} added to the bounds\n",
        pipeline.stages, pipeline.microbatches,
        pipeline.chunks > 1 ? fmt::format(" × {} chunks", pipeline.chunks) : std::string(),
        percent(pipeline.bubble_fraction), seconds(pipeline.bubble_lower),
        seconds(pipeline.bubble_upper));
  }
  for (const AxisThreshold& threshold : result.training_thresholds) {
    if (threshold.data) {
      out << fmt::format(
          "  data axis '{}' ({} over {}): the {} pass is compute-bound above {} tokens per data "
          "shard (B/X > C/W; T_net {} vs T_math {}); this step has {}{}\n",
          threshold.mesh_axis, threshold.size, threshold.network, to_string(threshold.pass),
          format_count(threshold.critical_tokens_per_shard), seconds(threshold.t_net),
          seconds(threshold.t_math), format_count(threshold.tokens_per_shard),
          threshold.tokens_per_shard >= threshold.critical_tokens_per_shard ? " (compute-bound)"
                                                                            : " (network-bound)");
    } else {
      out << fmt::format(
          "  tensor axis '{}' ({} over {}): the {} pass stays compute-bound up to {}-way (Y < "
          "F·W/C; T_net {} vs T_math {} at {}-way){}\n",
          threshold.mesh_axis, threshold.size, threshold.network, to_string(threshold.pass),
          threshold.largest_degree, seconds(threshold.t_net), seconds(threshold.t_math),
          threshold.size,
          threshold.beyond_domain ? fmt::format(", beyond the {} domain", threshold.network)
                                  : std::string());
    }
  }
  if (result.fsdp_tp) {
    const FsdpTpSplit& split = *result.fsdp_tp;
    out << fmt::format(
        "  FSDP + TP over {} devices: best split {} data × {} tensor (forward T_FSDP {}, T_TP {} "
        "vs T_math {}); compute-bound above {} tokens per device with {} × {} (this step: {})\n",
        split.data * split.tensor, split.data, split.tensor, seconds(split.t_fsdp),
        seconds(split.t_tensor), seconds(split.t_math),
        split.min_tokens_per_device > 0.0 ? format_count(split.min_tokens_per_device)
                                          : std::string("never"),
        split.min_tokens_data, split.data * split.tensor / split.min_tokens_data,
        format_count(split.tokens_per_device));
  }
  out << '\n';
}

// The decode summary: the step, its critical batch, and the request when there is one.
void write_decode(std::ostream& out, const RunResult& result) {
  if (result.scenario.workload.phase != "decode") {
    return;
  }
  const Totals& total = result.bounds.total;
  const double batch = static_cast<double>(result.scenario.workload.batch);
  const double devices = static_cast<double>(result.scenario.plan.devices());
  const PhaseTimes step{total.t_lower, total.t_upper};
  // One step emits one token per sequence: tokens/s = batch / step time.
  out << fmt::format(
      "Decode step ({} cached tokens): {} … {}; {} tokens/s in all, {} per device "
      "({} device{}).\n",
      result.scenario.workload.context, seconds(step.lower), seconds(step.upper),
      tokens_per_second(batch, step), tokens_per_second(batch / devices, step), devices,
      devices > 1.0 ? "s" : "");
  if (result.decode_critical) {
    const DecodeCritical& critical = *result.decode_critical;
    std::string matmuls = "no matmul with a batch axis";
    if (critical.matmuls) {
      matmuls = describe_critical(critical.matmuls);
      if (critical.matmuls->kind == CriticalBatch::Kind::at) {
        matmuls = fmt::format("{} sequences per device", format_count(critical.matmuls->tokens));
        if (critical.replicas > 1.0) {
          matmuls += fmt::format(" ({} in all over {:.4g} data replicas)",
                                 format_count(critical.matmuls->tokens * critical.replicas),
                                 critical.replicas);
        }
      }
    }
    out << fmt::format(
        "Critical decode batch: the step's matmuls (weights read once, shared by the batch) "
        "reach the ridge ({:.4g} FLOP/B) at {}; attention stays on the memory roof at {:.3g} "
        "FLOP/B (G = {} query heads per KV head) whatever the batch.\n",
        critical.ridge, matmuls, critical.attention_intensity, critical.group_size);
  }
  if (result.request) {
    const DecodeRequest& request = *result.request;
    const PhaseTimes whole = request.total();
    const PhaseTimes per_token = request.per_output_token();
    const double outputs = batch * static_cast<double>(request.steps + 1);
    out << fmt::format(
        "Request: prefill of {} prompt tokens (time to first token) {} … {}; {} decode steps "
        "({} … {} cached tokens: {} … {} per step at the first, {} … {} at the last) {} … {}; "
        "total {} … {}; {} … {} per output token after the first; {} output tokens per "
        "sequence: {} tokens/s in all, {} per device. Σ steps {}.\n",
        request.prompt_tokens, seconds(request.prefill.lower), seconds(request.prefill.upper),
        request.steps, request.prompt_tokens, request.prompt_tokens + request.steps - 1,
        seconds(request.first_step.lower), seconds(request.first_step.upper),
        seconds(request.last_step.lower), seconds(request.last_step.upper),
        seconds(request.decode.lower), seconds(request.decode.upper), seconds(whole.lower),
        seconds(whole.upper), seconds(per_token.lower), seconds(per_token.upper), request.steps + 1,
        tokens_per_second(outputs, whole), tokens_per_second(outputs / devices, whole),
        request.affine ? "exact from the two ends: the step time is affine in the context"
                       : fmt::format("over every step ({} cost-model runs): the step time is "
                                     "not affine in the context",
                                     request.evaluations));
  }
}

}  // namespace

std::string describe_critical(const std::optional<CriticalBatch>& critical) {
  if (!critical) {
    return "-";
  }
  switch (critical->kind) {
    case CriticalBatch::Kind::at:
      return format_count(critical->tokens);
    case CriticalBatch::Kind::always:
      return "always";
    case CriticalBatch::Kind::never:
      return "never";
  }
  return "-";
}

void write_run_text(std::ostream& out, const RunResult& result, const TextOptions& options) {
  write_header(out, result);
  write_memory(out, result);
  write_stages(out, result);
  write_tier_stages(out, result);
  write_top_ops(out, result, options.top_ops);
  write_references(out, result);
  const Totals& total = result.bounds.total;
  // The memory side is the tier with the largest Σ time (DRAM, or L2 on an H100 GEMM).
  const auto [side_tier, t_memory] = memory_side(total);
  const std::string memory_name = side_tier.empty() ? result.roofs.main_memory().name : side_tier;
  if (!result.footprint.fits()) {
    out << fmt::format("DOES NOT FIT in memory ({} needed per device, {} available): if it fit,\n",
                       bytes(result.footprint.total()), bytes(result.footprint.capacity));
  }
  out << fmt::format(
      "Bound: {} lower (ops in sequence, each overlapped) … {} upper (nothing "
      "overlapped); {}-bound overall: {} of ΣT_math + ΣT_{} + ΣT_net is on that roof.\n",
      seconds(total.t_lower), seconds(total.t_upper), bound_label(total.bound, total.bound_tier),
      percent(std::max({total.t_math, t_memory, total.t_net}) /
              (total.t_math + t_memory + total.t_net)),
      memory_name);
  if (result.critical_d) {
    out << fmt::format(
        "Critical D: the D-sharded matmuls escape the network roof above a model "
        "width of {} (D · T_net / T_math; T_net does not grow with D).\n",
        format_count(*result.critical_d));
  }
  write_decode(out, result);
  write_training(out, result);
  if (total.t_net.si() > 0.0) {
    std::vector<std::string> tiers;
    for (std::size_t index = 0; index < total.t_net_by_tier.size(); ++index) {
      tiers.push_back(fmt::format("{} {} for {}", total.t_net_by_tier[index].first,
                                  seconds(total.t_net_by_tier[index].second),
                                  bytes(total.net_bytes_by_tier[index].second)));
    }
    out << fmt::format(
        "Network: ΣT_net {} ({}); the critical path overlaps it down to {}; full "
        "overlap ({}) needs {} hidden.\n",
        seconds(total.t_net), fmt::join(tiers, ", "), seconds(total.t_critical),
        seconds(total.t_overlapped), seconds(total.t_lower - total.t_overlapped));
  }
}

void write_whatif_text(std::ostream& out, const std::vector<RunResult>& runs) {
  const RunResult& baseline = runs.front();
  out << fmt::format("What if: {}  ({})\n\n", baseline.scenario.name, baseline.scenario.file);
  TextTable table({{"variant", Align::left},
                   {"hardware · mode", Align::left},
                   {"plan", Align::left},
                   {"precision (W/A/KV → path)", Align::left},
                   {"batch"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"upper"},
                   {"bound", Align::left},
                   {"DRAM bytes"},
                   {"weights/device"},
                   {"KV/device"},
                   {"critical D"},
                   {"fits", Align::left},
                   {"lower vs base"}});
  for (const RunResult& run : runs) {
    const Scenario& scenario = run.scenario;
    const Precision& precision = scenario.precision;
    const Totals& totals = run.bounds.total;
    std::string path = precision.compute;
    if (!precision.requested_compute.empty()) {
      path += fmt::format(" (fallback for {})", precision.requested_compute);
    }
    std::string dtypes =
        fmt::format("{}/{}/{} → {}", to_string(precision.weights), to_string(precision.activations),
                    to_string(precision.kv_cache), path);
    if (!scenario.per_batch_weights.empty()) {
      dtypes += fmt::format(", per-batch {}", fmt::join(scenario.per_batch_weights, "+"));
    }
    table.add_row(
        {scenario.variant.empty() ? "baseline" : scenario.variant,
         fmt::format("{} · {}", std::filesystem::path(scenario.hardware.file).stem().string(),
                     run.roofs.mode),
         run.scenario.plan.devices() > 1
             ? fmt::format("{} ×{}", run.scenario.plan.name, run.scenario.plan.devices())
             : std::string("single"),
         dtypes, fmt::format("{}", scenario.workload.batch), seconds(totals.t_math),
         seconds(totals.t_mem), seconds(totals.t_net), seconds(totals.t_lower),
         seconds(totals.t_upper), std::string(to_string(totals.bound)), bytes(totals.bytes),
         bytes(run.footprint.weights), bytes(run.footprint.kv_cache),
         run.critical_d ? format_count(*run.critical_d) : std::string("-"),
         run.footprint.fits() ? "yes" : "NO",
         fmt::format("{:.3g}×", totals.t_lower / baseline.bounds.total.t_lower)});
  }
  table.print(out, "  ");
  // The fastest plan that fits in memory: one that does not is no plan at all.
  const auto fastest = std::min_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return std::pair{!a.footprint.fits(), a.bounds.total.t_lower} <
           std::pair{!b.footprint.fits(), b.bounds.total.t_lower};
  });
  const bool same_workload = std::all_of(runs.begin(), runs.end(), [&](const RunResult& run) {
    return run.scenario.workload.batch == baseline.scenario.workload.batch &&
           run.scenario.model.name == baseline.scenario.model.name;
  });
  if (same_workload) {
    out << fmt::format("\n  fastest (lower bound) that fits in memory: {}\n",
                       !fastest->footprint.fits()          ? "none fits"
                       : fastest->scenario.variant.empty() ? "baseline"
                                                           : fastest->scenario.variant);
  }
  out << "\nCritical token batch per matmul group (the group's Σ FLOPs / Σ bytes meets the ridge;\n"
         "never: its intensity cannot reach it; tokens = batch × the stage's tokens)\n";
  std::vector<TextTable::Column> columns{{"stage/group", Align::left}};
  for (const RunResult& run : runs) {
    columns.push_back({run.scenario.variant.empty() ? "baseline" : run.scenario.variant});
  }
  TextTable groups(columns);
  for (const GroupCritical& group : baseline.group_critical) {
    std::vector<std::string> row{group.stage + "/" + group.group};
    for (const RunResult& run : runs) {
      std::string cell = "-";
      for (const GroupCritical& other : run.group_critical) {
        if (other.stage == group.stage && other.group == group.group) {
          cell = describe_critical(other.critical);
        }
      }
      row.push_back(cell);
    }
    groups.add_row(row);
  }
  groups.print(out, "  ");
}

void write_roofs_text(std::ostream& out, const Roofs& roofs) {
  out << fmt::format("{}, mode {}{}\n\n", roofs.hardware, roofs.mode,
                     roofs.unified_memory ? " (unified memory)" : "");
  TextTable compute({{"compute path", Align::left},
                     {"peak"},
                     {"unit", Align::left},
                     {"provenance", Align::left}});
  for (const ComputePath& path : roofs.compute) {
    compute.add_row({path.name, rate(path.peak), std::string(to_string(path.unit)),
                     path.provenance.derived.empty() ? path.provenance.source
                                                     : "derived: " + path.provenance.derived});
  }
  compute.print(out, "  ");
  out << '\n';
  TextTable memory(
      {{"memory tier", Align::left}, {"bandwidth"}, {"capacity"}, {"provenance", Align::left}});
  for (const MemoryTier& tier : roofs.memory) {
    const std::string capacity =
        tier.count > 1
            ? fmt::format("{} × {} {}", format_capacity(tier.capacity.si()), tier.count, tier.per)
            : format_capacity(tier.capacity.si());
    memory.add_row({tier.name, tier.bandwidth ? rate(*tier.bandwidth) : "(capacity only)", capacity,
                    tier.provenance.derived.empty() ? tier.provenance.source
                                                    : "derived: " + tier.provenance.derived});
  }
  memory.print(out, "  ");
  out << '\n';
  if (!roofs.network.empty()) {
    TextTable network({{"network tier", Align::left},
                       {"topology", Align::left},
                       {"bandwidth (one way)"},
                       {"devices"},
                       {"hop latency"},
                       {"provenance", Align::left}});
    for (const NetworkTier& tier : roofs.network) {
      const std::string per = tier.topology == Topology::torus ? " per link" : " per device";
      network.add_row({tier.name,
                       std::string(to_string(tier.topology)) +
                           (tier.in_network_reduction ? " (in-network reduction)" : ""),
                       rate(tier.bandwidth) + per,
                       tier.devices > 0 ? fmt::format("{}", tier.devices) : "-",
                       tier.hop_latency ? seconds(*tier.hop_latency) : "-",
                       tier.provenance.derived.empty() ? tier.provenance.source
                                                       : "derived: " + tier.provenance.derived});
    }
    network.print(out, "  ");
    out << '\n';
  }
  TextTable ridge_table({{"ridge (FLOP/B)", Align::left}, {"tier"}, {"ridge"}});
  for (const Ridge& ridge : ridges(roofs)) {
    ridge_table.add_row({ridge.path, ridge.tier, format_count(ridge.flops_per_byte)});
  }
  ridge_table.print(out, "  ");
}

void write_threshold_text(std::ostream& out, const ThresholdQuery& query,
                          const ThresholdResult& result) {
  const std::string scope = query.scope.empty() ? "the whole run" : query.scope;
  const std::string roof = query.roof == Bound::network ? "ΣT_net" : "ΣT_mem";
  if (!result.value) {
    out << fmt::format(
        "{}: ΣT_math stays below {} over {} up to {} (there ΣT_math = {}, {} = {}); "
        "it never turns compute-bound in this parameter\n",
        query.key, roof, scope, query.high, seconds(result.t_math), roof, seconds(result.t_roof));
    return;
  }
  out << fmt::format(
      "{}: ΣT_math reaches {} over {} at {} (ΣT_math = {}, {} = {}; {} evaluations "
      "of the cost model)\n",
      query.key, roof, scope, *result.value, seconds(result.t_math), roof, seconds(result.t_roof),
      result.evaluations);
}

void write_collective_text(std::ostream& out, const CollectiveResult& result) {
  const Collective& collective = result.collective;
  const CollectiveCost& cost = result.cost;
  out << fmt::format("{} of {} over {} ({}, axes [{}]{}) on {}\n\n", to_string(collective.kind),
                     bytes(collective.bytes), result.tier.name, to_string(result.tier.topology),
                     fmt::join(collective.axes, " × "),
                     result.tier.topology == Topology::torus
                         ? (collective.wraparound ? ", wraparound" : ", no wraparound")
                         : "",
                     result.hardware);
  TextTable table({{"quantity", Align::left}, {"value"}});
  table.add_row({"algorithm", cost.algorithm});
  table.add_row({"link bandwidth (one way)", rate(result.tier.bandwidth)});
  table.add_row({"hops", fmt::format("{}", cost.hops)});
  table.add_row({"bytes sent per device", bytes(cost.bytes_per_device)});
  table.add_row({"bandwidth term", seconds(cost.bandwidth_time)});
  table.add_row({"latency term", result.tier.hop_latency
                                     ? seconds(cost.latency_time)
                                     : std::string("(no latency figure for this tier)")});
  table.add_row({"time", fmt::format("{} ({}-bound)", seconds(cost.time),
                                     cost.latency_bound ? "latency" : "bandwidth")});
  table.print(out, "  ");
}

void write_matmul_text(std::ostream& out, const MatmulResult& result) {
  const Op& op = result.op;
  const OpCost& cost = result.cost;
  out << fmt::format(
      "{} · {} → {} on {}, mode {}{}\n\n", op.inputs[0].shape(), op.inputs[1].shape(),
      op.outputs[0].shape(), result.roofs.hardware, result.roofs.mode,
      result.plan.devices > 1 ? fmt::format(" — per device of {}, sharded over {}",
                                            result.plan.devices, to_string(result.plan.shard))
                              : std::string());
  TextTable table({{"quantity", Align::left}, {"value"}, {"formula", Align::left}});
  table.add_row({"FLOPs", flops(cost.flops), "2 × B × D × F"});
  table.add_row(
      {"ideal bytes", bytes(cost.ideal_bytes),
       fmt::format("read once: s_x·BD + s_w·{}DF + s_o·BF (s = {}, {}, {} B)",
                   op.inputs[1].has_axis("batch") ? "B·" : "",
                   bytes_per_element(op.inputs[0].dtype), bytes_per_element(op.inputs[1].dtype),
                   bytes_per_element(op.outputs[0].dtype))});
  for (const TierCost& tier : cost.tiers) {
    table.add_row({tier.tier + " serves", tier_cell(tier.bytes, tier.time, tier.timed),
                   tier.tile ? fmt::format("{:.4g} FLOP/B; tile {}{} in {}",
                                           cost.flops.si() / tier.bytes.si(), to_string(*tier.tile),
                                           tier.operand_resident ? " (an operand resident)" : "",
                                           tier.tile_tier)
                             : std::string("each byte once")});
  }
  table.add_row({"intensity", fmt::format("{:.4g} FLOP/B", cost.intensity),
                 fmt::format("FLOPs / {} bytes (ideal {:.4g})", result.roofs.main_memory().name,
                             cost.ideal_intensity)});
  table.add_row({"critical intensity", fmt::format("{:.4g} FLOP/B", cost.critical_intensity),
                 fmt::format("peak {} / bandwidth", op.compute_path)});
  table.add_row({"T_math", seconds(cost.t_math), "FLOPs / peak"});
  table.add_row({"T_comms (memory)", seconds(cost.t_mem),
                 fmt::format("{} bytes / bandwidth", result.roofs.main_memory().name)});
  if (result.collective) {
    const CollectiveCost& collective = *result.collective_cost;
    table.add_row(
        {"T_net", seconds(result.t_net),
         fmt::format("{} of {} over {} ({}, {} hops{})", to_string(result.collective->kind),
                     bytes(result.collective->bytes), result.plan.network, collective.algorithm,
                     collective.hops, collective.latency_bound ? ", latency-bound" : "")});
  }
  table.add_row({"lower bound", seconds(result.t_lower), "max of the roofs (full overlap)"});
  table.add_row({"upper bound", seconds(result.t_upper), "sum of the roofs (no overlap)"});
  table.add_row({"bound", bound_label(result.bound, result.cost.bound_tier), "the largest term"});
  table.add_row({"critical batch", describe_critical(result.critical),
                 "B (per device) where intensity = critical intensity (exact root)"});
  if (result.critical_d) {
    table.add_row({"critical D", format_count(*result.critical_d),
                   "D above which T_math > T_net (the all-reduce does not grow with D)"});
  }
  table.print(out, "  ");
}

}  // namespace rsim
