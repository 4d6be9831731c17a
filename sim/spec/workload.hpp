// SPDX-License-Identifier: MIT
#pragma once
// A scenario's `workload:`: the phase, the batch and lengths, and a training step's schedule
// keys (microbatches, recomputation, optimizer, interleaving, overlaps, offloading).

#include "sim/spec/config.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/scenario.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rsim {

/// Parses `workload:` against the model it runs (single-stage lengths go into its stage; a
/// decode step sets the stage's context). Errors name file:line:col and the key.
Workload parse_workload(const ConfigNode& node, ModelSpec& model);

/// Decode: the tokens one sequence's KV cache holds at the step reported (its context and its
/// new token; a request's last step the most), no more than a single-stage model's sliding
/// window keeps.
std::int64_t kv_tokens_per_sequence(const Workload& workload, const ModelSpec& model);

/// Why `batch` sequences do not split into `microbatches` equal microbatches, or nullopt when
/// they do (a training step's batch, from the file, --set or a sweep's batch axis alike).
std::optional<std::string> microbatch_split_error(std::int64_t batch, std::int64_t microbatches);

}  // namespace rsim
