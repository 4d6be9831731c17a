// SPDX-License-Identifier: MIT
#pragma once
// `rsim merge`: the JSON outputs of `rsim sweep … --shard K/N` or `rsim search … --shard K/N`
// (one per K) joined into what the command prints unsharded.

#include "sim/explore/sweep.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rsim {

/// One shard's output as read: the file it came from (errors name it) and its JSON.
struct ShardDocument {
  std::string path;
  nlohmann::ordered_json json;
};

/// The command the shards came from ("sweep" or "search"), the same in every one; InputError
/// naming the file that is not a shard's output or that came from another command.
std::string shard_command(const std::vector<ShardDocument>& shards);

/// A sweep's shards joined: every point of the grid in grid order (crossovers not yet found),
/// and how the shards ran.
struct MergedSweep {
  SweepResult result;
  bool crossovers = true;              ///< the shards were not run with --no-crossovers
  std::vector<std::string> arguments;  ///< their scenario options (--set, --plan, …)
};

/// Checks that the shards are the N slices of one sweep (the same scenario, axes and ranking;
/// each K from 1 to N once, in any order) and joins their points. InputError naming the file
/// and what differs or is missing.
MergedSweep merge_sweep_shards(const std::vector<ShardDocument>& shards);

/// A training search's shards joined: the counts added up, the rejections by reason added up,
/// the plans of every shard ranked again by the search's key and the top kept, renumbered; what
/// `rsim search … --format json` prints unsharded. InputError as merge_sweep_shards.
nlohmann::ordered_json merge_search_shards(const std::vector<ShardDocument>& shards);

}  // namespace rsim
