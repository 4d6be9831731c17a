// SPDX-License-Identifier: MIT
#include "sim/graph/shard/reshard.hpp"

#include "sim/graph/shard/collective_op.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace rsim::shard {
namespace {

bool same_axes(const Tensor& left, const Tensor& right) {
  if (left.axes.size() != right.axes.size()) {
    return false;
  }
  return std::all_of(left.axes.begin(), left.axes.end(),
                     [&](const Axis& axis) { return right.has_axis(axis.name); });
}

}  // namespace

std::vector<Op> reshard(const Tensor& produced, const Layout& from, const Op& consumer,
                        const Tensor& needed, const Layout& to, const Sharder& sharder) {
  std::vector<Op> result;
  if (!same_axes(produced, needed)) {
    return result;
  }
  // Compared unit by unit: the queries of a KV-split attention arrive sharded by heads over the
  // whole tensor axis = by heads over its outer and inner parts; attention needs them by heads
  // over the outer part (the KV head's group) and by batch over the inner one, so only the inner
  // part moves: an all-to-all over the Y/K devices that share a KV head. Its output goes back
  // the same way for o_proj (by batch → by heads over the inner part: an all-to-all again; an
  // all-gather would send each device Y/K − 1 slices of every head of the group, twice the
  // (Y/K − 1)/(Y/K)² · V an all-to-all sends, to keep only its own heads).
  Layout have_layout = from;
  Layout want_layout = to;
  for (const MeshAxis& mesh : sharder.units({&have_layout, &want_layout})) {
    const std::string have = axis_on(produced, have_layout, mesh.name);
    const std::string want = axis_on(needed, want_layout, mesh.name);
    if (mesh.size == 1 || have.empty() || have == want) {
      continue;
    }
    const Bytes local = sharder.local(needed, to).bytes();
    const std::string mesh_axis = sharder.mesh_of(mesh.name);
    if (want.empty()) {
      result.push_back(collective_op(consumer, CollectiveKind::all_gather, CollectiveRole::tensor,
                                     "reshard_all_gather", local, mesh, sharder.plan(), mesh_axis));
    } else {
      // All-to-all moves the whole array, V = local bytes × devices on the axis.
      result.push_back(collective_op(consumer, CollectiveKind::all_to_all, CollectiveRole::tensor,
                                     "reshard_all_to_all", local * static_cast<double>(mesh.size),
                                     mesh, sharder.plan(), mesh_axis));
    }
  }
  return result;
}

}  // namespace rsim::shard
