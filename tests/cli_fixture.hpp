// SPDX-License-Identifier: MIT
#pragma once

#include "cli.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace rsim::test {

/// What one `rsim …` invocation returned and printed.
struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

/// Runs the CLI in-process with `args` (without the program name), capturing both streams.
inline Outcome rsim_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "rsim");
  std::vector<const char*> argv;
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

/// The `flops` (× count) of the op named `name` in a run's JSON, if there is one.
inline std::optional<double> op_flops(const nlohmann::json& run, const std::string& name) {
  for (const auto& op : run["ops"]) {
    if (op["name"] == name) {
      return op["flops"].get<double>();
    }
  }
  return std::nullopt;
}

}  // namespace rsim::test
