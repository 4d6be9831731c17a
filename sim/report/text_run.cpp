// SPDX-License-Identifier: MIT
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"
#include "sim/report/text_run_phases.hpp"
#include "sim/report/text_width.hpp"
#include "sim/spec/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace rsim {
namespace {

using Align = TextTable::Align;

// One device has no network: its columns would be a column of zeros.
bool has_network(const RunResult& result) { return result.scenario.plan.devices() > 1; }

void add_totals_row(TextTable& table, const std::string& label, const std::string& steps,
                    const Totals& totals, bool network) {
  std::vector<std::string> cells{label,
                                 steps,
                                 flops(totals.flops),
                                 bytes(totals.bytes),
                                 seconds(totals.t_math),
                                 seconds(totals.t_mem)};
  if (network) {
    cells.push_back(seconds(totals.t_net));
  }
  for (const Seconds time : {totals.t_lower, totals.t_expected, totals.t_upper}) {
    cells.push_back(seconds(time));
  }
  if (network) {
    cells.push_back(seconds(totals.t_critical));
  }
  cells.push_back(seconds(totals.t_overlapped));
  cells.push_back(bound_label(totals.bound, totals.bound_tier));
  table.add_row(cells);
}

// "  key        value", the value wrapped to the stream's width under its own first column.
void write_field(std::ostream& out, const std::string& key, const std::string& value) {
  write_wrapped(out, value, fmt::format("  {:<11}", key), std::string(13, ' '));
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
  write_wrapped(
      out, fmt::format("{}{}  ({})", scenario.name,
                       scenario.variant.empty() ? std::string()
                                                : fmt::format(" — variant '{}'", scenario.variant),
                       scenario_source(scenario)));
  out << '\n';
  // The answer first: the bounds, the expected time, the roof, whether it fits, tokens/s.
  const Totals& total = result.bounds.total;
  std::string tokens;
  if (scenario.workload.phase == Phase::decode && total.t_expected.si() > 0.0) {
    tokens = fmt::format(
        "; {} tokens/s expected",
        format_plain(static_cast<double>(scenario.workload.batch) / total.t_expected.si()));
  }
  write_field(
      out, "result",
      fmt::format("{} … {} (lower … upper bound), expected {}; bound by {}; {} ({} of "
                  "{} per device){}",
                  seconds(total.t_lower), seconds(total.t_upper), seconds(total.t_expected),
                  bound_label(total), result.footprint.fits() ? "fits" : "DOES NOT FIT",
                  bytes(result.footprint.total()), bytes(result.footprint.capacity), tokens));
  write_field(
      out, "hardware",
      fmt::format("{}, mode {}{}", roofs.hardware, roofs.mode,
                  roofs.unified_memory ? " (unified memory: the CPU shares DRAM bandwidth)" : ""));
  write_field(
      out, "roofs",
      fmt::format("{} {} ({}) · {} {} · ridge {} FLOP/B · elementwise on {} {}", path.name,
                  rate(path.peak), to_string(path.unit), memory.name, rate(*memory.bandwidth),
                  format_plain(ridge(path.peak, *memory.bandwidth)), vector.name,
                  rate(vector.peak)));
  const ParameterCount& parameters = result.parameters;
  write_field(
      out, "model",
      fmt::format("{}: {} parameters{}; {}", scenario.model.name,
                  format_parameters(static_cast<double>(parameters.total())),
                  parameters.inactive_experts > 0
                      ? fmt::format(" ({} active per token: top-k experts)",
                                    format_parameters(static_cast<double>(parameters.active())))
                      : std::string(),
                  fmt::join(stage_names, ", ")));
  const Workload& workload = scenario.workload;
  if (workload.phase == Phase::train) {
    const Training& training = workload.training;
    write_field(
        out, "workload",
        fmt::format(
            "train step: {} sequences × {} tokens ({} tokens) in {} microbatch{} of {}; "
            "recompute {}; optimizer {}{}",
            workload.batch, workload.seq_len,
            format_count(static_cast<double>(workload.batch) *
                         static_cast<double>(workload.seq_len)),
            training.microbatches, training.microbatches > 1 ? "es" : "", workload.microbatch(),
            to_string(training.recompute), to_string(training.optimizer),
            training.pipeline_interleave > 1
                ? fmt::format("; {} layer chunks per pipeline stage", training.pipeline_interleave)
                : std::string()));
  } else {
    write_field(
        out, "workload",
        fmt::format(
            "{}, batch {}{}",
            workload.phase != Phase::decode ? "prefill"
            : workload.decode_steps > 0     ? "decode request (prompt prefill + decode steps)"
                                            : "decode step",
            workload.batch,
            workload.phase != Phase::decode ? std::string()
            : workload.decode_steps > 0
                ? fmt::format(
                      ", prompt (context) {} tokens, {} decode steps; the tables below are its "
                      "first step",
                      workload.context, workload.decode_steps)
                : fmt::format(", context {} tokens", workload.context)));
  }
  write_field(out, "precision", describe(precision));
  if (!scenario.per_batch_weights.empty()) {
    write_field(out, "per-batch",
                fmt::format("weights of: {} (one copy per sequence)",
                            fmt::join(scenario.per_batch_weights, ", ")));
  }
  // A training step's loss runs the engine's kernels unless fused into the LM head.
  const bool loss_kernels =
      scenario.workload.phase == Phase::train && !scenario.fusion.is_fused(ElementwiseKind::loss);
  write_field(
      out, "fusion",
      fmt::format("attention {}; into matmul: {}{}",
                  scenario.fusion.attention_fused()
                      ? std::string("fused (FMHA)")
                      : std::string(to_string(scenario.fusion.attention)),
                  fused.empty() ? std::string("none") : fmt::format("{}", fmt::join(fused, ", ")),
                  loss_kernels ? fmt::format("; loss: {}", to_string(scenario.fusion.loss))
                               : std::string()));
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
    write_field(out, "plan",
                fmt::format("{} on {} devices {{{}}}; rules: {}; figures are per device", plan.name,
                            plan.devices(), fmt::join(mesh, ", "), fmt::join(rules, ", ")));
  }
  for (const std::string& note : result.notes) {
    write_field(out, "note", note);
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
  write_wrapped(
      out, fmt::format("Memory per device ({}{}{})", memory.name,
                       scenario.host_share.si() > 0.0
                           ? fmt::format(", less {} left to the host", bytes(scenario.host_share))
                           : std::string(),
                       when));
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
    write_wrapped(
        out,
        fmt::format("fits: {} of {} used", bytes(footprint.total()), bytes(footprint.capacity)),
        "  ", "    ");
    out << '\n';
  } else {
    write_wrapped(out,
                  fmt::format("DOES NOT FIT: needs {} per device, {} available (short by {}); the "
                              "times below are what the plan would take if it fit",
                              bytes(footprint.total()), bytes(footprint.capacity),
                              bytes(Bytes(0.0) - footprint.free())),
                  "  ", "  ");
    out << '\n';
  }
}

void write_stages(std::ostream& out, const RunResult& result) {
  const bool network = has_network(result);
  write_wrapped(out, network
                         ? "Stages (all steps; lower = Σ per-op max, expected = Σ per-op expected, "
                           "upper = Σ per-op sum, critical path = a device and a network stream "
                           "overlapping independent ops, overlapped = max(ΣT_math, ΣT_mem, ΣT_net))"
                         : "Stages (all steps; lower = Σ per-op max, expected = Σ per-op expected, "
                           "upper = Σ per-op sum, overlapped = max(ΣT_math, ΣT_mem))");
  std::vector<TextTable::Column> columns{
      {"stage", Align::left},
      {"runs", Align::right, 1},
      {"FLOPs", Align::right, 3},
      {result.roofs.main_memory().name + " bytes", Align::right, 2},
      {"ΣT_math"},
      {"ΣT_mem"}};
  if (network) {
    columns.push_back({"ΣT_net"});
  }
  columns.insert(columns.end(), {{"lower"}, {"expected"}, {"upper"}});
  if (network) {
    columns.push_back({"critical path", Align::right, 4});
  }
  columns.push_back({"overlapped", Align::right, 5});
  columns.push_back({"bound", Align::left});
  TextTable table(columns);
  for (const GroupBounds& stage : result.bounds.stages) {
    add_totals_row(table, stage.stage, fmt::format("{}", stage.steps), stage.totals, network);
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
                     block.totals, network);
    }
  }
  table.add_rule();
  add_totals_row(table, "total", "", result.bounds.total, network);
  table.print(out, "  ");
  out << '\n';
}

// Σ bytes (and time, where the tier has a bandwidth) per memory tier, per stage: how far the
// tiled main-memory traffic is from the read-once ideal, and which tier holds the memory side.
void write_tier_stages(std::ostream& out, const RunResult& result) {
  const Roofs& roofs = result.roofs;
  write_wrapped(out, fmt::format("Memory tiers (all steps; each tier serves the traffic of the "
                                 "best tile that fits the tier inside it; {} vs ideal = tiled / "
                                 "read-once bytes)",
                                 roofs.main_memory().name));
  // Narrowing hides the innermost tiers first: the main memory is what bounds most runs.
  std::vector<TextTable::Column> columns{{"stage", Align::left}};
  for (std::size_t index = 0; index < roofs.memory.size(); ++index) {
    const MemoryTier& tier = roofs.memory[index];
    columns.push_back({tier.bandwidth ? tier.name + " bytes, time" : tier.name + " bytes",
                       Align::right, static_cast<int>(index) + 1});
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
  write_wrapped(out,
                "Tiles of the top ops (per instance: bytes each tier serves, and the "
                "bm×bn×bk tile the tier inside it holds; * = an operand stays resident, read "
                "once)");
  const int tiers = static_cast<int>(roofs.memory.size());
  std::vector<TextTable::Column> columns{{"op", Align::left}};
  for (int index = 0; index < tiers; ++index) {
    columns.push_back({roofs.memory[static_cast<std::size_t>(index)].name, Align::right,
                       index == 0 ? 0 : index + tiers});
  }
  for (int index = 1; index < tiers; ++index) {
    columns.push_back(
        {"tile in " + roofs.memory[static_cast<std::size_t>(index)].name, Align::left, index});
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
    cells.push_back(bound_label(op, cost));
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
  write_wrapped(out, fmt::format("Top {} ops by time (per instance, then × count; FLOP/B: "
                                 "against the tiled {} bytes, ideal: each operand read once; "
                                 "crit. tokens: the token batch where a matmul meets the ridge)",
                                 rows.size(), result.roofs.main_memory().name));
  const bool network = has_network(result);
  std::vector<TextTable::Column> columns{{"op", Align::left},
                                         {"count", Align::right, 2},
                                         {"FLOPs", Align::right, 5},
                                         {"bytes", Align::right, 1},
                                         {"FLOP/B", Align::right, 3},
                                         {"ideal", Align::right, 6},
                                         {"T_math"},
                                         {"T_mem"}};
  if (network) {
    columns.push_back({"T_net"});
  }
  columns.insert(
      columns.end(),
      {{"bound", Align::left}, {"lower × count"}, {"share"}, {"crit. tokens", Align::right, 4}});
  TextTable table(columns);
  const double total = result.bounds.total.t_lower.si();
  for (std::size_t row : rows) {
    const Op& op = result.graph.op(result.table.order[row]);
    const OpCost& cost = result.table.costs[row];
    std::vector<std::string> cells{
        op.qualified_name(),  fmt::format("{}", op.count),  flops(cost.flops),
        bytes(cost.bytes),    format_plain(cost.intensity), format_plain(cost.ideal_intensity),
        seconds(cost.t_math), seconds(cost.t_mem)};
    if (network) {
      cells.push_back(seconds(cost.t_net));
    }
    cells.insert(
        cells.end(),
        {bound_label(op, cost), seconds(total_lower(row)), percent(total_lower(row) / total),
         result.critical[row] ? describe_critical(result.critical[row]) : "-"});
    table.add_row(cells);
  }
  table.print(out, "  ");
  out << '\n';
  write_tier_ops(out, result, rows);
}

void write_references(std::ostream& out, const RunResult& result) {
  if (result.scenario.references.empty()) {
    return;
  }
  write_wrapped(out,
                "Against measurements (roofline lower bound / measured = the fraction of the "
                "roof the measured run reached; expected / measured: how close the expected time "
                "came; the sources below the table)");
  TextTable table({{"scope", Align::left},
                   {"measured"},
                   {"lower"},
                   {"expected"},
                   {"upper", Align::right, 2},
                   {"lower / measured", Align::right, 3},
                   {"expected / measured", Align::right, 1},
                   {"source", Align::left}});
  std::size_t number = 0;
  for (const Reference& reference : result.scenario.references) {
    const Totals* totals = &result.bounds.total;
    for (const GroupBounds& stage : result.bounds.stages) {
      if (stage.stage == reference.stage) {
        totals = &stage.totals;
      }
    }
    table.add_row({reference.stage.empty() ? "total" : reference.stage, seconds(reference.time),
                   seconds(totals->t_lower), seconds(totals->t_expected), seconds(totals->t_upper),
                   percent(totals->t_lower / reference.time),
                   percent(totals->t_expected / reference.time), fmt::format("[{}]", ++number)});
  }
  table.print(out, "  ");
  number = 0;
  for (const Reference& reference : result.scenario.references) {
    const std::string mark = fmt::format("  [{}] ", ++number);
    write_wrapped(out, reference.source, mark, std::string(display_width(mark), ' '));
  }
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

std::string scenario_source(const Scenario& scenario) {
  return scenario.changes.empty()
             ? scenario.file
             : fmt::format("{}; changed: {}", scenario.file, fmt::join(scenario.changes, ", "));
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
    write_wrapped(out,
                  fmt::format("DOES NOT FIT in memory ({} needed per device, {} available): "
                              "if it fit,",
                              bytes(result.footprint.total()), bytes(result.footprint.capacity)));
  }
  write_wrapped(
      out, fmt::format("Bound: {} lower (ops in sequence, each overlapped) … {} upper (nothing "
                       "overlapped); bound by {} overall: {} of ΣT_math + ΣT_{}{} is on that roof.",
                       seconds(total.t_lower), seconds(total.t_upper), bound_label(total),
                       percent(std::max({total.t_math, t_memory, total.t_net}) /
                               (total.t_math + t_memory + total.t_net)),
                       memory_name, has_network(result) ? " + ΣT_net" : ""));
  write_wrapped(
      out,
      fmt::format(
          "Expected: {} ({:.2f}× the lower bound): each op at the fraction of its roofs real "
          "kernels "
          "reach, a launch gap per kernel, collectives with their latency and exposed unless the "
          "scenario overlaps them (the hardware's efficiency:, docs/design/expected.md).",
          seconds(total.t_expected),
          total.t_lower.si() > 0.0 ? total.t_expected / total.t_lower : 1.0));
  if (result.critical_d) {
    write_wrapped(
        out, fmt::format("Critical D: the D-sharded matmuls escape the network roof above a model "
                         "width of {} (D · T_net / T_math; T_net does not grow with D).",
                         format_count(*result.critical_d)));
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
    write_wrapped(
        out, fmt::format("Network: ΣT_net {} ({}); the critical path overlaps it down to {}; full "
                         "overlap ({}) needs {} hidden.",
                         seconds(total.t_net), fmt::join(tiers, ", "), seconds(total.t_critical),
                         seconds(total.t_overlapped), seconds(total.t_lower - total.t_overlapped)));
  }
}

}  // namespace rsim
