// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"
#include "sim/analysis/threshold_search.hpp"

#include <ostream>
#include <string>

namespace rsim {

struct TextOptions {
  std::size_t top_ops = 15;  ///< rows in the "top ops by time" table (0 = all)
};

/// The human report of a run: header, stage table, top ops, references.
void write_run_text(std::ostream& out, const RunResult& result, const TextOptions& options = {});

/// Where a scenario came from, for titles: its file, and the command line's changes to it when
/// there are any (its `name:` then no longer says all of what ran).
std::string scenario_source(const Scenario& scenario);
/// The baseline and its variants side by side, with the critical batch of each matmul group.
void write_whatif_text(std::ostream& out, const std::vector<RunResult>& runs);
/// Peaks, bandwidths and the ridge of every (path, tier) pair.
void write_roofs_text(std::ostream& out, const Roofs& roofs);
/// One matmul: FLOPs, bytes, intensity, times, bound, critical batch.
void write_matmul_text(std::ostream& out, const MatmulResult& result);

/// Where T_math reaches the roof as a scenario key grows.
void write_threshold_text(std::ostream& out, const ThresholdQuery& query,
                          const ThresholdResult& result);
/// One collective: the algorithm, hops, bandwidth and latency terms.
void write_collective_text(std::ostream& out, const CollectiveResult& result);

/// "1894" / "never" / "always": a critical token batch for people.
std::string describe_critical(const std::optional<CriticalBatch>& critical);

}  // namespace rsim
