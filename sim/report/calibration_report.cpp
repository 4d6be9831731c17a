// SPDX-License-Identifier: MIT
#include "sim/report/calibration_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

// A relative error as a percentage, without a sign on what rounds to zero.
std::string error_text(double measured, double value) {
  const double error = (value - measured) / measured;
  return percent(std::abs(error) < 5e-4 ? 0.0 : error);
}

std::string value_text(const CalibratedParameter& parameter, double value) {
  return parameter.fraction ? fmt::format("{:.4g}", value) : seconds(Seconds(value));
}

// A YAML double-quoted string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char character : text) {
    if (character == '"' || character == '\\') {
      out += '\\';
    }
    out += character;
  }
  return out + "\"";
}

}  // namespace

void write_calibration_text(std::ostream& out, const CalibrationResult& result) {
  out << fmt::format(
      "Calibration of {} to {} measurements ({}): RMS error of the expected time {} with the "
      "hardware's efficiencies, {} fitted ({} passes).\n\n",
      result.hardware, result.rows.size(), result.file, percent(result.rms_before),
      percent(result.rms_after), result.iterations);
  TextTable parameters(
      {{"parameter", TextTable::Align::left}, {"before"}, {"fitted"}, {"measurements"}});
  for (const CalibratedParameter& parameter : result.parameters) {
    parameters.add_row({parameter.key, value_text(parameter, parameter.before),
                        value_text(parameter, parameter.after),
                        fmt::format("{}", parameter.measurements)});
  }
  parameters.print(out, "  ");
  out << "\n";
  TextTable rows({{"measurement", TextTable::Align::left},
                  {"measured"},
                  {"before"},
                  {"error"},
                  {"fitted"},
                  {"error"}});
  for (const CalibrationRow& row : result.rows) {
    rows.add_row({row.label, seconds(Seconds(row.measured)), seconds(Seconds(row.before)),
                  error_text(row.measured, row.before), seconds(Seconds(row.after)),
                  error_text(row.measured, row.after)});
  }
  rows.print(out, "  ");
}

Json calibration_to_json(const CalibrationResult& result) {
  Json parameters = Json::array();
  for (const CalibratedParameter& parameter : result.parameters) {
    parameters.push_back({{"key", parameter.key},
                          {"kind", parameter.fraction ? "fraction" : "seconds"},
                          {"before", parameter.before},
                          {"after", parameter.after},
                          {"measurements", parameter.measurements}});
  }
  Json rows = Json::array();
  for (const CalibrationRow& row : result.rows) {
    rows.push_back({{"measurement", row.label},
                    {"measured_s", row.measured},
                    {"before_s", row.before},
                    {"after_s", row.after}});
  }
  return {{"file", result.file},
          {"hardware", result.hardware},
          {"rms_error_before", result.rms_before},
          {"rms_error_after", result.rms_after},
          {"iterations", result.iterations},
          {"parameters", parameters},
          {"measurements", rows}};
}

void write_calibration_yaml(std::ostream& out, const CalibrationResult& result) {
  const std::string derived = quoted(fmt::format(
      "rsim calibrate: least squares over {} measurements in {}; RMS error "
      "{} with the preset's efficiencies, {} fitted",
      result.rows.size(), result.file, percent(result.rms_before), percent(result.rms_after)));
  out << fmt::format("# Efficiencies of {} fitted by rsim calibrate (docs/design/expected.md).\n",
                     result.hardware)
      << "# Apply with --calibration FILE, or calibration: FILE in a scenario.\n"
      << "hardware: " << quoted(result.hardware) << "\nefficiency:\n";
  // Sections in the hardware's order; a network tier's fraction and latency share one entry.
  std::map<std::string, std::vector<std::string>> sections;
  std::map<std::string, std::vector<std::string>> network;
  for (const CalibratedParameter& parameter : result.parameters) {
    const std::string& key = parameter.key;
    if (key == "kernel_overhead") {
      out << fmt::format("  kernel_overhead: {{time: {:.6g} us, derived: {}}}\n",
                         parameter.after * 1e6, derived);
      continue;
    }
    const std::size_t dot = key.find('.');
    const std::string section = key.substr(0, dot);
    const std::string rest = key.substr(dot + 1);
    if (section == "network") {
      const std::size_t latency = rest.find(".latency");
      if (latency != std::string::npos) {
        network[rest.substr(0, latency)].push_back(
            fmt::format("latency: {:.6g} us", parameter.after * 1e6));
      } else {
        network[rest].push_back(fmt::format("fraction: {:.6g}", parameter.after));
      }
      continue;
    }
    sections[section].push_back(
        fmt::format("    {}: {{fraction: {:.6g}, derived: {}}}\n", rest, parameter.after, derived));
  }
  for (const char* section : {"compute", "attention", "memory"}) {
    if (sections.contains(section)) {
      out << "  " << section << ":\n";
      for (const std::string& line : sections.at(section)) {
        out << line;
      }
    }
  }
  if (!network.empty()) {
    out << "  network:\n";
    for (const auto& [tier, entries] : network) {
      out << fmt::format("    {}: {{{}, derived: {}}}\n", tier, fmt::join(entries, ", "), derived);
    }
  }
}

}  // namespace rsim
