// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/measured.hpp"
#include "sim/analysis/request.hpp"
#include "sim/explore/sweep.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace rsim {

/// One self-contained HTML file for a run: the scenario, the hardware roofs, the roofline chart
/// inline (SVG), the stage and op tables sortable by any column (inline script; no network
/// fetches, no external files), measured kernels when given, and the text report.
/// Opening it with "#sort=ops-table:N" (":asc" for ascending) sorts column N on load.
void write_run_html(std::ostream& out, const RunResult& run,
                    const std::vector<KernelOnRoofs>& kernels = {});

/// A baseline and its variants or plans (`rsim whatif`, `rsim compare`): the comparison table,
/// the stacked-bar chart of ΣT_math / ΣT_mem / ΣT_net, and the baseline's roofline.
void write_runs_html(std::ostream& out, const std::vector<RunResult>& runs,
                     const std::string& title);

/// A sweep (`rsim sweep --html`): the time-vs-parameter chart, the grid sortable by any column
/// and the crossovers.
void write_sweep_html(std::ostream& out, const SweepResult& result);

}  // namespace rsim
