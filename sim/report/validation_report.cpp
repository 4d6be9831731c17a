// SPDX-License-Identifier: MIT
#include "sim/report/validation_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

namespace rsim {

void write_validation_text(std::ostream& out, const std::vector<ValidationResult>& results,
                           const ValidationSummary& summary) {
  write_wrapped(
      out,
      fmt::format(
          "Validation: {} published measurements; the lower bound holds on {} of them; expected "
          "within ±{:.0f} % on {} of {} ({}), median error {}, max {}.",
          summary.cases, summary.cases - summary.bound_violations - summary.failed,
          100.0 * summary.tolerance, summary.within, summary.scored,
          percent(summary.scored > 0
                      ? static_cast<double>(summary.within) / static_cast<double>(summary.scored)
                      : 0.0),
          percent(summary.median_error), percent(summary.max_error)));
  out << '\n';
  TextTable table({{"case", TextTable::Align::left},
                   {"category", TextTable::Align::left},
                   {"measured"},
                   {"lower"},
                   {"lower/meas"},
                   {"expected"},
                   {"exp/meas"},
                   {"", TextTable::Align::left}});
  for (const ValidationResult& result : results) {
    if (!result.error.empty()) {
      table.add_row({result.item.name, result.item.category, seconds(result.item.measured), "-",
                     "-", "-", "-", "ERROR"});
      continue;
    }
    std::string flag;
    if (!result.bound_holds()) {
      flag = "BOUND ABOVE MEASURED";
    } else if (!result.item.off_roofline.empty()) {
      flag = "off roofline, not scored";
    } else if (std::abs(result.expected_error()) > summary.tolerance) {
      flag = fmt::format("outside ±{:g} %", 100.0 * summary.tolerance);
    }
    table.add_row({result.item.name, result.item.category, seconds(result.item.measured),
                   seconds(result.lower), fmt::format("{:.3f}", result.lower_ratio()),
                   seconds(result.expected),
                   fmt::format("{:.3f}", result.expected / result.item.measured), flag});
  }
  table.print(out, "  ");
  // Where rsim can be trusted: each category's share within the tolerance and its bias.
  out << '\n';
  write_wrapped(out,
                "By category (scored: not marked off the roofline; exp/meas below 1: rsim expects "
                "less time than measured):");
  out << '\n';
  TextTable categories({{"category", TextTable::Align::left},
                        {"cases"},
                        {"scored"},
                        {fmt::format("within ±{:g} %", 100.0 * summary.tolerance)},
                        {"median error"},
                        {"median exp/meas"}});
  for (const CategorySummary& category : summary.categories) {
    const bool any = category.scored > 0;
    categories.add_row({category.category, fmt::format("{}", category.cases),
                        fmt::format("{}", category.scored),
                        any ? fmt::format("{} ({})", category.within,
                                          percent(static_cast<double>(category.within) /
                                                  static_cast<double>(category.scored)))
                            : std::string("-"),
                        any ? percent(category.median_error) : std::string("-"),
                        any ? fmt::format("{:.3f}", category.median_ratio) : std::string("-")});
  }
  categories.print(out, "  ");
  for (const ValidationResult& result : results) {
    if (!result.error.empty()) {
      out << fmt::format("\n{}: {}", result.item.name, result.error);
    }
  }
  out << fmt::format("\n{}\n", summary.passed()
                                   ? "PASSED: every lower bound is at or below its measurement."
                                   : "FAILED: a lower bound above its measurement, or a case "
                                     "that could not be costed (above).");
}

nlohmann::ordered_json validation_to_json(const std::vector<ValidationResult>& results,
                                          const ValidationSummary& summary) {
  using Json = nlohmann::ordered_json;
  Json cases = Json::array();
  for (const ValidationResult& result : results) {
    Json record{
        {"name", result.item.name},
        {"category", result.item.category},
        {"quantity", result.item.matmul ? "matmul" : std::string(to_string(result.item.quantity))},
        {"measured_s", result.item.measured.si()},
        {"source", result.item.source},
        {"engine", result.item.engine},
        {"off_roofline",
         result.item.off_roofline.empty() ? Json(nullptr) : Json(result.item.off_roofline)}};
    if (result.error.empty()) {
      record["t_lower_s"] = result.lower.si();
      record["t_expected_s"] = result.expected.si();
      record["lower_over_measured"] = result.lower_ratio();
      record["expected_over_measured"] = result.expected / result.item.measured;
      record["bound_holds"] = result.bound_holds();
      record["error"] = nullptr;
    } else {
      record["error"] = result.error;
    }
    cases.push_back(std::move(record));
  }
  Json categories = Json::array();
  for (const CategorySummary& category : summary.categories) {
    categories.push_back({{"category", category.category},
                          {"cases", category.cases},
                          {"scored", category.scored},
                          {"within_tolerance", category.within},
                          {"median_abs_error", category.median_error},
                          {"median_expected_over_measured", category.median_ratio}});
  }
  return Json{{"cases", std::move(cases)},
              {"summary",
               {{"cases", summary.cases},
                {"failed", summary.failed},
                {"bound_violations", summary.bound_violations},
                {"scored", summary.scored},
                {"within_tolerance", summary.within},
                {"tolerance", summary.tolerance},
                {"median_abs_error", summary.median_error},
                {"max_abs_error", summary.max_error},
                {"categories", std::move(categories)},
                {"passed", summary.passed()}}}};
}

}  // namespace rsim
