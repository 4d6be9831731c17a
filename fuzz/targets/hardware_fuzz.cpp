// SPDX-License-Identifier: MIT
// A hardware YAML: its roofs as JSON and as the text chart (`rsim roofs FILE --plot -`), where
// an infinite ridge once looped 2^31 times (issue 23 #1).
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = rsim::fuzz::write_input("hardware/fuzz.yaml", data, size);
  rsim::fuzz::run_and_check({"roofs", file, "--format", "json"});
  rsim::fuzz::run_and_check({"roofs", file, "--plot", "-"});
  return 0;
}
