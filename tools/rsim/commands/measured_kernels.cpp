// SPDX-License-Identifier: MIT
#include "commands/measured_kernels.hpp"

#include "sim/base/error.hpp"

namespace rsim::cli {

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

}  // namespace rsim::cli
