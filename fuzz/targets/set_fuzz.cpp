// SPDX-License-Identifier: MIT
// `--set KEY=VALUE` and `--over KEY=VALUES` on a shipped scenario, one per input line: a line
// starting "over " makes the command a sweep, the others are --set (at most 4 lines).
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"run", "scenarios/llama3_8b_h100.yaml"};
  for (const std::string& line : rsim::fuzz::split_lines(data, size, 4)) {
    if (line.rfind("over ", 0) == 0) {
      args[0] = "sweep";
      args.push_back("--over");
      args.push_back(line.substr(5));
    } else {
      args.push_back("--set");
      args.push_back(line);
    }
  }
  args.push_back("--format");
  args.push_back("json");
  rsim::fuzz::run_and_check(args);
  return 0;
}
