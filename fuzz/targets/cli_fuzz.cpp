// SPDX-License-Identifier: MIT
// The argument vector: one argument per input line (at most 16), after "rsim". Arguments that
// name absolute paths or climb out of the workspace are dropped, so that a fuzzed `--plot` or
// `--html` writes only inside the scratch folder.
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  for (const std::string& line : rsim::fuzz::split_lines(data, size, 16)) {
    if (line.find('/') == 0 || line.find("..") != std::string::npos ||
        line.find('\0') != std::string::npos) {
      continue;
    }
    args.push_back(line);
  }
  rsim::fuzz::run_and_check(args);
  return 0;
}
