// SPDX-License-Identifier: MIT
#pragma once
// A scenario's whole run: its step (analysis.hpp), and for a decode request (`decode_steps`)
// the prompt's prefill and every decode step, each one step of the pipeline.

#include "sim/analysis/analysis.hpp"
#include "sim/analysis/decode.hpp"

namespace rsim {

/// Costs the request of a decode scenario with `decode_steps` > 0 against `roofs` (the scenario's
/// own, overrides applied). Calls analyze_step() once for the prefill and two or three times for
/// steps (or once per step when the step time is not affine in the context).
DecodeRequest analyze_request(const Scenario& scenario, const Roofs& roofs);

/// Runs a scenario: analyze_step(), and for a decode request (`decode_steps` > 0) its request,
/// whose last step's KV cache is what must fit. The roofs must come from the scenario's hardware
/// (resolve_roofs); a compute path they lack is an InputError. `cache` (optional, one per thread)
/// keeps tile-search candidates across runs (sweeps, searches).
RunResult analyze(Scenario scenario, Roofs roofs, TileCache* cache = nullptr);

}  // namespace rsim
