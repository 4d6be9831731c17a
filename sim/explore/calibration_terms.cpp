// SPDX-License-Identifier: MIT
#include "sim/explore/calibration_terms.hpp"

#include "sim/base/error.hpp"
#include "sim/cost/expected.hpp"
#include "sim/cost/gemm_quantization.hpp"

#include <fmt/format.h>

namespace rsim::calibration {

void fail(const std::string& file, int line, const std::string& message) {
  throw InputError(fmt::format("{}:{}: error: {}", file, line, message));
}

DeviceTerm device_term(const Op& op, double count, double t_math,
                       const std::vector<double>& tier_times, const Roofs& roofs,
                       Parameters& parameters) {
  DeviceTerm term;
  term.count = count;
  term.launches = !(op.kind == OpKind::elementwise && op.fused);
  const ComputePath* path = roofs.find_path(op.compute_path);
  if (t_math > 0.0 && path != nullptr) {
    const std::string key =
        op.kind == OpKind::attention
            ? (op.pass == Pass::backward ? "attention.backward" : "attention.forward")
            : "compute." + path->name;
    // The fitted fraction is the path's at full tiles (an attention pass's at unbounded length):
    // a matmul's T_math is first divided by the share its tiles fill (gemm_quantization.hpp), an
    // attention pass's by its length and head-dim shares (expected.hpp).
    term.roofs.emplace_back(parameters.index(key, true, compute_efficiency(op, path, roofs)),
                            t_math / op_shape_share(op, roofs));
    term.serial = serial_math_memory(op);
  }
  for (std::size_t tier = 0; tier < tier_times.size() && tier < roofs.memory.size(); ++tier) {
    if (tier_times[tier] > 0.0) {
      // An unfused attention's GEMM streams the main memory at its own fraction where the
      // hardware gives one (memory_efficiency), a parameter of its own.
      const bool unfused = tier == 0 && serial_math_memory(op) &&
                           roofs.attention_efficiency.unfused_memory.has_value();
      const std::string key =
          unfused ? std::string("attention.unfused_memory") : "memory." + roofs.memory[tier].name;
      term.roofs.emplace_back(parameters.index(key, true, memory_efficiency(op, tier, roofs)),
                              tier_times[tier]);
    }
  }
  return term;
}

}  // namespace rsim::calibration
