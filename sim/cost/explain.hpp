// SPDX-License-Identifier: MIT
#pragma once

// `rsim run --explain`: one op's cost (op_cost.hpp) as its formulas with the numbers put in.

#include "sim/graph/graph.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/tile.hpp"

#include <string>
#include <vector>

namespace rsim {

/// The lines of `rsim run --explain`: the op's FLOP and byte formulas with numbers put in.
std::vector<std::string> explain_op(const Op& op, const Roofs& roofs,
                                    const TileChoices& tiles = {});

/// The op `--explain NAME` means, of the ops in `order`: the one whose qualified name
/// (STAGE/BLOCK/OP) is NAME, else the one op named NAME or ending in "/NAME" (STAGE/OP works
/// too). None is an InputError suggesting the closest name; several, one listing them.
OpGraph::Vertex find_explained_op(const OpGraph& graph, const std::vector<OpGraph::Vertex>& order,
                                  std::string_view name);

}  // namespace rsim
