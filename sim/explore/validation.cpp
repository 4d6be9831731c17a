// SPDX-License-Identifier: MIT
#include "sim/explore/validation.hpp"

#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/dtype.hpp"
#include "sim/base/named.hpp"
#include "sim/base/parallel.hpp"
#include "sim/base/percentile.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <utility>

namespace rsim {
namespace {

constexpr std::array kQuantities{
    Named<ValidationQuantity>{ValidationQuantity::step, "step"},
    Named<ValidationQuantity>{ValidationQuantity::request, "request"},
    Named<ValidationQuantity>{ValidationQuantity::prefill, "prefill"},
    Named<ValidationQuantity>{ValidationQuantity::per_output_token, "per_output_token"},
    Named<ValidationQuantity>{ValidationQuantity::op, "op"},
};

DType parse_dtype_node(const ConfigNode& node) {
  const auto dtype = parse_dtype(node.as_string());
  if (!dtype) {
    node.fail(fmt::format("expected a dtype ({})", fmt::join(dtype_names(), ", ")));
  }
  return *dtype;
}

ValidationCase parse_case(const ConfigNode& node, const std::filesystem::path& file) {
  node.allow_only({"name", "category", "kind", "hardware", "matmul", "scenario", "quantity", "ops",
                   "measured", "derivation", "source", "engine", "note", "off_roofline"});
  ValidationCase item;
  item.mark = node.mark();
  item.name = node.at("name").as_string();
  item.category = node.at("category").as_string();
  item.matmul = node.at("kind").as_choice({"matmul", "scenario"}) == "matmul";
  item.measured = Seconds(node.at("measured").as_quantity(Dimension::seconds));
  if (!(item.measured.si() > 0.0)) {
    node.at("measured").fail("a measured time must be above 0");
  }
  item.source = node.at("source").as_string();
  if (const ConfigNode* engine = node.find("engine")) {
    item.engine = engine->as_string();
  }
  if (const ConfigNode* off = node.find("off_roofline")) {
    item.off_roofline = off->as_string();
  }
  if (item.matmul) {
    item.hardware = find_preset(node.at("hardware").as_string(), "hardware", file);
    const ConfigNode& shape = node.at("matmul");
    shape.allow_only({"b", "d", "f", "dtype", "out"});
    item.shape.batch = shape.at("b").as_positive_int();
    item.shape.contract = shape.at("d").as_positive_int();
    item.shape.out = shape.at("f").as_positive_int();
    item.shape.input = parse_dtype_node(shape.at("dtype"));
    item.shape.weights = item.shape.input;
    item.shape.output = item.shape.input;
    if (const ConfigNode* out = shape.find("out")) {
      item.shape.output = parse_dtype_node(*out);
    }
    item.shape.compute_path = std::string(default_compute_path(item.shape.input));
    for (std::string_view key : {"scenario", "quantity", "ops"}) {
      if (const ConfigNode* extra = node.find(key)) {
        extra->fail(fmt::format("'{}' is for kind: scenario", key));
      }
    }
    return item;
  }
  for (std::string_view key : {"hardware", "matmul"}) {
    if (const ConfigNode* extra = node.find(key)) {
      extra->fail(fmt::format("'{}' is for kind: matmul", key));
    }
  }
  item.scenario = file.parent_path() / node.at("scenario").as_string();
  item.quantity = parse_named(node.at("quantity"), kQuantities);
  if (item.quantity == ValidationQuantity::op) {
    for (const ConfigNode& op : node.at("ops").items()) {
      item.ops.push_back(op.as_string());
    }
    if (item.ops.empty()) {
      node.at("ops").fail("name at least one op (stage/block/name)");
    }
  } else if (const ConfigNode* ops = node.find("ops")) {
    ops->fail("'ops' is for quantity: op");
  }
  return item;
}

// The lower bound and expected time of a scenario case's quantity.
std::pair<Seconds, Seconds> scenario_times(const ValidationCase& item) {
  Scenario scenario = load_scenario(item.scenario);
  Roofs roofs = scenario_roofs(scenario, "");
  const RunResult run = analyze(std::move(scenario), std::move(roofs));
  const Totals& total = run.bounds.total;
  const auto request = [&]() -> const DecodeRequest& {
    if (!run.request) {
      throw InputError(fmt::format("{}: quantity {} needs a decode request (decode_steps)",
                                   item.scenario.string(), to_string(item.quantity)));
    }
    return *run.request;
  };
  switch (item.quantity) {
    case ValidationQuantity::step:
      return {total.t_lower, total.t_expected};
    case ValidationQuantity::request: {
      const PhaseTimes times = request().total();
      return {times.lower, times.expected};
    }
    case ValidationQuantity::prefill:
      return {request().prefill.lower, request().prefill.expected};
    case ValidationQuantity::per_output_token: {
      const PhaseTimes times = request().per_output_token();
      return {times.lower, times.expected};
    }
    case ValidationQuantity::op:
      break;
  }
  Seconds lower;
  Seconds expected;
  for (const std::string& name : item.ops) {
    bool found = false;
    for (std::size_t row = 0; row < run.table.order.size(); ++row) {
      const Op& op = run.graph.op(run.table.order[row]);
      if (fmt::format("{}/{}/{}", op.stage, to_string(op.block), op.name) != name) {
        continue;
      }
      found = true;
      const auto index = static_cast<Eigen::Index>(row);
      lower += run.table.costs[row].t_lower * run.table.counts(index);
      expected += Seconds(run.table.expected(index) * run.table.counts(index));
    }
    if (!found) {
      throw InputError(fmt::format("{}: no op '{}' in the run (stage/block/name)",
                                   item.scenario.string(), name));
    }
  }
  return {lower, expected};
}

}  // namespace

std::string_view to_string(ValidationQuantity quantity) { return name_of(quantity, kQuantities); }

std::vector<ValidationCase> load_validation_cases(const std::filesystem::path& path) {
  const std::filesystem::path file =
      std::filesystem::is_directory(path) ? path / "cases.yaml" : path;
  const ConfigNode document = load_config_file(file);
  document.allow_only({"cases"});
  std::vector<ValidationCase> cases;
  for (const ConfigNode& node : document.at("cases").items()) {
    cases.push_back(parse_case(node, file));
    for (std::size_t other = 0; other + 1 < cases.size(); ++other) {
      if (cases[other].name == cases.back().name) {
        node.at("name").fail(
            fmt::format("case '{}' is also at line {}", cases.back().name, cases[other].mark.line));
      }
    }
  }
  if (cases.empty()) {
    document.at("cases").fail("expected at least one case");
  }
  return cases;
}

std::vector<ValidationResult> run_validation(
    const std::vector<ValidationCase>& cases, std::int64_t threads,
    const std::function<void(std::size_t, std::size_t)>& progress,
    const std::atomic<bool>* cancel) {
  std::vector<ValidationResult> results(cases.size());
  struct NoState {};
  parallel_indexed<NoState>(
      threads, cases.size(),
      [&](std::size_t index, NoState&) {
        ValidationResult& result = results[index];
        result.item = cases[index];
        try {
          if (result.item.matmul) {
            const MatmulResult matmul = analyze_matmul(
                result.item.shape, resolve_roofs(load_hardware(result.item.hardware), ""));
            result.lower = matmul.t_lower;
            result.expected = matmul.t_expected;
          } else {
            std::tie(result.lower, result.expected) = scenario_times(result.item);
          }
        } catch (const InputError& error) {
          result.error = error.what();
        }
      },
      progress, cancel);
  return results;
}

namespace {

// The median of `values` (NumPy's: the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return percentile(values, 50.0);
}

}  // namespace

ValidationSummary summarize_validation(const std::vector<ValidationResult>& results) {
  ValidationSummary summary;
  std::vector<double> errors;
  // Per category (in order of first appearance): its scored errors and expected / measured.
  std::vector<std::pair<std::vector<double>, std::vector<double>>> category_figures;
  for (const ValidationResult& result : results) {
    ++summary.cases;
    auto category = std::find_if(
        summary.categories.begin(), summary.categories.end(),
        [&](const CategorySummary& entry) { return entry.category == result.item.category; });
    if (category == summary.categories.end()) {
      summary.categories.push_back({result.item.category});
      category_figures.emplace_back();
      category = std::prev(summary.categories.end());
    }
    auto& [category_errors, category_ratios] =
        category_figures[static_cast<std::size_t>(category - summary.categories.begin())];
    ++category->cases;
    if (!result.error.empty()) {
      ++summary.failed;
      continue;
    }
    if (!result.bound_holds()) {
      ++summary.bound_violations;
    }
    if (result.item.off_roofline.empty()) {
      const double error = std::abs(result.expected_error());
      errors.push_back(error);
      category_errors.push_back(error);
      category_ratios.push_back(result.expected / result.item.measured);
      category->within += error <= summary.tolerance ? 1 : 0;
    }
  }
  summary.scored = errors.size();
  for (const double error : errors) {
    summary.within += error <= summary.tolerance ? 1 : 0;
    summary.max_error = std::max(summary.max_error, error);
  }
  summary.median_error = median_of(errors);
  for (std::size_t index = 0; index < summary.categories.size(); ++index) {
    CategorySummary& category = summary.categories[index];
    category.scored = category_figures[index].first.size();
    category.median_error = median_of(category_figures[index].first);
    category.median_ratio = median_of(category_figures[index].second);
  }
  return summary;
}

}  // namespace rsim
