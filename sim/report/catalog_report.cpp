// SPDX-License-Identifier: MIT
#include "sim/report/catalog_report.hpp"

#include "sim/report/table.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

std::string_view usage(CatalogKind kind) {
  switch (kind) {
    case CatalogKind::hardware:
      return "a scenario's hardware:, or --hardware";
    case CatalogKind::models:
      return "a scenario's model:";
    case CatalogKind::plans:
      return "plan: {preset: NAME, mesh: …}, or --plan";
    case CatalogKind::precisions:
      break;
  }
  return "precision:, or --precision";
}

}  // namespace

void write_catalog_text(std::ostream& out, CatalogKind kind,
                        const std::vector<CatalogEntry>& entries) {
  out << fmt::format("{} presets ({}):\n\n", entries.size(), usage(kind));
  TextTable table({{"name", TextTable::Align::left}, {"description", TextTable::Align::left}});
  for (const CatalogEntry& entry : entries) {
    table.add_row({entry.name, entry.description});
  }
  table.print(out, "  ");
}

nlohmann::ordered_json catalog_to_json(const std::vector<CatalogEntry>& entries) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CatalogEntry& entry : entries) {
    nlohmann::ordered_json item{{"name", entry.name}, {"description", entry.description}};
    if (!entry.file.empty()) {
      item["file"] = entry.file;
    }
    list.push_back(std::move(item));
  }
  return list;
}

}  // namespace rsim
