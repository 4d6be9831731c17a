// SPDX-License-Identifier: MIT
#include "cli.hpp"

#include "sim/analysis/analysis.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/explain.hpp"
#include "sim/explore/search.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/report/chart/bar_chart.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/chart/text_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/html.hpp"
#include "sim/report/json.hpp"
#include "sim/report/measured_report.hpp"
#include "sim/report/search_report.hpp"
#include "sim/report/sweep_report.hpp"
#include "sim/report/text.hpp"
#include "sim/spec/hf_config.hpp"
#include "sim/spec/presets.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace rsim {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitInput = 2;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, the shell's convention

// Prints a result as JSON, CSV or the text report, as `format` asks.
template <class Json, class Csv, class Text>
int emit(const std::string& format, std::ostream& out, Json json, Csv csv, Text text) {
  if (format == "json") {
    out << json().dump(2) << '\n';
  } else if (format == "csv") {
    csv(out);
  } else {
    text(out);
  }
  return kExitOk;
}

// Writes a chart or report file; a path that cannot be written is the user's to fix.
void write_file(const std::string& flag, const std::string& path, const std::string& content) {
  std::ofstream file(path);
  file << content;
  if (!file) {
    throw InputError(fmt::format("{} {}: cannot write the file", flag, path));
  }
}

// --plot FILE writes the SVG; --plot - prints the text chart instead of the report (true).
template <class Svg, class Text>
bool plot(const std::string& target, std::ostream& out, Svg svg, Text text) {
  if (target == "-") {
    out << text();
    return true;
  }
  if (!target.empty()) {
    write_file("--plot", target, svg());
  }
  return false;
}

template <class Html>
void write_html(const std::string& target, Html html) {
  if (!target.empty()) {
    std::ostringstream document;
    html(document);
    write_file("--html", target, document.str());
  }
}

struct RoofOptions {
  std::string mode;
  std::vector<std::string> peaks;
  std::vector<std::string> bandwidths;
  std::string format = "table";
};

void add_roof_options(CLI::App& command, RoofOptions& options) {
  command.add_option("--mode", options.mode, "Power/clock mode (default: the hardware's default)");
  command.add_option("--peak", options.peaks,
                     "Override a compute peak: PATH=RATE, e.g. bf16=1e15 or fp8=\"455 TFLOP/s\"");
  command.add_option(
      "--bandwidth", options.bandwidths,
      "Override a memory bandwidth: TIER=RATE, e.g. hbm=8.1e11 or dram=\"200 GB/s\"");
  command.add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}));
}

std::pair<std::string, double> parse_assignment(const std::string& flag, const std::string& text,
                                                Dimension dimension) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(fmt::format("{} {}: expected NAME=VALUE", flag, text));
  }
  const std::string name = text.substr(0, equals);
  const std::string value_text = text.substr(equals + 1);
  // On the command line a bare number is SI (FLOP/s or B/s), as in the scaling book's tables.
  double value = 0.0;
  const char* const end = value_text.data() + value_text.size();
  const auto [rest, error] = std::from_chars(value_text.data(), end, value);
  if (error == std::errc{} && rest == end && std::isfinite(value) && value > 0.0) {
    return {name, value};
  }
  if (const auto quantity = parse_quantity(value_text, dimension)) {
    return {name, *quantity};
  }
  throw InputError(fmt::format("{} {}: expected {} or a positive number in SI units", flag, text,
                               describe(dimension)));
}

RoofOverrides parse_overrides(const RoofOptions& options) {
  RoofOverrides overrides;
  for (const std::string& text : options.peaks) {
    const auto [name, value] = parse_assignment("--peak", text, Dimension::flop_rate);
    overrides.peaks.emplace_back(name, FlopsPerSecond(value));
  }
  for (const std::string& text : options.bandwidths) {
    const auto [name, value] = parse_assignment("--bandwidth", text, Dimension::byte_rate);
    overrides.bandwidths.emplace_back(name, BytesPerSecond(value));
  }
  return overrides;
}

Roofs load_roofs(const std::string& hardware, const RoofOptions& options) {
  const HardwareSpec spec = load_hardware(find_preset(hardware, "hardware", {}));
  return resolve_roofs(spec, options.mode, parse_overrides(options));
}

struct ScenarioOptions {
  std::string scenario;
  RoofOptions roofs;
  std::vector<std::string> sets;
  std::string precision;
  std::string plan;
  std::string variant;
  std::string plot;  ///< whatif, compare: stacked bars
  std::string html;
};

void add_scenario_options(CLI::App& command, ScenarioOptions& options) {
  command.add_option("SCENARIO", options.scenario, "Scenario YAML file")->required();
  add_roof_options(command, options.roofs);
  command.add_option("--set", options.sets,
                     "Override a scenario key before validation: KEY.PATH=VALUE, e.g. "
                     "workload.batch=8");
  command.add_option("--precision", options.precision,
                     "Use a precision policy: bf16, fp16, int8_weights, int8, fp8, fp4, nvfp4, "
                     "int4_weights");
}

void add_runs_chart_options(CLI::App& command, ScenarioOptions& options) {
  command.add_option("--plot", options.plot,
                     "Write stacked bars of ΣT_math / ΣT_mem / ΣT_net per plan or variant as SVG "
                     "to FILE (- draws them as text instead of the report)");
  command.add_option("--html", options.html,
                     "Write a self-contained HTML report (tables, bars, the baseline's roofline)");
}

ScenarioOverrides scenario_overrides(const ScenarioOptions& options) {
  ScenarioOverrides overrides;
  overrides.variant = options.variant;
  for (const std::string& text : options.sets) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError(fmt::format("--set {}: expected KEY.PATH=VALUE", text));
    }
    overrides.sets.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  if (!options.precision.empty()) {
    overrides.sets.emplace_back("precision", options.precision);
  }
  if (!options.plan.empty()) {
    overrides.sets.emplace_back("plan.preset", options.plan);
  }
  return overrides;
}

RunResult run_scenario(Scenario scenario, const ScenarioOptions& options) {
  Roofs roofs = scenario_roofs(scenario, options.roofs.mode, parse_overrides(options.roofs));
  return analyze(std::move(scenario), std::move(roofs));
}

struct RunOptions {
  ScenarioOptions scenario;
  std::string explain;
  std::size_t top = 15;
  std::string plot;
  std::string html;
  std::string measured;
  std::vector<std::string> matches;
};

std::vector<KernelOnRoofs> measured_kernels(const std::string& csv,
                                            const std::vector<std::string>& match_texts,
                                            const Roofs& roofs, const RunResult* run) {
  std::vector<KernelMatch> matches;
  for (const std::string& text : match_texts) {
    matches.push_back(parse_kernel_match(text));
  }
  if (csv.empty()) {
    if (!matches.empty()) {
      throw InputError("--match needs --measured KERNELS.csv");
    }
    return {};
  }
  return place_kernels(load_ncu_csv(csv), roofs, run, matches, csv);
}

int run_command(const RunOptions& options, std::ostream& out) {
  const RunResult result =
      run_scenario(load_scenario(options.scenario.scenario, scenario_overrides(options.scenario)),
                   options.scenario);
  if (!options.explain.empty()) {
    bool found = false;
    for (OpGraph::Vertex vertex : result.table.order) {
      const Op& op = result.graph.op(vertex);
      const std::string qualified = op.qualified_name();
      if (qualified == options.explain || op.name == options.explain ||
          qualified.ends_with("/" + options.explain)) {
        for (const std::string& line : explain_op(op, result.roofs, result.scenario.tiles)) {
          out << line << '\n';
        }
        found = true;
      }
    }
    if (!found) {
      throw InputError(
          fmt::format("--explain {}: no such op (names look like "
                      "\"prefix/layer/q_proj\" or \"q_proj\")",
                      options.explain));
    }
    return kExitOk;
  }
  const std::vector<KernelOnRoofs> kernels =
      measured_kernels(options.measured, options.matches, result.roofs, &result);
  write_html(options.html, [&](std::ostream& stream) { write_run_html(stream, result, kernels); });
  RooflineChart chart = roofline_of_run(result);
  add_measured(chart, kernels);
  if (plot(
          options.plot, out, [&] { return render_roofline_svg(chart); },
          [&] { return render_roofline_text(chart); })) {
    return kExitOk;
  }
  return emit(
      options.scenario.roofs.format, out,
      [&] {
        nlohmann::ordered_json json = run_to_json(result);
        if (!options.measured.empty()) {
          json["measured"] = measured_to_json(kernels);
        }
        return json;
      },
      [&](std::ostream& stream) { write_run_csv(stream, result); },
      [&](std::ostream& stream) {
        write_run_text(stream, result, TextOptions{options.top});
        if (!kernels.empty()) {
          stream << '\n';
          write_measured_text(stream, kernels, result.roofs);
        }
      });
}

// --plot and --html of whatif and compare; true when the text chart replaced the report.
bool runs_charts(const ScenarioOptions& options, const std::vector<RunResult>& runs,
                 const std::string& title, std::ostream& out) {
  write_html(options.html, [&](std::ostream& stream) { write_runs_html(stream, runs, title); });
  const StackedBars bars = bars_of_runs(runs, title);
  return plot(
      options.plot, out, [&] { return render_bars_svg(bars); },
      [&] { return render_bars_text(bars); });
}

// Runs side by side (whatif, compare): their charts, or the table / JSON / CSV.
int emit_runs(const ScenarioOptions& options, const std::vector<RunResult>& runs,
              const std::string& title, std::ostream& out) {
  if (runs_charts(options, runs, title, out)) {
    return kExitOk;
  }
  return emit(
      options.roofs.format, out, [&] { return whatif_to_json(runs); },
      [&](std::ostream& stream) { write_whatif_csv(stream, runs); },
      [&](std::ostream& stream) { write_whatif_text(stream, runs); });
}

int whatif_command(const ScenarioOptions& options, std::ostream& out) {
  std::vector<Scenario> scenarios;
  if (options.variant.empty()) {
    scenarios = load_scenario_variants(options.scenario, scenario_overrides(options));
  } else {
    ScenarioOptions baseline = options;
    baseline.variant.clear();
    scenarios.push_back(load_scenario(options.scenario, scenario_overrides(baseline)));
    scenarios.push_back(load_scenario(options.scenario, scenario_overrides(options)));
  }
  std::vector<RunResult> runs;
  for (Scenario& scenario : scenarios) {
    runs.push_back(run_scenario(std::move(scenario), options));
  }
  return emit_runs(options, runs, "What if: " + runs.front().scenario.name, out);
}

struct SweepOptionsCli {
  ScenarioOptions scenario;
  std::vector<std::string> over;
  std::int64_t threads = 0;
  bool no_crossovers = false;
  std::string plot;
  std::string html;
};

// Set by SIGINT while a sweep or a training search runs: it stops and prints what it finished.
// A signal handler can only reach static storage.
std::atomic<bool> sweep_interrupted{false};

extern "C" void interrupt_sweep(int /*signal*/) { sweep_interrupted.store(true); }

// A progress bar on stderr once a sweep or a training search has run for a second, when stderr
// is a terminal.
std::function<void(std::size_t, std::size_t)> progress_bar(std::ostream& err,
                                                           std::string_view unit = "points") {
  if (isatty(STDERR_FILENO) == 0) {
    return {};
  }
  struct State {
    std::mutex mutex;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point shown;
  };
  auto state = std::make_shared<State>();
  return [state, &err, unit](std::size_t done, std::size_t total) {
    const std::lock_guard lock(state->mutex);
    const auto now = std::chrono::steady_clock::now();
    if (now - state->start < std::chrono::seconds(1) ||
        (now - state->shown < std::chrono::milliseconds(100) && done < total)) {
      return;
    }
    state->shown = now;
    constexpr std::size_t kWidth = 40;
    const std::size_t filled = kWidth * done / total;
    err << fmt::format("\r[{}{}] {}/{} {}", std::string(filled, '#'),
                       std::string(kWidth - filled, '.'), done, total, unit)
        << (done == total ? "\n" : "") << std::flush;
  };
}

int sweep_command(const SweepOptionsCli& options, std::ostream& out, std::ostream& err) {
  std::vector<SweepAxis> axes;
  for (const std::string& text : options.over) {
    axes.push_back(parse_sweep_axis(text, "--over"));
  }
  if (axes.empty()) {
    const Scenario scenario =
        load_scenario(options.scenario.scenario, scenario_overrides(options.scenario));
    for (const auto& [assignment, origin] : scenario.sweep) {
      axes.push_back(parse_sweep_axis(assignment, origin));
    }
  }
  SweepOptions sweep;
  sweep.threads = options.threads;
  sweep.crossovers = !options.no_crossovers;
  sweep.progress = progress_bar(err);
  sweep.loading_progress = progress_bar(err, "scenarios loaded");
  sweep_interrupted.store(false);
  sweep.cancel = &sweep_interrupted;
  const auto previous = std::signal(SIGINT, interrupt_sweep);
  SweepResult result;
  try {
    result = run_sweep(options.scenario.scenario, scenario_overrides(options.scenario), axes,
                       options.scenario.roofs.mode, parse_overrides(options.scenario.roofs), sweep);
  } catch (...) {
    std::signal(SIGINT, previous);
    throw;
  }
  std::signal(SIGINT, previous);
  if (options.plot == "-") {
    throw InputError(
        "--plot -: sweeps draw SVG only (--plot FILE.svg); the table is the text view");
  }
  if (!options.plot.empty()) {
    write_file("--plot", options.plot, render_series_svg(sweep_chart(result)));
  }
  write_html(options.html, [&](std::ostream& stream) { write_sweep_html(stream, result); });
  const int code = emit(
      options.scenario.roofs.format, out, [&] { return sweep_to_json(result); },
      [&](std::ostream& stream) { write_sweep_csv(stream, result); },
      [&](std::ostream& stream) { write_sweep_text(stream, result); });
  return result.cancelled ? kExitInterrupted : code;
}

struct SearchOptionsCli {
  ScenarioOptions scenario;
  std::int64_t devices = 0;
  std::string objective = "latency";
  std::size_t top = 10;
  std::int64_t threads = 0;
  bool exhaustive = false;
};

// A training scenario's search: its own space, ranked by step time (with the global batch and
// the devices fixed, throughput and cost rank the same way).
int training_search_command(const SearchOptionsCli& options, const Scenario& scenario,
                            const Roofs& roofs, std::ostream& out, std::ostream& err) {
  TrainingSearchOptions search;
  search.threads = options.threads;
  search.prune = !options.exhaustive;
  search.keep = options.top;
  search.progress = progress_bar(err, "plan shapes");
  sweep_interrupted.store(false);
  search.cancel = &sweep_interrupted;
  const auto previous = std::signal(SIGINT, interrupt_sweep);
  TrainingSearchResult result;
  try {
    result = search_training_plans(scenario, roofs, options.devices, search);
  } catch (...) {
    std::signal(SIGINT, previous);
    throw;
  }
  std::signal(SIGINT, previous);
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
  Scenario scenario =
      load_scenario(options.scenario.scenario, scenario_overrides(options.scenario));
  const Roofs roofs = scenario_roofs(scenario, options.scenario.roofs.mode,
                                     parse_overrides(options.scenario.roofs));
  if (scenario.workload.phase == "train") {
    return training_search_command(options, scenario, roofs, out, err);
  }
  const SearchResult result = search_plans(scenario, roofs, options.devices, *objective);
  return emit(
      options.scenario.roofs.format, out, [&] { return search_to_json(result, options.top); },
      [&](std::ostream& stream) {
        const auto ranked = search_to_json(result, options.top)["ranked"];
        write_records_csv(stream, {ranked.begin(), ranked.end()});
      },
      [&](std::ostream& stream) { write_search_text(stream, result, options.top); });
}

int compare_command(const ScenarioOptions& options, const std::vector<std::string>& plans,
                    std::ostream& out) {
  std::vector<RunResult> runs;
  runs.push_back(
      run_scenario(load_scenario(options.scenario, scenario_overrides(options)), options));
  for (const std::string& plan : plans) {
    ScenarioOverrides overrides = scenario_overrides(options);
    overrides.sets.emplace_back("plan.preset", plan);
    Scenario scenario = load_scenario(options.scenario, overrides);
    scenario.variant = "plan " + plan;
    runs.push_back(run_scenario(std::move(scenario), options));
  }
  return emit_runs(options, runs, "Plans: " + runs.front().scenario.name, out);
}

struct ThresholdOptions {
  ScenarioOptions scenario;
  std::string param = "batch";
  std::string roof = "memory";
  std::string scope;
  std::int64_t high = std::int64_t{1} << 24;
};

int threshold_command(const ThresholdOptions& options, std::ostream& out) {
  ThresholdQuery query;
  query.key = options.param;
  query.roof = options.roof == "network" ? Bound::network : Bound::memory;
  query.scope = options.scope;
  query.high = options.high;
  const ThresholdResult result =
      threshold_scenario(options.scenario.scenario, scenario_overrides(options.scenario), query,
                         options.scenario.roofs.mode, parse_overrides(options.scenario.roofs));
  return emit(
      options.scenario.roofs.format, out, [&] { return threshold_to_json(query, result); },
      [&](std::ostream& stream) { write_record_csv(stream, threshold_to_json(query, result)); },
      [&](std::ostream& stream) { write_threshold_text(stream, query, result); });
}

struct MatmulOptions {
  std::string hardware;
  RoofOptions roofs;
  std::int64_t batch = 0;
  std::int64_t contract = 0;
  std::int64_t out = 0;
  std::string precision;
  std::string dtype;
  std::string weights;
  std::string output;
  std::string compute;
  bool per_batch_weights = false;
  std::int64_t devices = 1;
  std::string shard;
  std::string network;
  bool sharp = false;
  std::vector<std::string> tiles;
  bool explain = false;
  std::string plot;
};

// "--tile smem=128,256,64" or "--tile 128,256,64" (the kernel's tier: smem or vmem).
TileChoices tile_options(const std::vector<std::string>& texts, const Roofs& roofs) {
  TileChoices tiles;
  tiles.origin = "--tile";
  for (const std::string& text : texts) {
    const std::size_t equals = text.find('=');
    std::string tier =
        equals == std::string::npos ? kernel_tile_tier(roofs.memory) : text.substr(0, equals);
    if (tier.empty()) {
      throw InputError(
          fmt::format("--tile {}: {} has no smem or vmem tier; name one: --tile "
                      "TIER=bm,bn,bk",
                      text, roofs.hardware));
    }
    const std::string edges = equals == std::string::npos ? text : text.substr(equals + 1);
    tiles.by_tier.emplace_back(std::move(tier), parse_tile(edges, "--tile"));
  }
  return tiles;
}

DType dtype_option(const std::string& flag, const std::string& name) {
  const auto dtype = parse_dtype(name);
  if (!dtype) {
    throw InputError(
        fmt::format("{} {}: expected one of {}", flag, name, fmt::join(dtype_names(), ", ")));
  }
  return *dtype;
}

int matmul_command(const MatmulOptions& options, std::ostream& out) {
  MatmulShape shape;
  shape.batch = options.batch;
  shape.contract = options.contract;
  shape.out = options.out;
  // A policy sets every dtype and the path; --dtype alone sets all three dtypes (bf16 default);
  // --weights, --out and --compute override either.
  Precision precision = *precision_preset("bf16");
  if (!options.precision.empty()) {
    const auto preset = precision_preset(options.precision);
    if (!preset) {
      throw InputError(fmt::format("--precision {}: no such policy", options.precision));
    }
    precision = *preset;
  }
  if (!options.dtype.empty()) {
    precision.activations = dtype_option("--dtype", options.dtype);
    precision.weights = precision.activations;
    precision.outputs = precision.activations;
    precision.compute = std::string(default_compute_path(precision.activations));
  }
  shape.input = precision.activations;
  shape.weights =
      options.weights.empty() ? precision.weights : dtype_option("--weights", options.weights);
  shape.output = options.output.empty() ? precision.outputs : dtype_option("--out", options.output);
  shape.compute_path = options.compute.empty() ? precision.compute : options.compute;
  shape.per_batch_weights = options.per_batch_weights;
  MatmulPlan plan;
  plan.devices = options.devices;
  plan.network = options.network;
  plan.in_network_reduction = options.sharp;
  if (!options.shard.empty()) {
    const auto shard = parse_matmul_sharding(options.shard);
    if (!shard) {
      throw InputError(fmt::format("--shard {}: expected d, batch or f", options.shard));
    }
    plan.shard = *shard;
  }
  if (plan.devices > 1 && plan.network.empty()) {
    throw InputError("--devices > 1 needs --network TIER (e.g. ici, nvlink, ib)");
  }
  Roofs roofs = load_roofs(options.hardware, options.roofs);
  const TileChoices tiles = tile_options(options.tiles, roofs);
  const MatmulResult result = analyze_matmul(shape, std::move(roofs), plan, tiles);
  const RooflineChart chart = roofline_of_matmul(result);
  if (plot(
          options.plot, out, [&] { return render_roofline_svg(chart); },
          [&] { return render_roofline_text(chart); })) {
    return kExitOk;
  }
  return emit(
      options.roofs.format, out, [&] { return matmul_to_json(result); },
      [&](std::ostream& stream) { write_matmul_csv(stream, result); },
      [&](std::ostream& stream) {
        write_matmul_text(stream, result);
        if (options.explain) {
          stream << '\n';
          for (const std::string& line : explain_op(result.op, result.roofs, tiles)) {
            stream << line << '\n';
          }
        }
      });
}

struct CollectiveOptions {
  std::string hardware;
  std::string op;
  std::string bytes;
  std::int64_t devices = 2;
  std::string network;
  std::int64_t axes = 1;
  bool no_wraparound = false;
  bool sharp = false;
  std::string format = "table";
  std::vector<std::string> bandwidths;
};

// N devices over K equal axes: N must be a K-th power.
std::vector<std::int64_t> split_axes(std::int64_t devices, std::int64_t axes) {
  const auto side = static_cast<std::int64_t>(
      std::llround(std::pow(static_cast<double>(devices), 1.0 / static_cast<double>(axes))));
  std::int64_t product = 1;
  for (std::int64_t axis = 0; axis < axes; ++axis) {
    product *= side;
  }
  if (product != devices) {
    throw InputError(fmt::format("--devices {} is not the size of {} equal axes", devices, axes));
  }
  return std::vector<std::int64_t>(static_cast<std::size_t>(axes), side);
}

int collective_command(const CollectiveOptions& options, std::ostream& out) {
  RoofOptions roof_options;
  roof_options.bandwidths = options.bandwidths;
  const auto kind = parse_collective(options.op);
  if (!kind) {
    throw InputError(fmt::format(
        "--op {}: expected all-gather, reduce-scatter, all-reduce, all-to-all or send-recv",
        options.op));
  }
  const auto [name, volume] =
      parse_assignment("--bytes", "bytes=" + options.bytes, Dimension::bytes);
  Collective collective;
  collective.kind = *kind;
  collective.bytes = Bytes(volume);
  collective.axes = split_axes(options.devices, options.axes);
  collective.wraparound = !options.no_wraparound;
  collective.in_network_reduction = options.sharp;
  const CollectiveResult result =
      analyze_collective(collective, options.network, load_roofs(options.hardware, roof_options));
  return emit(
      options.format, out, [&] { return collective_to_json(result); },
      [&](std::ostream& stream) { write_collective_csv(stream, result); },
      [&](std::ostream& stream) { write_collective_text(stream, result); });
}

struct RoofsOptions {
  std::string hardware;
  RoofOptions roofs;
  std::string compute;
  std::string plot;
  std::string measured;
};

int roofs_command(const RoofsOptions& options, std::ostream& out) {
  const Roofs roofs = load_roofs(options.hardware, options.roofs);
  if (!options.compute.empty() && roofs.find_path(options.compute) == nullptr) {
    throw InputError(fmt::format("--compute {}: no such compute path (paths: {})", options.compute,
                                 roofs.path_names()));
  }
  const std::vector<KernelOnRoofs> kernels = measured_kernels(options.measured, {}, roofs, nullptr);
  RooflineChart chart = roofline_of_roofs(roofs, options.compute);
  add_measured(chart, kernels);
  if (plot(
          options.plot, out, [&] { return render_roofline_svg(chart); },
          [&] { return render_roofline_text(chart); })) {
    return kExitOk;
  }
  return emit(
      options.roofs.format, out,
      [&] {
        nlohmann::ordered_json json = roofs_to_json(roofs);
        if (!options.measured.empty()) {
          json["measured"] = measured_to_json(kernels);
        }
        return json;
      },
      [&](std::ostream& stream) { write_roofs_csv(stream, roofs); },
      [&](std::ostream& stream) {
        write_roofs_text(stream, roofs);
        if (!kernels.empty()) {
          stream << '\n';
          write_measured_text(stream, kernels, roofs);
        }
      });
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"rsim: a roofline simulator for LLM workloads and parallelism plans", "rsim"};
  app.require_subcommand(1);
  app.footer(
      "HARDWARE, MODEL and the scenario's presets are names (thor_t5000) or paths to YAML files.\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input or usage.");

  RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "Cost a scenario op by op against its roofs");
  add_scenario_options(*run, run_options.scenario);
  run->add_option("--variant", run_options.scenario.variant, "Run one of the scenario's variants");
  run->add_option("--plan", run_options.scenario.plan,
                  "Use a plan preset on the scenario's mesh (e.g. megatron_tp, fsdp, shard_d)");
  run->add_option("--explain", run_options.explain,
                  "Print one op's formulas with the numbers put in (e.g. prefix/layer/qkv_proj)");
  run->add_option("--top", run_options.top, "Rows in the top-ops table (0 = all)");
  run->add_option("--plot", run_options.plot,
                  "Write the roofline chart as SVG to FILE (- draws a text chart on stdout "
                  "instead of the report)");
  run->add_option("--html", run_options.html,
                  "Write a self-contained HTML report: scenario, roofs, chart, sortable tables");
  run->add_option("--measured", run_options.measured,
                  "Place Nsight Compute kernels on the roofs: an ncu --csv export (long layout) "
                  "with gpu__time_duration.sum, dram__bytes_read.sum, dram__bytes_write.sum");
  run->add_option("--match", run_options.matches,
                  "Give kernels whose name contains PATTERN the FLOPs of rsim op OP: "
                  "PATTERN=OP, e.g. gemm_0=prefix/layer/gate_up_proj (repeatable)");

  ScenarioOptions whatif_options;
  CLI::App* whatif = app.add_subcommand(
      "whatif", "Put a scenario's variants (precision, mode, batch, roofs) beside its baseline");
  add_scenario_options(*whatif, whatif_options);
  whatif->add_option("--variant", whatif_options.variant,
                     "Compare one variant with the baseline (default: all)");
  whatif->add_option("--plan", whatif_options.plan, "Use a plan preset on the scenario's mesh");
  add_runs_chart_options(*whatif, whatif_options);

  ScenarioOptions compare_options;
  std::vector<std::string> compare_plans;
  CLI::App* compare = app.add_subcommand(
      "compare", "Put plan presets side by side on a scenario's mesh (per-device times)");
  add_scenario_options(*compare, compare_options);
  compare
      ->add_option("--plan", compare_plans,
                   "A plan preset to compare against the scenario's own plan (repeatable): "
                   "data_parallel, megatron_tp, megatron_tp_dp, fsdp, shard_d, shard_batch")
      ->required();
  add_runs_chart_options(*compare, compare_options);

  SweepOptionsCli sweep_options;
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Evaluate a scenario over a grid of parameters (in parallel) and find crossovers");
  add_scenario_options(*sweep, sweep_options.scenario);
  sweep->add_option("--variant", sweep_options.scenario.variant, "Start from one of the variants");
  sweep->add_option("--plan", sweep_options.scenario.plan, "Use a plan preset on the mesh");
  sweep->add_option("--over", sweep_options.over,
                    "A swept parameter KEY=VALUES (repeatable; the grid is their product). KEY: a "
                    "scenario key (workload.batch, precision, plan, mode, hardware, …) or variant; "
                    "VALUES: a,b,c or LO..HI, LO..HI:STEP, LO..HI:log2. Default: the scenario's "
                    "sweep: block");
  sweep->add_option("--threads", sweep_options.threads, "Worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  sweep->add_flag("--no-crossovers", sweep_options.no_crossovers,
                  "Skip the crossover search between grid values");
  sweep->add_option("--plot", sweep_options.plot,
                    "Write the time-vs-parameter chart (SVG): a lower…upper band per series along "
                    "the first numeric axis, crossovers marked");
  sweep->add_option("--html", sweep_options.html,
                    "Write a self-contained HTML report: the chart and the grid, sortable");

  SearchOptionsCli search_options;
  CLI::App* search = app.add_subcommand(
      "search",
      "Every inference (or, for phase: train, training) plan for N devices, costed and ranked "
      "(rejections by reason)");
  add_scenario_options(*search, search_options.scenario);
  search->add_option("--variant", search_options.scenario.variant,
                     "Start from one of the variants");
  search->add_option("--devices", search_options.devices, "Devices to plan for")
      ->required()
      ->check(CLI::PositiveNumber);
  search->add_option("--objective", search_options.objective,
                     "latency (lowest lower bound), throughput (sequences per device-second) or "
                     "cost (device-seconds per sequence)");
  search->add_option("--top", search_options.top,
                     "Plans to print (0 = all); a training search keeps only these in memory");
  search
      ->add_option("--threads", search_options.threads,
                   "Worker threads for a training search (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  search->add_flag(
      "--exhaustive", search_options.exhaustive,
      "Training: cost every plan, pruning none by memory first (to check the pruning)");

  ThresholdOptions threshold_options;
  CLI::App* threshold = app.add_subcommand(
      "threshold",
      "Find where ΣT_math reaches the memory or network roof as batch or seq_len grows");
  add_scenario_options(*threshold, threshold_options.scenario);
  threshold->add_option("--variant", threshold_options.scenario.variant, "Use one of the variants");
  threshold->add_option("--plan", threshold_options.scenario.plan,
                        "Use a plan preset on the scenario's mesh");
  threshold->add_option("--param", threshold_options.param,
                        "batch (default), seq_len, or d_model (every stage's width)");
  threshold->add_option("--roof", threshold_options.roof, "memory (default) or network")
      ->check(CLI::IsMember({"memory", "network"}));
  threshold->add_option("--scope", threshold_options.scope,
                        "A matmul group of a stage, e.g. prefix/mlp (default: the whole run)");
  threshold->add_option("--max", threshold_options.high, "Search up to this value (default 2^24)")
      ->check(CLI::PositiveNumber);

  RoofsOptions roofs_options;
  CLI::App* roofs = app.add_subcommand("roofs", "Print a hardware's peaks, bandwidths and ridges");
  roofs->add_option("HARDWARE", roofs_options.hardware, "Hardware preset or YAML file")->required();
  add_roof_options(*roofs, roofs_options.roofs);
  roofs->add_option("--compute", roofs_options.compute,
                    "The compute path in play: drawn bold with its ridges (e.g. fp8)");
  roofs->add_option("--plot", roofs_options.plot,
                    "Write the roofline chart as SVG to FILE (- draws a text chart instead)");
  roofs->add_option("--measured", roofs_options.measured,
                    "Place Nsight Compute kernels (ncu --csv export) on the roofs; their FLOPs "
                    "come from the sm__sass_thread_inst_executed_op_* metrics");

  MatmulOptions matmul_options;
  CLI::App* matmul = app.add_subcommand(
      "matmul", "Cost one X[B,D]·W[D,F] matmul, on one device or split over several");
  matmul->add_option("--hardware", matmul_options.hardware, "Hardware preset or YAML file")
      ->required();
  matmul->add_option("--b", matmul_options.batch, "Token batch B (rows of X)")
      ->required()
      ->check(CLI::PositiveNumber);
  matmul->add_option("--d", matmul_options.contract, "Contracting width D")
      ->required()
      ->check(CLI::PositiveNumber);
  matmul->add_option("--f", matmul_options.out, "Output width F")
      ->required()
      ->check(CLI::PositiveNumber);
  matmul->add_option("--precision", matmul_options.precision,
                     "A precision policy for all dtypes and the path (e.g. int8_weights)");
  matmul->add_option("--dtype", matmul_options.dtype,
                     "Dtype of X, W and the output (default bf16)");
  matmul->add_option("--weights", matmul_options.weights, "Weight dtype (default: --dtype)");
  matmul->add_option("--out", matmul_options.output, "Output dtype (default: --dtype)");
  matmul->add_option("--compute", matmul_options.compute,
                     "Compute path, e.g. bf16 or int8 (default: --dtype)");
  matmul->add_flag("--per-batch-weights", matmul_options.per_batch_weights,
                   "W has a batch axis: W[B,D,F] (per-sample weights)");
  matmul->add_option("--devices", matmul_options.devices, "Devices the matmul is split over")
      ->check(CLI::PositiveNumber);
  matmul->add_option("--shard", matmul_options.shard,
                     "Split D (partial sums, all-reduced), batch or f across the devices");
  matmul->add_option("--network", matmul_options.network,
                     "Network tier the devices talk over (ici, nvlink, ib, dcn)");
  matmul->add_flag("--sharp", matmul_options.sharp,
                   "All-reduce in the switch (NVLink SHARP) where the tier can");
  matmul->add_option("--tile", matmul_options.tiles,
                     "Fix the tile an on-chip tier holds: [TIER=]bm,bn,bk (default tier: smem or "
                     "vmem; repeatable); other tiers get the best tile that fits");
  matmul->add_flag("--explain", matmul_options.explain,
                   "Print the FLOP, byte and per-tier traffic formulas with the numbers in");
  add_roof_options(*matmul, matmul_options.roofs);
  matmul->add_option("--plot", matmul_options.plot,
                     "Write the matmul on the roofline as SVG to FILE (- draws a text chart "
                     "instead)");

  std::string import_config;
  std::string import_name;
  CLI::App* import_hf = app.add_subcommand(
      "import-hf",
      "Print a model YAML (models/NAME.yaml format) made from a Hugging Face config.json");
  import_hf->add_option("CONFIG", import_config, "A Hugging Face config.json")->required();
  import_hf->add_option("--name", import_name,
                        "Display name (default: _name_or_path, else the config's folder)");
  import_hf->footer(
      "Sizes come from the config's keys (GPT-2 names n_embd, n_layer, n_head, n_positions, "
      "n_inner too);\n"
      "the gated MLP, norm and position embedding from rsim's table of model_types (llama, "
      "mistral,\nmixtral, gemma, gpt2, gpt_neox). MoE and sliding-window configs are refused. A "
      "scenario's\n'model:' may also name a config.json directly.");

  CollectiveOptions collective_options;
  CLI::App* collective =
      app.add_subcommand("collective", "Time one collective on a hardware's network tier");
  collective->add_option("--hardware", collective_options.hardware, "Hardware preset or YAML file")
      ->required();
  collective
      ->add_option("--op", collective_options.op,
                   "all-gather, reduce-scatter, all-reduce, all-to-all or send-recv")
      ->required();
  collective
      ->add_option("--bytes", collective_options.bytes,
                   "V: the whole array (gathered, or unreduced), e.g. \"32 MiB\" or 3.4e7")
      ->required();
  collective->add_option("--devices", collective_options.devices, "Devices taking part")
      ->required()
      ->check(CLI::PositiveNumber);
  collective->add_option("--network", collective_options.network, "Network tier")->required();
  collective
      ->add_option("--axes", collective_options.axes,
                   "Mesh axes the devices span (a torus: N = size^axes); default 1")
      ->check(CLI::PositiveNumber);
  collective->add_flag("--no-wraparound", collective_options.no_wraparound,
                       "Torus axes without wraparound links (v5e axes under 16)");
  collective->add_flag("--sharp", collective_options.sharp,
                       "All-reduce in the switch (NVLink SHARP) where the tier can");
  collective->add_option("--format", collective_options.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  collective->add_option("--bandwidth", collective_options.bandwidths,
                         "Override a tier's bandwidth: TIER=RATE, e.g. ici=5e10");

  const std::string first = argc > 1 ? argv[1] : "";
  constexpr std::array<std::string_view, 10> kCommands{
      "run",       "whatif", "compare", "sweep",      "search",
      "threshold", "roofs",  "matmul",  "collective", "import-hf"};
  if (!first.empty() && first[0] != '-' &&
      std::find(kCommands.begin(), kCommands.end(), first) == kCommands.end()) {
    err << fmt::format("rsim: unknown command '{}' (commands: {}); see rsim --help\n", first,
                       fmt::join(kCommands, ", "));
    return kExitInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help, out, err);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help, out, err);
  } catch (const CLI::ParseError& error) {
    app.exit(error, out, err);
    return kExitInput;
  }
  try {
    if (*run) {
      return run_command(run_options, out);
    }
    if (*roofs) {
      return roofs_command(roofs_options, out);
    }
    if (*whatif) {
      return whatif_command(whatif_options, out);
    }
    if (*threshold) {
      return threshold_command(threshold_options, out);
    }
    if (*compare) {
      return compare_command(compare_options, compare_plans, out);
    }
    if (*sweep) {
      return sweep_command(sweep_options, out, err);
    }
    if (*search) {
      return search_command(search_options, out, err);
    }
    if (*collective) {
      return collective_command(collective_options, out);
    }
    if (*import_hf) {
      out << model_yaml(import_hf_config(import_config, import_name));
      return kExitOk;
    }
    return matmul_command(matmul_options, out);
  } catch (const InputError& error) {
    err << "rsim: " << error.what() << '\n';
    return kExitInput;
  } catch (const std::exception& error) {
    err << "rsim: " << error.what() << '\n';
    return kExitInternal;
  }
}

}  // namespace rsim
