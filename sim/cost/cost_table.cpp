// SPDX-License-Identifier: MIT
#include "sim/cost/cost_table.hpp"

#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/cost/expected.hpp"
#include "sim/cost/gemm_quantization.hpp"
#include "sim/cost/op_cost_parts.hpp"
#include "sim/cost/tile_search.hpp"
#include "sim/cost/tiling.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

namespace rsim {

using op_cost_parts::attention_flops;
using op_cost_parts::panels_win;
using op_cost_parts::reset_tiers;
using op_cost_parts::set_tier;
using op_cost_parts::tier_time;
using op_cost_parts::tiled_traffic;
using op_cost_parts::TiledShape;
using op_cost_parts::time_tiers;

namespace {

// --- Compiled sizes (CostPlan::compile): op_flops, op_bytes, gemm_shape and tier_costs of a
// matmul or a plain op from pointers to its sizes, with the same arithmetic in the same order.

// Tensor::elements() from the tensor's sizes (its overflow, too: the tensor itself reports it).
std::int64_t elements(const OpSizes& sizes, const OpSizes::Tensor& tensor, const Tensor& named) {
  std::int64_t product = 1;
  for (std::uint32_t index = tensor.first; index < tensor.last; ++index) {
    if (__builtin_mul_overflow(product, *sizes.sizes[index], &product)) {
      return named.elements();  // throws
    }
  }
  return product;
}

// tensor_bytes(): Σ Tensor::bytes() of the tensors from `first` on.
Bytes tensors_bytes(const OpSizes& sizes, const std::vector<OpSizes::Tensor>& tensors,
                    const std::vector<Tensor>& named, std::size_t first = 0) {
  Bytes total;
  for (std::size_t index = first; index < tensors.size(); ++index) {
    const OpSizes::Tensor& tensor = tensors[index];
    total += Bytes(static_cast<double>(elements(sizes, tensor, named[index])) * tensor.width);
  }
  return total;
}

// output_elements().
double output_elements(const OpSizes& sizes, const Op& op) {
  double total = 0.0;
  for (std::size_t index = 0; index < sizes.outputs.size(); ++index) {
    total += static_cast<double>(elements(sizes, sizes.outputs[index], op.outputs[index]));
  }
  return total;
}

// gemm_shape()'s axis_product.
std::int64_t size_product(const std::vector<const std::int64_t*>& factors) {
  std::int64_t product = 1;
  for (const std::int64_t* size : factors) {
    product *= *size;
  }
  return product;
}

// op_flops() of a matmul or a plain op (elementwise, gather, cache write).
Flops compiled_flops(const Op& op, const OpSizes& sizes) {
  if (op.kind == OpKind::matmul) {
    double product = 1.0;
    for (const std::int64_t* size : sizes.einsum) {
      product *= static_cast<double>(*size);
    }
    const double bias_adds = op.inputs.size() > 2 ? output_elements(sizes, op) : 0.0;
    return Flops(2.0 * product + bias_adds);
  }
  return op.kind == OpKind::kv_cache_write
             ? Flops(0.0)
             : Flops(op.flops_per_element * output_elements(sizes, op));
}

// op_bytes() of a matmul or a plain op.
Bytes compiled_ideal_bytes(const Op& op, const OpSizes& sizes) {
  return op.kind == OpKind::elementwise && op.fused
             ? Bytes(0.0)
             : tensors_bytes(sizes, sizes.inputs, op.inputs) +
                   tensors_bytes(sizes, sizes.outputs, op.outputs);
}

// gemm_shape() of a matmul.
GemmShape compiled_gemm_shape(const OpSizes& sizes) {
  GemmShape shape;
  shape.batch = static_cast<double>(size_product(sizes.gemm[0]));
  shape.m = size_product(sizes.gemm[1]);
  shape.n = size_product(sizes.gemm[2]);
  shape.k = size_product(sizes.gemm[3]);
  shape.x_element_bytes = sizes.inputs[0].width;
  shape.w_element_bytes = sizes.inputs[1].width;
  shape.out_element_bytes = sizes.outputs.front().width;
  return shape;
}

// The traffic tier `index` serves a compiled matmul of `shape` (tiled_traffic with the plan's
// settled searches, which answer where they can).
std::optional<TiledTraffic> compiled_traffic(const Op& op, OpCostPlan& plan, const GemmShape& shape,
                                             const std::vector<InnerTier>& inner_tiers,
                                             std::size_t index, const TileChoices& tiles,
                                             TileCache& cache) {
  return tiled_traffic(op, TiledShape{shape, std::nullopt}, inner_tiers[index], tiles, &cache,
                       &plan.settled[2 * index]);
}

// A matmul or a plain op: cost_op's FLOPs, ideal bytes and tiers from the compiled sizes (a
// plain op's every tier serves the ideal bytes: no tile).
void recost_compiled(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                     const Roofs& roofs, const TileChoices& tiles, TileCache& cache, OpCost& cost) {
  const OpSizes& sizes = *plan.sizes;
  cost.flops = compiled_flops(op, sizes);
  cost.ideal_bytes = compiled_ideal_bytes(op, sizes);
  reset_tiers(cost.ideal_bytes, roofs, cost.tiers);
  if (op.kind == OpKind::matmul && cost.ideal_bytes.si() > 0.0) {
    const GemmShape shape = compiled_gemm_shape(sizes);
    for (std::size_t index = 0; index + 1 < cost.tiers.size(); ++index) {
      if (const auto traffic =
              compiled_traffic(op, plan, shape, inner_tiers, index, tiles, cache)) {
        set_tier(*traffic, inner_tiers[index], cost.tiers[index]);
      }
    }
  }
  time_tiers(roofs, cost.tiers);
}

// The bytes tier `index` serves a compiled matmul of `shape` where its kept searches answer
// (settled_tile_bytes, settled_panel_bytes: they hold their keys' rows): compiled_traffic's
// figure, bit for bit (tiled_traffic's choice and its untiled inputs), with no tile copied.
// nullopt where compiled_traffic must search (and keep the searches).
OptionalBytes settled_tier_bytes(const Op& op, OpCostPlan& plan, const GemmShape& shape,
                                 const InnerTier& inner, std::size_t index, TileCache& cache) {
  if (inner.fixed != nullptr) {
    return std::nullopt;
  }
  const auto tile = settled_tile_bytes(plan.settled[2 * index], shape, inner.budget, cache);
  if (!tile) {
    return std::nullopt;
  }
  Bytes bytes = *tile;
  if (inner.panels) {
    const auto panels =
        settled_panel_bytes(plan.settled[2 * index + 1], shape, inner.tier->capacity, cache);
    if (!panels) {
      return std::nullopt;
    }
    if (panels_win(&bytes, panels.operator->())) {
      bytes = *panels;
    }
  }
  const OpSizes& sizes = *plan.sizes;
  return bytes + tensors_bytes(sizes, sizes.inputs, op.inputs, 2);
}

// Ops a compiled plan re-costs from their sizes.
bool compiled_kind(OpKind kind) {
  return kind == OpKind::matmul || kind == OpKind::elementwise ||
         kind == OpKind::embedding_gather || kind == OpKind::kv_cache_write;
}

// Whether the plan of this op was compiled (and a cache keeps its searches).
bool compiled(const OpCostPlan& plan, const TileCache* cache) {
  return plan.sizes.has_value() && cache != nullptr;
}

// An op's figures straight into its table row, by cost_op's arithmetic with no OpCost in between:
// T_math of `flops`, each tier's time at the bytes it serves (the ideal bytes, or, where `tiled`,
// what `inner_bytes(index)` finds for the tile inner tier `index` holds, if any), and T_net.
template <typename InnerBytes>
void write_times(const Op& op, const OpCostPlan& plan, Flops flops, Bytes ideal, bool tiled,
                 const InnerBytes& inner_bytes, Seconds t_net, const Roofs& roofs, CostTable& table,
                 Eigen::Index row) {
  table.times(row, CostTable::kMathColumn) = (flops / plan.path->peak).si();
  table.times(row, CostTable::kNetworkColumn) = t_net.si();
  const std::size_t tiers = roofs.memory.size();
  for (std::size_t index = 0; index < tiers; ++index) {
    Bytes bytes = ideal;
    if (tiled && index + 1 < tiers) {
      if (const OptionalBytes served = inner_bytes(index)) {
        bytes = *served;
      }
    }
    table.times(row, CostTable::tier_column(index)) = tier_time(bytes, roofs.memory[index]).si();
  }
  table.counts(row) = static_cast<double>(op.count);
}

// A compiled op (matmul or plain) from its sizes: recost_compiled's figures, with the tiers'
// kept searches answering by their winners' bytes where they can. `shape`: a matmul's GEMM shape
// (compiled_gemm_shape), which quantize_row takes too.
void compiled_times(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                    const Roofs& roofs, const TileChoices& tiles, TileCache& cache,
                    const GemmShape& shape, CostTable& table, Eigen::Index row) {
  const OpSizes& sizes = *plan.sizes;
  const Bytes ideal = plan.ideal_bytes ? *plan.ideal_bytes : compiled_ideal_bytes(op, sizes);
  const bool tiled = op.kind == OpKind::matmul && ideal.si() > 0.0;
  const auto inner_bytes = [&](std::size_t index) -> OptionalBytes {
    if (const auto settled =
            settled_tier_bytes(op, plan, shape, inner_tiers[index], index, cache)) {
      return settled;
    }
    if (const auto traffic = compiled_traffic(op, plan, shape, inner_tiers, index, tiles, cache)) {
      return traffic->bytes;
    }
    return std::nullopt;
  };
  const Flops flops = plan.flops ? *plan.flops : compiled_flops(op, sizes);
  write_times(op, plan, flops, ideal, tiled, inner_bytes, Seconds(0.0), roofs, table, row);
}

// A fused attention: cost_op's FLOPs, ideal bytes and FMHA tiles (tiled_traffic's flash search).
void attention_times(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
                     const Roofs& roofs, TileCache& cache, CostTable& table, Eigen::Index row) {
  const Bytes ideal = plan.ideal_bytes ? *plan.ideal_bytes : op_bytes(op);
  const bool tiled = ideal.si() > 0.0;
  const FlashShape shape = !tiled       ? FlashShape{}
                           : plan.flash ? flash_shape(op, *plan.flash)
                                        : flash_shape(op);
  const auto inner_bytes = [&](std::size_t index) -> OptionalBytes {
    KeptFlashRows* kept = index < plan.flash_rows.size() ? &plan.flash_rows[index] : nullptr;
    if (const auto traffic = best_flash_tile(shape, inner_tiers[index].budget, &cache, kept)) {
      return traffic->bytes;
    }
    return std::nullopt;
  };
  write_times(op, plan, Flops(attention_flops(op.attention)), ideal, tiled, inner_bytes,
              Seconds(0.0), roofs, table, row);
}

// A collective: no FLOPs and no memory bytes (its bytes cross the network), its T_net.
// A collective's row, its expected time with it: one collective_cost for both.
void collective_times(const Op& op, const OpCostPlan& plan, const Roofs& roofs, CostTable& table,
                      Eigen::Index row) {
  const auto none = [](std::size_t) { return OptionalBytes(); };
  const CollectiveCost cost = collective_cost(op.collective, plan.networks, false);
  write_times(op, plan, Flops(0.0), Bytes(0.0), false, none, cost.time, roofs, table, row);
  table.expected(row) = expected_collective_time(cost, plan.networks);
}

// cost_op of a table row: from the compiled sizes where the plan was compiled (and a cache keeps
// its searches), else from the op's tensors.
void cost_row(const Op& op, OpCostPlan& plan, const std::vector<InnerTier>& inner_tiers,
              const Roofs& roofs, const TileChoices& tiles, TileCache* cache, OpCost& cost) {
  if (!compiled(plan, cache)) {
    op_cost_parts::cost_op(op, plan, inner_tiers, roofs, tiles, cache, cost);
    return;
  }
  recost_compiled(op, plan, inner_tiers, roofs, tiles, *cache, cost);
  op_cost_parts::apply_roofs(op, plan, roofs, cost);
}

}  // namespace

CostPlan plan_costs(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                    const Roofs& roofs, const TileChoices& tiles) {
  CostPlan plan;
  plan.inner_tiers = plan_inner_tiers(roofs, tiles);
  const auto rows = static_cast<Eigen::Index>(order.size());
  plan.device_rows.resize(rows);
  plan.inverse_path_efficiency.resize(rows);
  plan.launch_overhead.resize(rows);
  plan.serial_rows.resize(rows);
  for (Eigen::Index row = 0; row < rows; ++row) {
    const Op& op = graph.op(order[static_cast<std::size_t>(row)]);
    plan.ops.push_back(plan_op_cost(op, roofs));
    plan.device_rows(row) = op.kind != OpKind::collective;
    // A matmul's tile quantization and an attention pass's length and head-dim shares are put in by
    // quantize_row when the row is costed (its shape may change with the batch first).
    plan.inverse_path_efficiency(row) = 1.0 / compute_efficiency(op, plan.ops.back().path, roofs);
    plan.launch_overhead(row) =
        op.kind == OpKind::elementwise && op.fused ? 0.0 : roofs.kernel_overhead.si();
    plan.serial_rows(row) = serial_math_memory(op);
  }
  for (const MemoryTier& tier : roofs.memory) {
    plan.inverse_tier_efficiency.push_back(1.0 / tier.efficiency);
  }
  if (!roofs.memory.empty()) {
    plan.inverse_serial_main_efficiency =
        1.0 / roofs.attention_efficiency.unfused_memory.value_or(roofs.memory.front().efficiency);
  }
  return plan;
}

void CostPlan::compile(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order) {
  RSIM_CHECK(order.size() == ops.size(), "a cost plan compiled for another graph");
  for (std::size_t row = 0; row < order.size(); ++row) {
    const Op& op = graph.op(order[row]);
    OpCostPlan& plan = ops[row];
    if (op.kind == OpKind::attention && op.inputs.size() >= 3) {
      plan.flash = flash_layout(op);
      plan.flash_rows.resize(inner_tiers.size());
    }
    if (!compiled_kind(op.kind)) {
      continue;
    }
    OpSizes sizes;
    const auto add = [&](const Tensor& tensor, std::vector<OpSizes::Tensor>& tensors) {
      const auto first = static_cast<std::uint32_t>(sizes.sizes.size());
      for (const Axis& axis : tensor.axes) {
        sizes.sizes.push_back(&axis.size);
      }
      tensors.push_back(
          {first, static_cast<std::uint32_t>(sizes.sizes.size()), bytes_per_element(tensor.dtype)});
    };
    for (const Tensor& tensor : op.inputs) {
      add(tensor, sizes.inputs);
    }
    for (const Tensor& tensor : op.outputs) {
      add(tensor, sizes.outputs);
    }
    if (plan.gemm) {
      // gemm_shape's tensors, by GemmAxis::tensor.
      const std::array<const Tensor*, 3> tensors{op.inputs.data(), &op.inputs[1],
                                                 &op.outputs.front()};
      const GemmAxes& axes = *plan.gemm;
      std::size_t kind = 0;
      for (const std::vector<GemmAxis>* of_kind : {&axes.batch, &axes.m, &axes.n, &axes.k}) {
        for (const GemmAxis& axis : *of_kind) {
          sizes.gemm[kind].push_back(&tensors[axis.tensor]->axes[axis.axis].size);
        }
        ++kind;
      }
      for (const GemmAxis& axis : plan.einsum_axes) {
        sizes.einsum.push_back(&op.inputs[axis.tensor].axes[axis.axis].size);
      }
      plan.settled.resize(2 * inner_tiers.size());
    }
    plan.sizes = std::move(sizes);
  }
}

CostTable cost_graph(const OpGraph& graph, const Roofs& roofs, const TileChoices& tiles,
                     TileCache* cache) {
  return cost_graph(graph, graph.topological_order(), roofs, tiles, cache);
}

namespace {

// Row `row` of the table's times and counts from its op's cost.
void fill_row(CostTable& table, Eigen::Index row, const OpCost& cost, const Op& op) {
  table.times(row, CostTable::kMathColumn) = cost.t_math.si();
  table.times(row, CostTable::kMemoryColumn) = cost.t_mem.si();
  table.times(row, CostTable::kNetworkColumn) = cost.t_net.si();
  for (std::size_t tier = 1; tier < cost.tiers.size(); ++tier) {
    table.times(row, CostTable::tier_column(tier)) = cost.tiers[tier].time.si();
  }
  table.counts(row) = static_cast<double>(op.count);
}

}  // namespace

CostTable empty_cost_table(const std::vector<OpGraph::Vertex>& order, const Roofs& roofs) {
  CostTable table;
  table.order = order;
  const auto rows = static_cast<Eigen::Index>(table.order.size());
  const auto on_chip_tiers = static_cast<Eigen::Index>(roofs.memory.size()) - 1;
  table.times = Eigen::ArrayXXd::Zero(rows, CostTable::kFirstOnChipColumn + on_chip_tiers);
  table.counts = Eigen::ArrayXd::Zero(rows);
  table.expected = Eigen::ArrayXd::Zero(rows);
  for (const MemoryTier& tier : roofs.memory) {
    table.tier_names.push_back(tier.name);
  }
  table.costs.resize(table.order.size());
  return table;
}

CostTable cost_graph(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                     const Roofs& roofs, const TileChoices& tiles, TileCache* cache) {
  CostTable table = empty_cost_table(order, roofs);
  CostPlan plan = plan_costs(graph, order, roofs, tiles);
  recost_graph(graph, plan, roofs, tiles, cache, table);
  return table;
}

namespace {

// `recost` of each row of `rows` (every row of the table if none), in order.
template <typename Recost>
void for_rows(const CostPlan& plan, const CostTable& table, const std::vector<std::size_t>* rows,
              const Recost& recost) {
  RSIM_CHECK(plan.ops.size() == table.order.size() && table.costs.size() == table.order.size(),
             "re-costing with a table or plan of another graph");
  if (rows == nullptr) {
    for (std::size_t row = 0; row < table.order.size(); ++row) {
      recost(row);
    }
    return;
  }
  for (const std::size_t row : *rows) {
    RSIM_CHECK(row < table.order.size(), "re-costing a row the table does not have");
    recost(row);
  }
}

// A matmul row's 1 / (its path's efficiency × how its tiles fill the units) at its current
// shape, an attention row's 1 / (its pass's efficiency × its length and head-dim shares): what
// expected_device_rows divides its T_math by.
void quantize_row(const Op& op, CostPlan& plan, std::size_t row, const Roofs& roofs,
                  const GemmShape* compiled_shape = nullptr) {
  if (op.kind == OpKind::attention && (roofs.attention_efficiency.length_overhead > 0.0 ||
                                       roofs.attention_efficiency.head_dim_overhead > 0.0)) {
    plan.inverse_path_efficiency(static_cast<Eigen::Index>(row)) =
        1.0 /
        (compute_efficiency(op, plan.ops[row].path, roofs) * attention_shape_share(op, roofs));
    return;
  }
  if (op.kind != OpKind::matmul || roofs.gemm_quantization.tiles.empty()) {
    return;
  }
  const OpCostPlan& op_plan = plan.ops[row];
  const GemmShape shape = compiled_shape != nullptr ? *compiled_shape
                          : op_plan.sizes           ? compiled_gemm_shape(*op_plan.sizes)
                                                    : gemm_shape(op, *op_plan.gemm);
  plan.inverse_path_efficiency(static_cast<Eigen::Index>(row)) =
      1.0 / (compute_efficiency(op, op_plan.path, roofs) *
             gemm_quantization(shape, roofs.gemm_quantization));
}

}  // namespace

void recost_graph(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache* cache, CostTable& table,
                  const std::vector<std::size_t>* rows) {
  for_rows(plan, table, rows, [&](std::size_t row) {
    const Op& op = graph.op(table.order[row]);
    cost_row(op, plan.ops[row], plan.inner_tiers, roofs, tiles, cache, table.costs[row]);
    const auto index = static_cast<Eigen::Index>(row);
    fill_row(table, index, table.costs[row], op);
    if (op.kind == OpKind::collective) {
      table.expected(index) = expected_collective_time(op.collective, plan.ops[row].networks);
    }
    quantize_row(op, plan, row, roofs);
  });
  expected_device_rows(plan, table, rows);
}

void recost_times(const OpGraph& graph, CostPlan& plan, const Roofs& roofs,
                  const TileChoices& tiles, TileCache& cache, CostTable& table,
                  const std::vector<std::size_t>* rows) {
  for_rows(plan, table, rows, [&](std::size_t row) {
    const Op& op = graph.op(table.order[row]);
    OpCostPlan& op_plan = plan.ops[row];
    const auto index = static_cast<Eigen::Index>(row);
    if (compiled(op_plan, &cache)) {
      const GemmShape shape =
          op.kind == OpKind::matmul ? compiled_gemm_shape(*op_plan.sizes) : GemmShape{};
      compiled_times(op, op_plan, plan.inner_tiers, roofs, tiles, cache, shape, table, index);
      quantize_row(op, plan, row, roofs, &shape);
      return;
    }
    if (op.kind == OpKind::attention) {
      attention_times(op, op_plan, plan.inner_tiers, roofs, cache, table, index);
    } else if (op.kind == OpKind::collective) {
      collective_times(op, op_plan, roofs, table, index);
    } else {
      cost_row(op, op_plan, plan.inner_tiers, roofs, tiles, &cache, table.costs[row]);
      fill_row(table, index, table.costs[row], op);
    }
    quantize_row(op, plan, row, roofs);
  });
  expected_device_rows(plan, table, rows);
}

double device_time(const CostTable& table, Eigen::Index row) {
  double longest = std::max(table.times(row, CostTable::kMathColumn),
                            table.times(row, CostTable::kMemoryColumn));
  for (Eigen::Index column = CostTable::kFirstOnChipColumn; column < table.times.cols(); ++column) {
    longest = std::max(longest, table.times(row, column));
  }
  return longest;
}

}  // namespace rsim
