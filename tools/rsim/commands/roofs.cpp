// SPDX-License-Identifier: MIT
#include "commands/commands.hpp"
#include "commands/measured_kernels.hpp"
#include "options.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/text_chart.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/json.hpp"
#include "sim/report/measured_report.hpp"
#include "sim/report/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace rsim::cli {
namespace {

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

Command add_roofs_command(CLI::App& app) {
  const auto options = std::make_shared<RoofsOptions>();
  CLI::App* roofs = app.add_subcommand("roofs", "Print a hardware's peaks, bandwidths and ridges");
  roofs->add_option("HARDWARE", options->hardware, "Hardware preset or YAML file")->required();
  add_roof_options(*roofs, options->roofs);
  roofs->add_option("--compute", options->compute,
                    "The compute path in play: drawn bold with its ridges (e.g. fp8)");
  roofs->add_option("--plot", options->plot,
                    "Write the roofline chart as SVG to FILE (- draws a text chart instead)");
  roofs->add_option("--measured", options->measured,
                    "Place Nsight Compute kernels (ncu --csv export) on the roofs; their FLOPs "
                    "come from the sm__sass_thread_inst_executed_op_* metrics");
  return {roofs, [options](std::ostream& out, std::ostream& /*err*/) {
            return roofs_command(*options, out);
          }};
}

}  // namespace rsim::cli
