// SPDX-License-Identifier: MIT
// A scenario YAML, run end to end: `rsim run FILE --format json` (presets resolve in the
// workspace's copies).
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = rsim::fuzz::write_input("scenarios/fuzz.yaml", data, size);
  rsim::fuzz::run_and_check({"run", file, "--format", "json"});
  return 0;
}
