// SPDX-License-Identifier: MIT
#include "sim/cost/gemm_quantization.hpp"
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

using Align = TextTable::Align;

}  // namespace

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
  if (result.no_traffic) {
    write_wrapped(out,
                  fmt::format("{}: no network traffic over {} (the plan has no collectives there): "
                              "ΣT_net stays 0 s, nothing for ΣT_math to reach",
                              query.key, scope));
    return;
  }
  if (!result.value && result.largest_fitting) {
    write_wrapped(
        out,
        fmt::format(
            "{}: ΣT_math stays below {} over {} up to {}, the largest that fits in memory (there "
            "ΣT_math = {}, {} = {}); the roof is not reached before the memory runs out",
            query.key, roof, scope, *result.largest_fitting, seconds(result.t_math), roof,
            seconds(result.t_roof)));
    return;
  }
  if (!result.value) {
    write_wrapped(
        out,
        fmt::format("{}: ΣT_math stays below {} over {} up to {} (there ΣT_math = {}, {} = {}); "
                    "it never turns compute-bound in this parameter",
                    query.key, roof, scope, query.high, seconds(result.t_math), roof,
                    seconds(result.t_roof)));
    return;
  }
  write_wrapped(
      out,
      fmt::format("{}: ΣT_math reaches {} over {} at {} (ΣT_math = {}, {} = {}; {} evaluations "
                  "of the cost model)",
                  query.key, roof, scope, *result.value, seconds(result.t_math), roof,
                  seconds(result.t_roof), result.evaluations));
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
  if (result.levels.empty()) {
    table.add_row({"link bandwidth (one way)", rate(result.tier.bandwidth)});
  }
  for (const NetworkTier& level : result.levels) {
    table.add_row({fmt::format("link bandwidth (one way), {}", level.name), rate(level.bandwidth)});
  }
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
    table.add_row(
        {tier.tier + " serves", tier_cell(tier.bytes, tier.time, tier.timed),
         tier.tile
             ? fmt::format("{} FLOP/B; tile {}{} in {}",
                           format_plain(cost.flops.si() / tier.bytes.si()), to_string(*tier.tile),
                           tier.operand_resident ? " (an operand resident)" : "", tier.tile_tier)
             : std::string("each byte once")});
  }
  table.add_row({"intensity", format_plain(cost.intensity) + " FLOP/B",
                 fmt::format("FLOPs / {} bytes (ideal {})", result.roofs.main_memory().name,
                             format_plain(cost.ideal_intensity))});
  table.add_row({"critical intensity", format_plain(cost.critical_intensity) + " FLOP/B",
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
  const GemmQuantization& quantization = result.roofs.gemm_quantization;
  if (!quantization.tiles.empty()) {
    const GemmFill fill = gemm_fill(gemm_shape(op), quantization);
    table.add_row({"tiles fill", percent(fill.useful),
                   fmt::format("{} tiles of {}×{}{} in {} wave{} on {} SMs",
                               format_plain(fill.tiles), fill.tile.m, fill.tile.n,
                               fill.split > 1.0 ? fmt::format(", split-K {}", fill.split) : "",
                               fill.waves, fill.waves == 1.0 ? "" : "s", quantization.units)});
  }
  table.add_row(
      {"expected", seconds(result.t_expected),
       quantization.tiles.empty()
           ? "roofs at the fractions kernels reach + launch (efficiency:)"
           : "T_math / (fraction × tiles fill), other roofs at their fractions + launch"});
  table.add_row({"upper bound", seconds(result.t_upper), "sum of the roofs (no overlap)"});
  table.add_row({"bound",
                 bound_label(result.bound, result.bound == Bound::network ? result.plan.network
                                                                          : result.cost.bound_tier),
                 "the largest term"});
  table.add_row({"critical batch", describe_critical(result.critical),
                 "B (per device) where intensity = critical intensity (exact root)"});
  if (result.critical_d) {
    table.add_row({"critical D", format_count(*result.critical_d),
                   "D above which T_math > T_net (the all-reduce does not grow with D)"});
  }
  table.print(out, "  ");
}

}  // namespace rsim
