// SPDX-License-Identifier: MIT
#include "sim/explore/batch_line.hpp"

#include "sim/analysis/training.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>

namespace rsim {
namespace {

using NumberRef = std::variant<std::int64_t*, double*, Bytes*>;

// Every number of an op, in a fixed order. Together with structure_of (everything else) it
// covers every field of Op: a field added to Op belongs in one of the two.
void numbers_of(Op& op, std::vector<NumberRef>& numbers) {
  numbers.emplace_back(&op.count);
  numbers.emplace_back(&op.accumulated);
  for (std::vector<Tensor>* tensors : {&op.inputs, &op.outputs}) {
    for (Tensor& tensor : *tensors) {
      for (Axis& axis : tensor.axes) {
        numbers.emplace_back(&axis.size);
      }
    }
  }
  numbers.emplace_back(&op.flops_per_element);
  AttentionShape& attention = op.attention;
  for (std::int64_t* size : {&attention.batch, &attention.query_tokens, &attention.cached_tokens,
                             &attention.heads, &attention.head_dim}) {
    numbers.emplace_back(size);
  }
  numbers.emplace_back(&attention.flops_scale);
  numbers.emplace_back(&op.collective.bytes);
  for (std::int64_t& size : op.collective.axes) {
    numbers.emplace_back(&size);
  }
}

std::vector<NumberRef> numbers_of(OpGraph& graph) {
  std::vector<NumberRef> numbers;
  for (std::size_t vertex = 0; vertex < graph.size(); ++vertex) {
    numbers_of(graph.mutable_op(vertex), numbers);
  }
  return numbers;
}

double value_of(const NumberRef& number) {
  return std::visit(
      [](const auto* pointer) {
        using Pointee = std::remove_cv_t<std::remove_pointer_t<decltype(pointer)>>;
        if constexpr (std::is_same_v<Pointee, Bytes>) {
          return pointer->si();
        } else {
          return static_cast<double>(*pointer);
        }
      },
      number);
}

// Everything of a graph but its numbers: op names, kinds, tensors' axis names and dtypes, edges,
// stages. Two graphs with the same structure differ only in numbers_of.
std::string structure_of(const OpGraph& graph) {
  fmt::memory_buffer out;
  auto write = std::back_inserter(out);
  for (const OpGraph::Stage& stage : graph.stages) {
    fmt::format_to(write, "stage {} {} {} {} {} {} {};", stage.name, stage.steps, stage.layers,
                   stage.context, stage.experts, stage.microbatches, stage.pipeline_chunks);
  }
  for (std::size_t vertex = 0; vertex < graph.size(); ++vertex) {
    const Op& op = graph.op(vertex);
    fmt::format_to(write, "\nop {}/{}/{} {} {} {} {} {} {} {} {} {} {} {} {} {}|", op.stage,
                   to_string(op.block), op.name, static_cast<int>(op.kind),
                   static_cast<int>(op.pass), op.compute_path, op.group,
                   static_cast<int>(op.elementwise), op.fused, static_cast<int>(op.attention.mask),
                   static_cast<int>(op.collective.kind), op.collective.axes.size(),
                   op.collective.wraparound, op.collective.in_network_reduction, op.network,
                   op.mesh_axis);
    for (const std::vector<Tensor>* tensors : {&op.inputs, &op.outputs}) {
      for (const Tensor& tensor : *tensors) {
        fmt::format_to(write, " {}:{}:{}[", tensor.name, static_cast<int>(tensor.dtype),
                       static_cast<int>(tensor.role));
        for (const Axis& axis : tensor.axes) {
          fmt::format_to(write, "{},", axis.name);
        }
        fmt::format_to(write, "]");
      }
      fmt::format_to(write, " |");
    }
    for (auto edge : boost::make_iterator_range(boost::out_edges(vertex, graph.graph()))) {
      fmt::format_to(write, " ->{}:{}", boost::target(edge, graph.graph()), graph.graph()[edge]);
    }
  }
  return fmt::to_string(out);
}

// The batch line's probes, in multiples of the plan's devices (BatchLine::BatchLine).
constexpr std::array<std::int64_t, 5> kProbeMultiples{1, 2, 3, 5, 64};

// Figures whole in units of 1 / units_per_figure below 2⁵² units are exact in every sum and
// product that makes them (52 bits of significand at most), so two ways to the same figure agree;
// bytes are whole in units of 2⁻⁷ B (every dtype's width is a multiple).
constexpr double kExactUnits = 0x1p52;
constexpr double kUnitsPerByte = 0x1p7;

}  // namespace

// A figure at the probes as constant + slope · m at probe multiple m, in whole units, where every
// probe's figure is exact (below kExactUnits, whole in units) and on that line.
BatchLine::AffineFigure BatchLine::affine_fit(const std::vector<double>& at_probes,
                                              double units_per_figure) const {
  std::vector<std::int64_t> units;
  bool exact = true;
  for (const double figure : at_probes) {
    const double in_units = figure * units_per_figure;
    exact = exact && figure >= 0.0 && in_units < kExactUnits && in_units == std::floor(in_units);
    units.push_back(exact ? static_cast<std::int64_t>(in_units) : 0);
  }
  AffineFigure fit{2 * units[0] - units[1], units[1] - units[0], exact,
                   proportion(units[1] - units[0]), units_per_figure};
  for (std::size_t probe = 0; probe < units.size(); ++probe) {
    fit.affine = fit.affine && fit.constant + fit.slope * kProbeMultiples[probe] == units[probe];
  }
  return fit;
}

// Each row's ideal bytes as constant + slope · m at probe multiple m: op_bytes is a sum over
// tensors of widths × products of sizes, each size constant or ∝ the batch, so it is a
// polynomial in the batch, affine unless a tensor has two scaled axes (quadratic: it then
// misses the line through the first two probes at the other three, which a polynomial of degree
// ≤ 4 cannot hide). Checked at every probe, where every figure is exact, in units of 2⁻⁷ B.
std::vector<BatchLine::AffineFigure> BatchLine::affine_ideal_bytes(
    const std::vector<ShardedGraph>& probes) const {
  std::vector<AffineFigure> rows;
  for (const OpGraph::Vertex vertex : order_) {
    std::vector<double> at_probes;
    for (const ShardedGraph& probe : probes) {
      at_probes.push_back(op_bytes(probe.graph.op(vertex)).si());
    }
    rows.push_back(affine_fit(at_probes, kUnitsPerByte));
  }
  return rows;
}

// Each row's FLOPs likewise: a matmul's 2 · Π sizes (+ its output's elements with a bias), whole,
// and exact in doubles below 2⁵² (every partial product is no larger); a plain op's FLOPs per
// element × its output's elements, exact where the former is a multiple of 2⁻⁷ and the product
// below 2⁴⁵. Polynomials in the batch, so affine where the probes say so (as the bytes).
std::vector<BatchLine::AffineFigure> BatchLine::affine_flops(
    const std::vector<ShardedGraph>& probes) const {
  std::vector<AffineFigure> rows;
  for (const OpGraph::Vertex vertex : order_) {
    const Op& op = probes[0].graph.op(vertex);
    const double per_element = op.flops_per_element * kUnitsPerByte;
    const bool plain = op.kind == OpKind::elementwise || op.kind == OpKind::embedding_gather;
    if (op.kind != OpKind::matmul && !(plain && per_element == std::floor(per_element))) {
      rows.emplace_back();
      continue;
    }
    std::vector<double> at_probes;
    for (const ShardedGraph& probe : probes) {
      at_probes.push_back(op_flops(probe.graph.op(vertex)).si());
    }
    rows.push_back(affine_fit(at_probes, plain ? kUnitsPerByte : 1.0));
  }
  return rows;
}

// The activation bytes of each working-set visit of the footprint (inputs, then outputs, summed
// as footprint() sums them: sizes ∝ the batch or constant, so affine as op_bytes is).
std::optional<std::vector<BatchLine::AffineFigure>> BatchLine::affine_working_sets(
    const std::vector<ShardedGraph>& probes) const {
  std::vector<FootprintPlan> plans;
  for (const ShardedGraph& probe : probes) {
    plans.push_back(plan_footprint(scenario_, probe.graph, order_, parameters_, 1.0, roofs_));
  }
  std::vector<AffineFigure> working_sets;
  for (std::size_t visit = 0; visit < plans[0].visits.size(); ++visit) {
    const FootprintPlan::Visit& first = plans[0].visits[visit];
    if (!first.kv_cache.empty() || !first.per_batch_weights.empty()) {
      return std::nullopt;
    }
    if (!first.working_set) {
      continue;
    }
    std::vector<double> at_probes;
    for (const FootprintPlan& plan : plans) {
      at_probes.push_back(plan.visits[visit].working_bytes().si());
    }
    working_sets.push_back(affine_fit(at_probes, kUnitsPerByte));
  }
  return working_sets;
}

// constant + slope · batch / probe_batch_ in whole units (the product in 64 bits, the quotient
// whole), then as a figure, where it is below kExactUnits: the figure's own arithmetic (op_bytes,
// op_flops) makes it exactly there (each term and partial sum below it), so the two agree bit for
// bit.
BatchLine::Proportion BatchLine::proportion(std::int64_t at_probe) const {
  const std::int64_t divisor = std::gcd(at_probe, probe_batch_);
  return {probe_batch_ / divisor, at_probe / divisor};
}

std::optional<std::int64_t> BatchLine::at_batch(const Proportion& whole, std::int64_t batch,
                                                std::pair<std::int64_t, std::int64_t>& last) {
  if (last.first != whole.step) {
    if (batch % whole.step != 0) {
      return std::nullopt;
    }
    last = {whole.step, batch / whole.step};
  }
  std::int64_t value = 0;
  if (__builtin_mul_overflow(whole.per_step, last.second, &value)) {
    return std::nullopt;
  }
  return value;
}

double BatchLine::figure_at(const AffineFigure& figure, std::int64_t batch,
                            std::pair<std::int64_t, std::int64_t>& last) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  const auto scaled = figure.affine ? at_batch(figure.per_batch, batch, last) : std::nullopt;
  if (!scaled) {
    return kNone;
  }
  const std::int64_t units = figure.constant + *scaled;
  if (units < 0 || !(static_cast<double>(units) < kExactUnits)) {
    return kNone;
  }
  return static_cast<double>(units) / figure.units_per_figure;
}

OptionalBytes BatchLine::activations_at(std::int64_t batch) const {
  if (!working_sets_) {
    return std::nullopt;
  }
  Bytes largest;
  std::pair<std::int64_t, std::int64_t> last_step{0, 0};
  for (const AffineFigure& working : *working_sets_) {
    const OptionalBytes bytes = Bytes(figure_at(working, batch, last_step));
    if (!bytes) {
      return std::nullopt;
    }
    largest = std::max(largest, *bytes);
  }
  return largest;
}

// The table rows whose ops hold a scaled number, in row order.
std::vector<std::size_t> BatchLine::rows_of(OpGraph& graph,
                                            const std::vector<OpGraph::Vertex>& order,
                                            const std::vector<Scaled>& scaled) {
  // Each vertex's first number in numbers_of's visiting order.
  std::vector<std::size_t> first_number;
  std::vector<NumberRef> numbers;
  for (std::size_t vertex = 0; vertex < graph.size(); ++vertex) {
    first_number.push_back(numbers.size());
    numbers_of(graph.mutable_op(vertex), numbers);
  }
  std::vector<bool> vertex_scaled(graph.size(), false);
  for (const Scaled& number : scaled) {
    const auto after = std::upper_bound(first_number.begin(), first_number.end(), number.index);
    vertex_scaled[static_cast<std::size_t>(after - first_number.begin()) - 1] = true;
  }
  std::vector<std::size_t> rows;
  for (std::size_t row = 0; row < order.size(); ++row) {
    if (vertex_scaled[order[row]]) {
      rows.push_back(row);
    }
  }
  return rows;
}

BatchLine::BatchLine(const Scenario& scenario, const Roofs& roofs)
    : scenario_(scenario), roofs_(roofs), parameters_(count_parameters(scenario.model)) {
  if (scenario.workload.phase == Phase::train) {
    why_ = "a training step (microbatches, pipeline bubble, saved activations)";
    return;
  }
  if (scenario.workload.decode_steps > 0) {
    why_ = "a decode request (its steps' contexts grow)";
    return;
  }
  if (pipeline_stages(scenario.plan) > 1) {
    why_ = "a pipeline plan (its bubble is added to the bounds after costing)";
    return;
  }
  for (const StageSpec& stage : scenario.model.stages) {
    if (stage.component.num_experts > 0) {
      why_ =
          "a mixture of experts (the experts a batch reaches, min(E, T·k), and their rows, "
          "⌈T·k/E⌉, do not grow in proportion to it)";
      return;
    }
  }
  // Probes at multiples of the plan's devices, which every mesh axis divides. Every number of the
  // graph must be constant or proportional across all of them; the first is the template, the
  // others check what it would patch there against the graph built there. What the probes
  // cannot see is a cut-off on the batch beyond 64 of them (a min or max, like MoE's experts
  // reached): the graph builder and sharder have none but MoE's, declined above; the sharder's
  // batch decisions are divisibility, which leaves a divided size that evaluate() checks.
  probe_batch_ = std::max<std::int64_t>(1, scenario.plan.devices());
  std::vector<ShardedGraph> probes;
  try {
    for (const std::int64_t multiple : kProbeMultiples) {
      Scenario probe = scenario;
      probe.workload.batch = multiple * probe_batch_;
      probes.push_back(planned_graph(probe));
    }
  } catch (const InputError& error) {
    why_ = fmt::format("the scenario does not build at batch {}: {}", probe_batch_, error.what());
    return;
  }
  const std::string structure = structure_of(probes[0].graph);
  std::vector<std::vector<NumberRef>> numbers;
  for (ShardedGraph& probe : probes) {
    if (structure_of(probe.graph) != structure ||
        probe.weight_fraction != probes[0].weight_fraction) {
      why_ = "the sharded graph changes its structure with the batch";
      return;
    }
    numbers.push_back(numbers_of(probe.graph));
  }
  for (std::size_t index = 0; index < numbers[0].size(); ++index) {
    const double value = value_of(numbers[0][index]);
    bool constant = true;
    bool proportional = true;
    for (std::size_t probe = 1; probe < probes.size(); ++probe) {
      const double at_probe = value_of(numbers[probe][index]);
      constant = constant && at_probe == value;
      proportional =
          proportional && at_probe == static_cast<double>(kProbeMultiples[probe]) * value;
    }
    if (!constant && !proportional) {
      why_ = "a size of the sharded graph is not proportional to the batch";
      return;
    }
    if (!constant) {
      const bool integer = std::holds_alternative<std::int64_t*>(numbers[0][index]);
      std::uint32_t distinct = 0;
      if (integer) {
        const Proportion whole = proportion(static_cast<std::int64_t>(value));
        const auto found = std::find(distinct_.begin(), distinct_.end(), whole);
        distinct = static_cast<std::uint32_t>(found - distinct_.begin());
        if (found == distinct_.end()) {
          distinct_.push_back(whole);
        }
      }
      scaled_.push_back({index, value, integer, distinct});
    }
  }
  order_ = probes[0].graph.topological_order();
  ideal_ = affine_ideal_bytes(probes);
  flops_ = affine_flops(probes);
  working_sets_ = affine_working_sets(probes);
  graph_ = std::move(probes[0].graph);
  scaled_rows_ = rows_of(graph_, order_, scaled_);
  weight_fraction_ = probes[0].weight_fraction;
  scenario_.workload.batch = probe_batch_;
}

std::unique_ptr<BatchLine::Workspace> BatchLine::workspace() const {
  RSIM_CHECK(usable(), "a workspace of a batch line that is not usable");
  auto workspace = std::make_unique<Workspace>();
  workspace->line_ = this;
  workspace->graph_ = graph_;
  workspace->table_ = empty_cost_table(order_, roofs_);
  workspace->plan_ = plan_costs(workspace->graph_, order_, roofs_, scenario_.tiles);
  workspace->plan_.compile(workspace->graph_, order_);
  workspace->footprint_ =
      plan_footprint(scenario_, workspace->graph_, order_, parameters_, weight_fraction_, roofs_);
  const std::vector<NumberRef> numbers = numbers_of(workspace->graph_);
  for (const Scaled& scaled : scaled_) {
    if (scaled.integer) {
      workspace->integers_.emplace_back(std::get<std::int64_t*>(numbers[scaled.index]),
                                        scaled.distinct);
    } else {
      workspace->reals_.emplace_back(numbers[scaled.index], scaled.at_probe);
    }
  }
  workspace->values_.resize(distinct_.size());
  return workspace;
}

const BatchLine::Point* BatchLine::evaluate(std::int64_t batch, Workspace& workspace) const {
  RSIM_CHECK(usable() && batch >= 1, "evaluating a batch line that is not usable");
  RSIM_CHECK(workspace.line_ == this, "a batch line's workspace used with another (or moved) line");
  std::pair<std::int64_t, std::int64_t> last_step{0, 0};
  for (std::size_t index = 0; index < distinct_.size(); ++index) {
    const auto value = at_batch(distinct_[index], batch, last_step);
    if (!value) {
      return nullptr;
    }
    workspace.values_[index] = *value;
  }
  for (const auto& [number, distinct] : workspace.integers_) {
    *number = workspace.values_[distinct];
  }
  for (const auto& [number, at_probe] : workspace.reals_) {
    // Byte counts are elements × a dyadic width (every dtype's bytes per element is k/2ʲ, j ≤ 7:
    // tests/base/dtype_test.cpp) far below 2⁵³: this product and quotient are exact, as the graph's
    // own elements × bytes are.
    const double value = at_probe * static_cast<double>(batch) / static_cast<double>(probe_batch_);
    if (auto* const* bytes = std::get_if<Bytes*>(&number)) {
      **bytes = Bytes(value);
    } else {
      *std::get<double*>(number) = value;
    }
  }
  // The same batch: the steps' quotients found above serve here too.
  for (std::size_t row = 0; row < ideal_.size(); ++row) {
    OpCostPlan& op = workspace.plan_.ops[row];
    op.ideal_bytes = Bytes(figure_at(ideal_[row], batch, last_step));
    op.flops = Flops(figure_at(flops_[row], batch, last_step));
  }
  recost_times(workspace.graph_, workspace.plan_, roofs_, scenario_.tiles, workspace.cache,
               workspace.table_, workspace.costed_ ? &scaled_rows_ : nullptr);
  workspace.costed_ = true;
  compute_time_totals(workspace.table_, workspace.point_.total);
  const auto activations = activations_at(batch);
  workspace.point_.footprint = activations ? weights_and_cache(workspace.footprint_, *activations)
                                           : weights_and_cache(workspace.footprint_);
  return &workspace.point_;
}

}  // namespace rsim
