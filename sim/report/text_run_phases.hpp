// SPDX-License-Identifier: MIT
#pragma once

// The run report's sections for a workload phase: the training step and the decode step (with
// its request), each written only for a run of that phase.

#include "sim/analysis/request.hpp"

#include <ostream>

namespace rsim {

/// The training summary: the passes, throughput and MFU, the pipeline bubble, the thresholds.
void write_training(std::ostream& out, const RunResult& result);
/// The decode summary: the step, its critical batch, and the request when there is one.
void write_decode(std::ostream& out, const RunResult& result);

}  // namespace rsim
