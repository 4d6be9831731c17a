// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/shard_merge.hpp"
#include "sim/report/sweep_report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

namespace rsim::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> files;
  std::string format = "json";
  std::int64_t threads = 0;
};

ShardDocument read_shard(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw InputError(fmt::format("{}: cannot open the file", path));
  }
  std::ostringstream text;
  text << file.rdbuf();
  try {
    return {path, nlohmann::ordered_json::parse(text.str())};
  } catch (const nlohmann::json::parse_error& error) {
    throw InputError(
        fmt::format("{}: not JSON (byte {}): run the shards with --format json", path, error.byte));
  }
}

// The scenario options the shards ran with, parsed as the sweep parsed them.
ScenarioOptions shard_scenario_options(const std::string& scenario,
                                       const std::vector<std::string>& arguments) {
  ScenarioOptions options;
  CLI::App parser{"the shards' scenario options", "rsim sweep"};
  add_scenario_options(parser, options);
  parser.add_option("--variant", options.variant);
  parser.add_option("--plan", options.plan);
  std::vector<std::string> reversed{scenario};
  reversed.insert(reversed.end(), arguments.begin(), arguments.end());
  std::reverse(reversed.begin(), reversed.end());  // CLI11 parses a vector from its back
  try {
    parser.parse(reversed);
  } catch (const CLI::ParseError& error) {
    throw InputError(fmt::format("the shards' 'arguments' do not parse: {}", error.what()));
  }
  return options;
}

int merge_sweep(const MergeOptions& options, const std::vector<ShardDocument>& shards,
                std::ostream& out) {
  MergedSweep merged = merge_sweep_shards(shards);
  SweepResult& result = merged.result;
  if (merged.crossovers && !result.cancelled) {
    const ScenarioOptions scenario = shard_scenario_options(result.scenario, merged.arguments);
    SweepOptions sweep;
    sweep.threads = options.threads;
    sweep.rank_by = result.rank_by;
    find_merged_crossovers(result, scenario_overrides(scenario), scenario.roofs.mode,
                           parse_overrides(scenario.roofs), sweep);
  }
  const int code = emit(
      options.format, out, [&] { return sweep_to_json(result); },
      [&](std::ostream& stream) { write_sweep_csv(stream, result); },
      [&](std::ostream& stream) { write_sweep_text(stream, result); });
  return result.cancelled ? kExitInterrupted : code;
}

int merge_search(const MergeOptions& options, const std::vector<ShardDocument>& shards,
                 std::ostream& out) {
  if (options.format == "table") {
    throw InputError(
        "--format table: a merged training search prints JSON or CSV (rsim search "
        "prints the table of one process's search)");
  }
  const nlohmann::ordered_json merged = merge_search_shards(shards);
  const int code = emit(
      options.format, out, [&] { return merged; },
      [&](std::ostream& stream) {
        const auto& ranked = merged["ranked"];
        write_records_csv(stream, {ranked.begin(), ranked.end()});
      },
      [](std::ostream&) {});
  return merged["cancelled"].get<bool>() ? kExitInterrupted : code;
}

int merge_command(const MergeOptions& options, std::ostream& out) {
  std::vector<ShardDocument> shards;
  shards.reserve(options.files.size());
  for (const std::string& path : options.files) {
    shards.push_back(read_shard(path));
  }
  return shard_command(shards) == "sweep" ? merge_sweep(options, shards, out)
                                          : merge_search(options, shards, out);
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  const auto options = std::make_shared<MergeOptions>();
  CLI::App* merge = app.add_subcommand(
      "merge",
      "Join the JSON outputs of rsim sweep/search --shard K/N (K = 1…N) into what the unsharded "
      "command prints; run it where the shards ran (the scenario's path is relative to there)");
  merge->add_option("FILES", options->files, "Every shard's JSON output, in any order")->required();
  merge->add_option("--format", options->format, "Output format (table: sweeps only)")
      ->check(CLI::IsMember({"json", "csv", "table"}));
  merge
      ->add_option("--threads", options->threads,
                   "Worker threads for the sweep's crossover search (default: all cores)")
      ->check(non_negative_number());
  return {merge, [options](std::ostream& out, std::ostream& /*err*/) {
            return merge_command(*options, out);
          }};
}

}  // namespace rsim::cli
