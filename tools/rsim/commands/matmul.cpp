// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/dtype.hpp"
#include "sim/base/error.hpp"
#include "sim/cost/cost_table.hpp"
#include "sim/cost/explain.hpp"
#include "sim/cost/op_cost.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/text_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/json.hpp"
#include "sim/report/text.hpp"
#include "sim/spec/precision.hpp"
#include "sim/spec/tile.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace rsim::cli {
namespace {

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

}  // namespace

Command add_matmul_command(CLI::App& app) {
  const auto options = std::make_shared<MatmulOptions>();
  CLI::App* matmul = app.add_subcommand(
      "matmul", "Cost one X[B,D]·W[D,F] matmul, on one device or split over several");
  matmul->add_option("--hardware", options->hardware, "Hardware preset or YAML file")->required();
  matmul->add_option("--b", options->batch, "Token batch B (rows of X)")
      ->required()
      ->check(positive_number());
  matmul->add_option("--d", options->contract, "Contracting width D")
      ->required()
      ->check(positive_number());
  matmul->add_option("--f", options->out, "Output width F")->required()->check(positive_number());
  matmul->add_option("--precision", options->precision,
                     "A precision policy for all dtypes and the path (e.g. int8_weights)");
  matmul->add_option("--dtype", options->dtype, "Dtype of X, W and the output (default bf16)");
  matmul->add_option("--weights", options->weights, "Weight dtype (default: --dtype)");
  matmul->add_option("--out", options->output, "Output dtype (default: --dtype)");
  matmul->add_option("--compute", options->compute,
                     "Compute path, e.g. bf16 or int8 (default: --dtype)");
  matmul->add_flag("--per-batch-weights", options->per_batch_weights,
                   "W has a batch axis: W[B,D,F] (per-sample weights)");
  matmul->add_option("--devices", options->devices, "Devices the matmul is split over")
      ->check(positive_number());
  matmul->add_option("--shard", options->shard,
                     "Split D (partial sums, all-reduced), batch or f across the devices");
  matmul->add_option("--network", options->network,
                     "Network tier the devices talk over (ici, nvlink, ib, dcn)");
  matmul->add_flag("--sharp", options->sharp,
                   "All-reduce in the switch (NVLink SHARP) where the tier can");
  matmul->add_option("--tile", options->tiles,
                     "Fix the tile an on-chip tier holds: [TIER=]bm,bn,bk (default tier: smem or "
                     "vmem; repeatable); other tiers get the best tile that fits");
  matmul->add_flag("--explain", options->explain,
                   "Print the FLOP, byte and per-tier traffic formulas with the numbers in");
  add_roof_options(*matmul, options->roofs);
  matmul->add_option("--plot", options->plot,
                     "Write the matmul on the roofline as SVG to FILE (- draws a text chart "
                     "instead)");
  return {matmul, [options](std::ostream& out, std::ostream& /*err*/) {
            return matmul_command(*options, out);
          }};
}

}  // namespace rsim::cli
