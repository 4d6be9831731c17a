// SPDX-License-Identifier: MIT
// An Nsight Compute CSV export placed on H100's roofs: `rsim roofs h100_sxm --measured FILE
// --plot -` (a 1e308 Tbyte value once sent the chart's axis into a 2^31-step loop).
#include "harness.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = rsim::fuzz::write_input("kernels.csv", data, size);
  rsim::fuzz::run_and_check({"roofs", "h100_sxm", "--measured", file, "--format", "json"});
  rsim::fuzz::run_and_check({"roofs", "h100_sxm", "--measured", file, "--plot", "-"});
  return 0;
}
