// SPDX-License-Identifier: MIT
// A model YAML, costed in a scenario that uses it: `rsim run scenarios/llama3_8b_h100.yaml
// --set model=FILE --format json` (a decoder on H100).
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = rsim::fuzz::write_input("models/fuzz.yaml", data, size);
  rsim::fuzz::run_and_check(
      {"run", "scenarios/llama3_8b_h100.yaml", "--set", "model=fuzz", "--format", "json"});
  return 0;
}
