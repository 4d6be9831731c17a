// SPDX-License-Identifier: MIT
// A quantity string ("989.4 TFLOP/s", "3.35 TB/s", "0.6 us"): parsed for every dimension (a value
// parsed is finite and prints back), and given to the CLI as a roof override
// (`rsim roofs h100_sxm --peak bf16=TEXT`, `--bandwidth hbm=TEXT`).
#include "harness.hpp"
#include "sim/base/units.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  rsim::fuzz::prepare_workspace();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) {
    return 0;  // a quantity is a short string; longer inputs only slow the search
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const rsim::Dimension dimension :
       {rsim::Dimension::flop_rate, rsim::Dimension::byte_rate, rsim::Dimension::bytes,
        rsim::Dimension::seconds, rsim::Dimension::flops, rsim::Dimension::frequency}) {
    if (const auto value = rsim::parse_quantity(text, dimension)) {
      if (!std::isfinite(*value)) {
        std::fprintf(stderr, "rsim fuzz finding: parse_quantity('%s') = %g\n", text.c_str(),
                     *value);
        std::abort();
      }
      (void)rsim::format_quantity(*value, dimension);
    }
  }
  rsim::fuzz::run_and_check({"roofs", "h100_sxm", "--peak", "bf16=" + text, "--format", "json"});
  rsim::fuzz::run_and_check(
      {"roofs", "h100_sxm", "--bandwidth", "hbm=" + text, "--format", "json"});
  return 0;
}
