// SPDX-License-Identifier: MIT
#include "sim/explore/search.hpp"

#include "commands/commands.hpp"
#include "commands/side_by_side.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "sim/base/error.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/search_report.hpp"
#include "sim/report/serving_search_report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace rsim::cli {
namespace {

struct SearchOptionsCli {
  ScenarioOptions scenario;
  std::int64_t devices = 0;
  std::string objective = "latency";
  std::string rank_by = "expected";
  std::size_t top = 10;
  std::int64_t threads = 0;
  bool exhaustive = false;
  bool uneven_stages = false;
  std::string shard;
  std::string slo;
  std::string plot;
};

// `--slo ttft_p99=2s,tpot_p99=100ms` (either key alone; `ttft`/`tpot` too).
ServingSlo parse_slo_option(const std::string& text) {
  ServingSlo slo;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const auto [key, value] = parse_assignment("--slo", item, Dimension::seconds);
    if (key == "ttft_p99" || key == "ttft") {
      slo.ttft_s = value;
    } else if (key == "tpot_p99" || key == "tpot") {
      slo.tpot_s = value;
    } else {
      throw InputError(
          fmt::format("--slo {}: unknown objective '{}' (expected ttft_p99=TIME, "
                      "tpot_p99=TIME)",
                      text, key));
    }
    start = comma + 1;
  }
  return slo;
}

// A serving scenario's search: deployments of the devices ranked by goodput per device.
int serving_search_command(const SearchOptionsCli& options, const Scenario& scenario,
                           const Roofs& roofs, std::ostream& out) {
  if (!options.shard.empty()) {
    throw InputError("--shard: a serving search runs in one process");
  }
  const ServingSearchResult result =
      search_serving(scenario, roofs, options.devices,
                     options.slo.empty() ? ServingSlo{} : parse_slo_option(options.slo));
  if (!options.plot.empty()) {
    // The Pareto chart (an SVG file; the ranking is printed as well).
    write_file("--plot", options.plot, render_series_svg(serving_pareto_chart(scenario, result)));
  }
  return emit(
      options.scenario.roofs.format, out,
      [&] { return serving_search_to_json(scenario, result, options.top); },
      [&](std::ostream& stream) {
        const auto ranked = serving_search_to_json(scenario, result, options.top)["ranked"];
        std::vector<nlohmann::ordered_json> rows;
        for (const auto& row : ranked) {
          nlohmann::ordered_json flat = row;
          flat.erase("serving");
          flat["ttft_p99_s"] = row["serving"]["ttft_s"].is_null() ? nlohmann::ordered_json(nullptr)
                                                                  : row["serving"]["ttft_s"]["p99"];
          flat["tpot_p99_s"] = row["serving"]["tpot_s"].is_null() ? nlohmann::ordered_json(nullptr)
                                                                  : row["serving"]["tpot_s"]["p99"];
          rows.push_back(flat);
        }
        write_records_csv(stream, rows);
      },
      [&](std::ostream& stream) {
        write_serving_search_text(stream, scenario, result, options.top);
      });
}

// A training scenario's search: its own space, ranked by step time (with the global batch and
// the devices fixed, throughput and cost rank the same way).
int training_search_command(const SearchOptionsCli& options, RankBy rank_by, Shard shard,
                            const Scenario& scenario, const Roofs& roofs, std::ostream& out,
                            std::ostream& err) {
  TrainingSearchOptions search;
  search.rank_by = rank_by;
  search.threads = options.threads;
  search.prune = !options.exhaustive;
  search.uneven_stages = options.uneven_stages;
  search.keep = options.top;
  search.progress = progress_bar(err, "plan shapes");
  search.cancel = &sweep_interrupted;
  search.shard = shard;
  TrainingSearchResult result;
  {
    const InterruptScope interrupt;
    result = search_training_plans(scenario, roofs, options.devices, search);
  }
  result.scenario_args = run_arguments(options.scenario);
  const int code = emit(
      options.scenario.roofs.format, out,
      [&] { return training_search_to_json(result, options.top); },
      [&](std::ostream& stream) {
        const auto ranked = training_search_to_json(result, options.top)["ranked"];
        write_records_csv(stream, {ranked.begin(), ranked.end()});
      },
      [&](std::ostream& stream) { write_training_search_text(stream, result, options.top); });
  return result.cancelled ? kExitInterrupted : code;
}

int search_command(const SearchOptionsCli& options, std::ostream& out, std::ostream& err) {
  const auto objective = parse_search_objective(options.objective);
  if (!objective) {
    throw InputError(
        fmt::format("--objective {}: expected latency, throughput or cost", options.objective));
  }
  const RankBy rank_by = parse_rank_by_option(options.rank_by);
  Scenario scenario =
      load_scenario(options.scenario.scenario, scenario_overrides(options.scenario));
  const Roofs roofs = scenario_roofs(scenario, options.scenario.roofs.mode,
                                     parse_overrides(options.scenario.roofs));
  if (scenario.serving) {
    return serving_search_command(options, scenario, roofs, out);
  }
  for (const auto& [flag, given] :
       {std::pair{"--slo", !options.slo.empty()}, std::pair{"--plot", !options.plot.empty()}}) {
    if (given) {
      throw InputError(
          fmt::format("{} is for a serving scenario (workload: {{phase: serve, ...}})", flag));
    }
  }
  const Shard shard = options.shard.empty() ? Shard{} : parse_shard(options.shard, "--shard");
  if (scenario.workload.phase == Phase::train) {
    if (shard.requested && options.scenario.roofs.format != "json") {
      throw InputError(fmt::format(
          "--shard {}: a shard writes JSON for rsim merge; add --format json", options.shard));
    }
    return training_search_command(options, rank_by, shard, scenario, roofs, out, err);
  }
  if (shard.requested) {
    throw InputError(fmt::format(
        "--shard {}: only a training search (workload phase: train) is split into shards; an "
        "inference search costs its few dozen plans in one process",
        options.shard));
  }
  const SearchResult result = search_plans(scenario, roofs, options.devices, *objective, rank_by);
  return emit(
      options.scenario.roofs.format, out, [&] { return search_to_json(result, options.top); },
      [&](std::ostream& stream) {
        const auto ranked = search_to_json(result, options.top)["ranked"];
        write_records_csv(stream, {ranked.begin(), ranked.end()});
      },
      [&](std::ostream& stream) { write_search_text(stream, result, options.top); });
}

}  // namespace

Command add_search_command(CLI::App& app) {
  const auto options = std::make_shared<SearchOptionsCli>();
  CLI::App* search = app.add_subcommand(
      "search",
      "Every inference (or, for phase: train, training) plan for N devices, costed and ranked "
      "(rejections by reason)");
  add_scenario_options(*search, options->scenario);
  search->add_option("--variant", options->scenario.variant, "Start from one of the variants");
  search->add_option("--devices", options->devices, "Devices to plan for")
      ->required()
      ->check(positive_number());
  search->add_option("--objective", options->objective,
                     "latency (shortest ranked time), throughput (sequences per device-second) "
                     "or cost (device-seconds per sequence); inference only");
  add_rank_by_option(*search, options->rank_by);
  search->add_option("--top", options->top,
                     "Plans to print (0 = all); a training search keeps only these in memory");
  search
      ->add_option("--threads", options->threads,
                   "Worker threads for a training search (default: all cores)")
      ->check(non_negative_number());
  search->add_flag("--uneven-stages", options->uneven_stages,
                   "Training: also try pipeline degrees that do not divide the layers (Megatron's "
                   "uneven first and last stages; the busiest stage is costed)");
  search->add_flag(
      "--exhaustive", options->exhaustive,
      "Training: cost every plan, pruning none by memory first (to check the pruning)");
  search->add_option("--slo", options->slo,
                     "A serving scenario's objectives, e.g. ttft_p99=2s,tpot_p99=100ms (default: "
                     "its slo:)");
  search->add_option("--plot", options->plot,
                     "A serving search: write the Pareto chart of tokens/s per device against "
                     "p99 TPOT at each deployment's SLO rate as SVG to FILE");
  search->add_option("--shard", options->shard,
                     "Training: search only the K-th of N contiguous slices of the plan shapes "
                     "(K/N, K from 1), as JSON; rsim merge joins the N outputs");
  return {search, [options](std::ostream& out, std::ostream& err) {
            return search_command(*options, out, err);
          }};
}

}  // namespace rsim::cli
