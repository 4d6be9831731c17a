// SPDX-License-Identifier: MIT
#include "sim/report/csv.hpp"

#include "sim/report/json.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

std::string csv_cell(const nlohmann::ordered_json& value) {
  if (value.is_null()) {
    return "";
  }
  if (value.is_string() || value.is_structured()) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (text.find_first_of(",\"\n") == std::string::npos) {
      return text;
    }
    std::string quoted = "\"";
    for (char character : text) {
      quoted += character == '"' ? std::string("\"\"") : std::string(1, character);
    }
    return quoted + "\"";
  }
  if (value.is_number_float()) {
    return fmt::format("{:.17g}", value.get<double>());
  }
  return value.dump();
}

// Writes flat records (all with the same keys) as a header line and one line per record.
void write_records(std::ostream& out, const std::vector<nlohmann::ordered_json>& records) {
  if (records.empty()) {
    return;
  }
  std::vector<std::string> header;
  for (const auto& item : records.front().items()) {
    header.push_back(item.key());
  }
  out << fmt::format("{}\n", fmt::join(header, ","));
  for (const auto& record : records) {
    std::vector<std::string> cells;
    for (const auto& item : record.items()) {
      cells.push_back(csv_cell(item.value()));
    }
    out << fmt::format("{}\n", fmt::join(cells, ","));
  }
}

}  // namespace

void write_run_csv(std::ostream& out, const RunResult& result) {
  std::vector<nlohmann::ordered_json> records;
  for (std::size_t row = 0; row < result.table.order.size(); ++row) {
    records.push_back(op_record(result.graph.op(result.table.order[row]), result.table.costs[row],
                                result.critical[row]));
  }
  write_records(out, records);
}

void write_roofs_csv(std::ostream& out, const Roofs& roofs) {
  std::vector<nlohmann::ordered_json> records;
  for (const Ridge& ridge : ridges(roofs)) {
    records.push_back(ridge_record(roofs, ridge));
  }
  write_records(out, records);
}

void write_whatif_csv(std::ostream& out, const std::vector<RunResult>& runs) {
  std::vector<nlohmann::ordered_json> records;
  for (const RunResult& run : runs) {
    records.push_back(variant_record(run, runs.front()));
  }
  write_records(out, records);
}

void write_record_csv(std::ostream& out, const nlohmann::ordered_json& record) {
  write_records(out, {record});
}

void write_collective_csv(std::ostream& out, const CollectiveResult& result) {
  write_records(out, {collective_to_json(result)});
}

void write_matmul_csv(std::ostream& out, const MatmulResult& result) {
  write_records(out, {matmul_to_json(result)});
}

}  // namespace rsim
