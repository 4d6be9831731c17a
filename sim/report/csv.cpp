// SPDX-License-Identifier: MIT
#include "sim/report/csv.hpp"

#include "sim/report/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rsim {
namespace {

std::string csv_cell(const nlohmann::ordered_json& value) {
  if (value.is_null()) {
    return "";
  }
  if (value.is_string() || value.is_structured()) {
    return csv_field(value.is_string() ? value.get<std::string>() : value.dump());
  }
  if (value.is_number_float()) {
    if (!std::isfinite(value.get<double>())) {
      // No inf or NaN may reach an output (issue 23): it is rsim's bug, not the reader's.
      throw std::logic_error(
          "internal: a non-finite number in a CSV cell (please report it "
          "with the input)");
    }
    return fmt::format("{:.17g}", value.get<double>());
  }
  return value.dump();
}

// Nested objects become dotted columns ("bytes_by_tier.dram", "tiles.l2.bm"); arrays stay JSON.
void flatten(const nlohmann::ordered_json& record, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::ordered_json>>& cells) {
  for (const auto& item : record.items()) {
    const std::string key = prefix.empty() ? item.key() : prefix + "." + item.key();
    if (item.value().is_object()) {
      flatten(item.value(), key, cells);
    } else {
      cells.emplace_back(key, item.value());
    }
  }
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) {
    return std::string(text);
  }
  std::string quoted = "\"";
  for (char character : text) {
    quoted += character == '"' ? std::string("\"\"") : std::string(1, character);
  }
  return quoted + "\"";
}

// Writes records as a header line (every flattened key, in order of first appearance) and one
// line per record; a record lacking a column leaves it empty.
void write_records_csv(std::ostream& out, const std::vector<nlohmann::ordered_json>& records) {
  if (records.empty()) {
    return;
  }
  std::vector<std::vector<std::pair<std::string, nlohmann::ordered_json>>> rows(records.size());
  std::vector<std::string> header;
  for (std::size_t index = 0; index < records.size(); ++index) {
    flatten(records[index], "", rows[index]);
    for (const auto& [key, value] : rows[index]) {
      if (std::find(header.begin(), header.end(), key) == header.end()) {
        header.push_back(key);
      }
    }
  }
  out << fmt::format("{}\n", fmt::join(header, ","));
  for (const auto& flat : rows) {
    std::vector<std::string> cells;
    for (const std::string& key : header) {
      const auto cell = std::find_if(flat.begin(), flat.end(),
                                     [&](const auto& entry) { return entry.first == key; });
      cells.push_back(cell == flat.end() ? std::string() : csv_cell(cell->second));
    }
    out << fmt::format("{}\n", fmt::join(cells, ","));
  }
}

void write_run_csv(std::ostream& out, const RunResult& result) {
  std::vector<nlohmann::ordered_json> records;
  for (std::size_t row = 0; row < result.table.order.size(); ++row) {
    records.push_back(op_record(result.graph.op(result.table.order[row]), result.table.costs[row],
                                result.table.expected(static_cast<Eigen::Index>(row)),
                                result.critical[row]));
  }
  // Then a row per stage and the total (kind "stage" / "total"): the sums of the ops above, so
  // a spreadsheet need not add them up (issue 25).
  const auto totals_record = [](const std::string& name, const std::string& stage,
                                const std::string& kind, const Totals& totals) {
    nlohmann::ordered_json record{{"name", name}, {"stage", stage}, {"kind", kind}};
    record.update(totals_json(totals));  // the JSON's totals: the same keys as the op rows
    return record;
  };
  for (const GroupBounds& stage : result.bounds.stages) {
    records.push_back(totals_record(stage.stage, stage.stage, "stage", stage.totals));
  }
  records.push_back(totals_record("total", "", "total", result.bounds.total));
  write_records_csv(out, records);
}

void write_roofs_csv(std::ostream& out, const Roofs& roofs) {
  std::vector<nlohmann::ordered_json> records;
  for (const Ridge& ridge : ridges(roofs)) {
    records.push_back(ridge_record(roofs, ridge));
  }
  write_records_csv(out, records);
}

void write_whatif_csv(std::ostream& out, const std::vector<RunResult>& runs) {
  std::vector<nlohmann::ordered_json> records;
  for (const RunResult& run : runs) {
    records.push_back(variant_record(run, runs.front()));
  }
  write_records_csv(out, records);
}

void write_record_csv(std::ostream& out, const nlohmann::ordered_json& record) {
  write_records_csv(out, {record});
}

void write_collective_csv(std::ostream& out, const CollectiveResult& result) {
  write_records_csv(out, {collective_to_json(result)});
}

void write_matmul_csv(std::ostream& out, const MatmulResult& result) {
  write_records_csv(out, {matmul_to_json(result)});
}

}  // namespace rsim
