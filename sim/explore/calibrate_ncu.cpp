// SPDX-License-Identifier: MIT
#include "sim/explore/calibrate_ncu.hpp"

#include "sim/analysis/analysis.hpp"
#include "sim/analysis/measured.hpp"
#include "sim/analysis/request.hpp"
#include "sim/base/error.hpp"
#include "sim/spec/presets.hpp"
#include "sim/spec/scenario.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>

namespace rsim::calibration {

bool is_ncu_export(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Kernel Name") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::vector<Measurement> read_ncu_measurements(const std::filesystem::path& csv,
                                               const NcuCalibration& ncu, Parameters& parameters,
                                               std::string& hardware, double& kernel_overhead) {
  const std::string file = csv.string();
  std::optional<RunResult> run;
  Roofs roofs;
  if (!ncu.scenario.empty()) {
    Scenario scenario = load_scenario(ncu.scenario);
    Roofs own = scenario_roofs(scenario, "", {});
    run = analyze(std::move(scenario), std::move(own));
    roofs = run->roofs;
  } else if (!ncu.hardware.empty()) {
    roofs = resolve_roofs(load_hardware(find_preset(ncu.hardware, "hardware", {})), "", {});
  } else {
    throw InputError(fmt::format(
        "{}: error: an Nsight Compute export does not name the hardware it ran on: give "
        "--hardware NAME (or --scenario FILE, whose hardware it is)",
        file));
  }
  if (!ncu.matches.empty() && !run) {
    throw InputError(
        "--match PATTERN=OP takes the FLOPs of a scenario's op: give the scenario with --scenario "
        "FILE");
  }
  RSIM_CHECK(!roofs.memory.empty() && roofs.memory.front().bandwidth,
             "a main memory with a bandwidth");
  const MemoryTier& dram = roofs.memory.front();  // outermost first
  hardware = roofs.hardware;
  kernel_overhead = roofs.kernel_overhead.si();
  std::vector<Measurement> measurements;
  for (const KernelOnRoofs& kernel :
       place_kernels(load_ncu_csv(csv), roofs, run ? &*run : nullptr, ncu.matches, file)) {
    Measurement measurement;
    measurement.measured = kernel.kernel.duration.si();
    measurement.label =
        fmt::format("{}:{} ({})", file, kernel.kernel.line,
                    kernel.kernel.name.size() > 40 ? kernel.kernel.name.substr(0, 39) + "…"
                                                   : kernel.kernel.name);
    const std::vector<double> tiers{kernel.kernel.dram_bytes.si() / dram.bandwidth->si()};
    if (kernel.op_row && run) {
      const Op& op = run->graph.op(run->table.order[*kernel.op_row]);
      const ComputePath* path = roofs.find_path(op.compute_path);
      measurement.devices.push_back(
          device_term(op, 1.0, path != nullptr ? kernel.flops.si() / path->peak.si() : 0.0, tiers,
                      roofs, parameters));
    } else {
      DeviceTerm term;
      term.count = 1.0;
      term.launches = true;
      const ComputePath* path = roofs.find_path(kernel.compute_path);
      if (kernel.flops.si() > 0.0 && path != nullptr) {
        term.roofs.emplace_back(parameters.index("compute." + path->name, true, path->efficiency),
                                kernel.flops.si() / path->peak.si());
      }
      if (tiers.front() > 0.0) {
        term.roofs.emplace_back(parameters.index("memory." + dram.name, true, dram.efficiency),
                                tiers.front());
      }
      measurement.devices.push_back(std::move(term));
    }
    measurements.push_back(std::move(measurement));
  }
  return measurements;
}

}  // namespace rsim::calibration
