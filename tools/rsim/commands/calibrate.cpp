// SPDX-License-Identifier: MIT
#include "sim/explore/calibrate.hpp"

#include "commands/commands.hpp"
#include "output.hpp"
#include "sim/base/error.hpp"
#include "sim/report/calibration_report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace rsim::cli {
namespace {

struct CalibrateOptions {
  std::string csv;
  std::string output;
  std::string format = "table";
  std::string hardware;
  std::string scenario;
  std::vector<std::string> matches;
};

int calibrate_command(const CalibrateOptions& options, std::ostream& out) {
  NcuCalibration ncu;
  ncu.hardware = options.hardware;
  ncu.scenario = options.scenario;
  for (const std::string& match : options.matches) {
    ncu.matches.push_back(parse_kernel_match(match));
  }
  const CalibrationResult result = calibrate(options.csv, ncu);
  if (!options.output.empty()) {
    std::ofstream file(options.output);
    write_calibration_yaml(file, result);
    file.close();
    if (!file) {
      throw InputError(fmt::format("--output {}: cannot write the file", options.output));
    }
  }
  return emit(
      options.format, out, [&] { return calibration_to_json(result); },
      [&](std::ostream& stream) { write_calibration_text(stream, result); },
      [&](std::ostream& stream) {
        write_calibration_text(stream, result);
        if (options.output.empty()) {
          stream << "\nThe overlay (--output FILE writes it; --calibration FILE applies it):\n\n";
          write_calibration_yaml(stream, result);
        } else {
          stream << fmt::format("\nWrote {}: apply it with --calibration {}.\n", options.output,
                                options.output);
        }
      });
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  const auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate",
      "Fit a hardware's efficiencies (the expected time's fractions of its roofs, kernel "
      "overhead, collective latency) to measured times by least squares");
  command
      ->add_option("CSV", options->csv,
                   "Measurements: hardware,b,d,f,dtype,measured_s (GEMMs), "
                   "scenario,set,measured_s (prefills and decode steps), or an Nsight Compute "
                   "export (ncu --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,"
                   "dram__bytes_write.sum and the sm__sass_thread_inst_executed_op_* FLOP "
                   "counters: one kernel launch per measurement)")
      ->required();
  command->add_option("--hardware", options->hardware,
                      "An Nsight Compute export: the hardware it ran on (a preset or YAML file)");
  command->add_option("--scenario", options->scenario,
                      "An Nsight Compute export: a scenario whose ops --match names (its "
                      "hardware is the export's)");
  command->add_option("--match", options->matches,
                      "PATTERN=OP: a kernel whose name contains PATTERN takes the FLOPs and "
                      "compute path of the scenario's op OP (tensor-core work is not in ncu's "
                      "SASS counters); repeatable");
  command->add_option("--output", options->output,
                      "Write the fitted efficiencies as a YAML overlay for --calibration");
  command->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  return {command,
          [options](std::ostream& out, std::ostream&) { return calibrate_command(*options, out); }};
}

}  // namespace rsim::cli
