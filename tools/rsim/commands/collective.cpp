// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/error.hpp"
#include "sim/base/units.hpp"
#include "sim/cost/collectives.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/json.hpp"
#include "sim/report/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace rsim::cli {
namespace {

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
  // A torus has at most 3 dimensions and a mesh a few axes (--axes 1000000000 once allocated
  // a billion of them: issue 23 #4).
  constexpr std::int64_t kMaxAxes = 8;
  if (axes > kMaxAxes) {
    throw InputError(fmt::format("--axes {}: expected 1 to {}", axes, kMaxAxes));
  }
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

}  // namespace

Command add_collective_command(CLI::App& app) {
  const auto options = std::make_shared<CollectiveOptions>();
  CLI::App* collective =
      app.add_subcommand("collective", "Time one collective on a hardware's network tier");
  collective->add_option("--hardware", options->hardware, "Hardware preset or YAML file")
      ->required();
  collective
      ->add_option("--op", options->op,
                   "all-gather, reduce-scatter, all-reduce, all-to-all or send-recv")
      ->required();
  collective
      ->add_option("--bytes", options->bytes,
                   "V: the whole array (gathered, or unreduced), e.g. \"32 MiB\" or 3.4e7")
      ->required();
  collective->add_option("--devices", options->devices, "Devices taking part")
      ->required()
      ->check(positive_number());
  collective->add_option("--network", options->network, "Network tier")->required();
  collective
      ->add_option("--axes", options->axes,
                   "Mesh axes the devices span (a torus: N = size^axes); default 1")
      ->check(positive_number());
  collective->add_flag("--no-wraparound", options->no_wraparound,
                       "Torus axes without wraparound links (v5e axes under 16)");
  collective->add_flag("--sharp", options->sharp,
                       "All-reduce in the switch (NVLink SHARP) where the tier can");
  collective->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  collective->add_option("--bandwidth", options->bandwidths,
                         "Override a tier's bandwidth: TIER=RATE, e.g. ici=5e10");
  return {collective, [options](std::ostream& out, std::ostream& /*err*/) {
            return collective_command(*options, out);
          }};
}

}  // namespace rsim::cli
