// SPDX-License-Identifier: MIT
// A Hugging Face config.json: `rsim import-hf FILE`.
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = rsim::fuzz::write_input("config.json", data, size);
  rsim::fuzz::run_and_check({"import-hf", file});
  return 0;
}
