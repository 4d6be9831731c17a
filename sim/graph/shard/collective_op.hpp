// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/op.hpp"
#include "sim/spec/plan.hpp"

#include <string>

namespace rsim::shard {

// A collective over `mesh` (a mesh axis, or a part of one: then `mesh_axis` names the axis).
Op collective_op(const Op& op, CollectiveKind kind, CollectiveRole role, const std::string& suffix,
                 Bytes bytes, const MeshAxis& mesh, const Plan& plan,
                 const std::string& mesh_axis = {});

}  // namespace rsim::shard
