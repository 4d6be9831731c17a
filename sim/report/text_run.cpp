// SPDX-License-Identifier: MIT
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"
#include "sim/report/text_run_phases.hpp"
#include "sim/spec/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace rsim {
namespace {

using Align = TextTable::Align;

void add_totals_row(TextTable& table, const std::string& label, const std::string& steps,
                    const Totals& totals) {
  table.add_row({label, steps, flops(totals.flops), bytes(totals.bytes), seconds(totals.t_math),
                 seconds(totals.t_mem), seconds(totals.t_net), seconds(totals.t_lower),
                 seconds(totals.t_expected), seconds(totals.t_upper), seconds(totals.t_critical),
                 seconds(totals.t_overlapped), std::string(to_string(totals.bound))});
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
  // The answer first: the bounds, the expected time, the roof, whether it fits, tokens/s.
  const Totals& total = result.bounds.total;
  std::string tokens;
  if (scenario.workload.phase == Phase::decode && total.t_expected.si() > 0.0) {
    tokens = fmt::format("; {:.4g} tokens/s expected",
                         static_cast<double>(scenario.workload.batch) / total.t_expected.si());
  }
  out << fmt::format(
      "  result     {} … {} (lower … upper bound), expected {}; {}-bound; {} ({} of "
      "{} per device){}\n",
      seconds(total.t_lower), seconds(total.t_upper), seconds(total.t_expected),
      bound_label(total.bound, total.bound_tier), result.footprint.fits() ? "fits" : "DOES NOT FIT",
      bytes(result.footprint.total()), bytes(result.footprint.capacity), tokens);
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
  if (workload.phase == Phase::train) {
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
        workload.phase != Phase::decode ? "prefill"
        : workload.decode_steps > 0     ? "decode request (prompt prefill + decode steps)"
                                        : "decode step",
        workload.batch,
        workload.phase != Phase::decode ? std::string()
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
  if (workload.phase == Phase::decode) {
    // A step holds its cached context and its new token; a request's last step the most.
    when = fmt::format("; KV cache of {} tokens per sequence{}",
                       kv_tokens_per_sequence(workload, scenario.model),
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
  const bool training = workload.phase == Phase::train;
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
  out << "Stages (all steps; lower = Σ per-op max, expected = Σ per-op expected, upper = Σ per-op\n"
         "sum, critical path = a device and a network stream overlapping independent ops,\n"
         "overlapped = max(ΣT_math, ΣT_mem, ΣT_net))\n";
  TextTable table({{"stage", Align::left},
                   {"runs"},
                   {"FLOPs"},
                   {"DRAM bytes"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"expected"},
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
        if (graph_stage.name == stage.stage && block.block == Block::layer) {
          runs *= graph_stage.layers;
        }
      }
      add_totals_row(table, "  " + std::string(to_string(block.block)), fmt::format("{}", runs),
                     block.totals);
    }
  }
  table.add_rule();
  add_totals_row(table, "total", "", result.bounds.total);
  table.print(out, "  ");
  out << '\n';
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
  out << fmt::format(
      "Expected: {} ({:.2f}× the lower bound): each op at the fraction of its roofs real kernels "
      "reach, a launch gap per kernel, collectives with their latency and exposed unless the "
      "scenario overlaps them (the hardware's efficiency:, docs/design/expected.md).\n",
      seconds(total.t_expected), total.t_lower.si() > 0.0 ? total.t_expected / total.t_lower : 1.0);
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

}  // namespace rsim
