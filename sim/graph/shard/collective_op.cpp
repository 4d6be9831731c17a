// SPDX-License-Identifier: MIT
#include "sim/graph/shard/collective_op.hpp"

#include <fmt/format.h>

#include <string>

namespace rsim::shard {

Op collective_op(const Op& op, CollectiveKind kind, CollectiveRole role, const std::string& suffix,
                 Bytes bytes, const MeshAxis& mesh, const Plan& plan,
                 const std::string& mesh_axis) {
  Op result;
  result.name = fmt::format("{}.{}", op.name, suffix);
  result.stage = op.stage;
  result.block = op.block;
  result.count = op.count;
  result.group = op.group;
  result.kind = OpKind::collective;
  result.pass = op.pass;
  result.compute_path = op.compute_path;
  result.collective.kind = kind;
  result.role = role;
  result.collective.bytes = bytes;
  result.collective.axes = {mesh.size};
  result.collective.in_network_reduction = plan.in_network_reduction;
  result.network = mesh.network;
  result.mesh_axis = mesh_axis.empty() ? mesh.name : mesh_axis;
  return result;
}

}  // namespace rsim::shard
