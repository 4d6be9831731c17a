// SPDX-License-Identifier: MIT
// The JSON of the probe commands: rsim threshold, collective and matmul.
#include "sim/cost/gemm_quantization.hpp"
#include "sim/report/json.hpp"
#include "sim/report/json_records.hpp"

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

Json threshold_to_json(const ThresholdQuery& query, const ThresholdResult& result) {
  return Json{
      {"param", query.key},
      {"roof", to_string(query.roof)},
      {"scope", query.scope.empty() ? Json(nullptr) : Json(query.scope)},
      {"value", result.value ? Json(*result.value) : Json(nullptr)},
      {"searched_up_to", query.high},
      {"step", query.step},
      {"t_math_s", result.t_math.si()},
      {"t_roof_s", result.t_roof.si()},
      {"evaluations", result.evaluations},
      {"largest_fitting", result.largest_fitting ? Json(*result.largest_fitting) : Json(nullptr)},
      {"no_traffic", result.no_traffic}};
}

Json collective_to_json(const CollectiveResult& result) {
  const CollectiveCost& cost = result.cost;
  return Json{{"hardware", result.hardware},
              {"network", result.tier.name},
              {"topology", std::string(to_string(result.tier.topology))},
              {"op", std::string(to_string(result.collective.kind))},
              {"bytes", result.collective.bytes.si()},
              {"axes", result.collective.axes},
              {"wraparound", result.collective.wraparound},
              {"algorithm", cost.algorithm},
              {"hops", cost.hops},
              {"bytes_per_device", cost.bytes_per_device.si()},
              {"t_bandwidth_s", cost.bandwidth_time.si()},
              {"t_latency_s", cost.latency_time.si()},
              {"latency_bound", cost.latency_bound},
              {"t_s", cost.time.si()}};
}

Json matmul_to_json(const MatmulResult& result) {
  const OpCost& cost = result.cost;
  Json collective = nullptr;
  if (result.collective) {
    const CollectiveCost& collective_cost = *result.collective_cost;
    collective = Json{{"kind", std::string(to_string(result.collective->kind))},
                      {"network", result.plan.network},
                      {"bytes", result.collective->bytes.si()},
                      {"bytes_per_device", collective_cost.bytes_per_device.si()},
                      {"algorithm", collective_cost.algorithm},
                      {"hops", collective_cost.hops},
                      {"latency_bound", collective_cost.latency_bound},
                      {"t_s", collective_cost.time.si()}};
  }
  Json record{{"hardware", result.roofs.hardware},
              {"mode", result.roofs.mode},
              {"compute_path", result.op.compute_path},
              {"devices", result.plan.devices},
              {"shard", result.plan.devices > 1 ? Json(std::string(to_string(result.plan.shard)))
                                                : Json(nullptr)},
              {"flops", cost.flops.si()},
              {"bytes", cost.bytes.si()},
              {"intensity", cost.intensity},
              {"critical_intensity", cost.critical_intensity},
              {"t_math_s", cost.t_math.si()},
              {"t_comms_s", cost.t_mem.si()},
              {"t_net_s", result.t_net.si()},
              {"t_lower_s", result.t_lower.si()},
              {"t_expected_s", result.t_expected.si()},
              {"t_upper_s", result.t_upper.si()},
              {"bound", to_string(result.bound)},
              {"critical_batch", critical_value(result.critical)},
              {"collective", collective},
              {"critical_d", result.critical_d ? Json(*result.critical_d) : Json(nullptr)}};
  record["ideal_bytes"] = cost.ideal_bytes.si();
  record["ideal_intensity"] = cost.ideal_intensity;
  record["bound_tier"] = cost.bound_tier.empty() ? Json(nullptr) : Json(cost.bound_tier);
  add_tier_records(record, cost, 1.0);
  // How the GEMM's tiles fill the SMs (the expected time's wave and tile quantization); null on
  // hardware that names no GEMM tiles.
  const GemmQuantization& quantization = result.roofs.gemm_quantization;
  if (quantization.tiles.empty()) {
    record["gemm_quantization"] = nullptr;
  } else {
    const GemmFill fill = gemm_fill(gemm_shape(result.op), quantization);
    record["gemm_quantization"] =
        Json{{"useful", fill.useful},      {"tile_m", fill.tile.m}, {"tile_n", fill.tile.n},
             {"tiles", fill.tiles},        {"split_k", fill.split}, {"waves", fill.waves},
             {"units", quantization.units}};
  }
  return record;
}

}  // namespace rsim
