// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/catalog_report.hpp"
#include "sim/spec/catalog.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>

namespace rsim::cli {
namespace {

struct ListOptions {
  std::string kind;
  std::string format = "table";
};

int list_command(const ListOptions& options, std::ostream& out) {
  const std::optional<CatalogKind> kind = parse_catalog_kind(options.kind);
  if (!kind) {
    throw InputError(
        fmt::format("rsim list {}: expected hardware, models, plans or precisions", options.kind));
  }
  const std::vector<CatalogEntry> entries = catalog(*kind);
  return emit(
      options.format, out, [&] { return catalog_to_json(entries); },
      [&](std::ostream& stream) { write_catalog_text(stream, *kind, entries); },
      [&](std::ostream& stream) { write_catalog_text(stream, *kind, entries); });
}

}  // namespace

Command add_list_command(CLI::App& app) {
  const auto options = std::make_shared<ListOptions>();
  CLI::App* command = app.add_subcommand(
      "list", "The presets rsim ships: hardware, models, plans or precisions, a line each");
  command->add_option("KIND", options->kind, "hardware, models, plans or precisions")->required();
  command->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  return {command,
          [options](std::ostream& out, std::ostream&) { return list_command(*options, out); }};
}

}  // namespace rsim::cli
