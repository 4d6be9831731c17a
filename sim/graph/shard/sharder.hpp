// SPDX-License-Identifier: MIT
#pragma once

#include "sim/graph/graph.hpp"
#include "sim/spec/plan.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rsim::shard {

// Per tensor axis: the mesh axes it is sharded on, outer first (empty = replicated). An entry may
// name a part of a mesh axis (see KvSplit) and more than one unit: the batch of a KV cache is split
// over 'data' and over the devices that share one KV head on 'model'.
using Layout = std::vector<std::vector<std::string>>;

bool contains(const std::vector<std::string>& units, const std::string& unit);

// The name of the tensor axis a layout shards on a mesh axis (or a part of one); "" if none.
std::string axis_on(const Tensor& tensor, const Layout& layout, const std::string& mesh);

// K KV heads over a tensor-parallel mesh axis of Y devices, K < Y and Y % K = 0 (Llama 3 70B: 8
// over 16). Megatron keeps the G = N/K query heads of each KV head's group on Y/K devices and
// replicates that KV head on them; the devices of the axis, m = k·(Y/K) + j, are then K outer
// groups (k: the KV head and its query heads) of Y/K inner devices (j). A KV cache split
// "heads first, then batch" (MaxText's cache sharding; scaling book inference.md shards the
// cache over kv_heads and, when they run out, over the batch) stores on device (k, j) KV head k
// of the j-th slice of the sequences: 1/Y of the cache per device instead of 1/K. Attention
// against it runs where it is: over kv_heads (K ways) × batch (Y/K ways).
struct KvSplit {
  std::string mesh;           // the mesh axis the kv_heads rule names
  std::int64_t kv_heads = 1;  // K
  MeshAxis heads_part;        // K outer device groups: one KV head (and its G query heads) each
  MeshAxis batch_part;        // Y/K inner devices: the ones that share a KV head
};

// The KV splits a plan needs for a graph: one per distinct K (stages may differ) that does not
// divide the kv_heads rule's mesh axis but divides its size.
std::vector<KvSplit> kv_splits(const OpGraph& graph, const Plan& plan);

// The layouts a plan gives the tensors of the ops, and their per-device sizes.
class Sharder {
 public:
  Sharder(const Plan& plan, std::vector<std::string>& notes, std::vector<KvSplit> splits)
      : plan_(plan), notes_(notes), splits_(std::move(splits)) {}

  // The layout the rules give a tensor. Rules are taken in their order, so earlier rules win a
  // mesh axis (heads before seq: Megatron sequence parallelism keeps heads sharded in attention);
  // a mesh axis shards one axis of a tensor. KV heads that do not divide but divide the axis size
  // take its KvSplit's outer part (query groups its inner part); the ops that write or read a KV
  // cache take "heads first, then batch": kv_heads and heads the outer part, batch the inner
  // part, when the batch divides over it. Other KV heads and query groups that do not divide are
  // replicated, as Megatron does for MQA/GQA; any other axis that does not divide is an error.
  // `attention` ignores sequence rules: attention sees whole sequences.
  Layout layout(const Tensor& tensor, const Op& op, bool attention = false) const;

  // Per-device sizes: ⌈size / devices⌉ for each unit the axis is split over (exact for the axes
  // that must divide; the rows and experts of an MoE block may not).
  [[nodiscard]] Tensor local(Tensor tensor, const Layout& layout) const;

  // The units a set of layouts is split over, for the collectives between them: each mesh axis
  // whole, or, where any of the layouts uses a part of it, its KvSplit parts, with every entry
  // that names the whole axis rewritten as its parts (outer first: device m = k·(Y/K) + j, so
  // query heads over the whole axis are query heads over both parts).
  [[nodiscard]] std::vector<MeshAxis> units(const std::vector<Layout*>& layouts) const;

  // The mesh axis a unit belongs to (a collective over a part runs on its axis's network).
  [[nodiscard]] std::string mesh_of(const std::string& unit) const;

  void note(const std::string& text) const;

  [[nodiscard]] const Plan& plan() const { return plan_; }

 private:
  [[nodiscard]] const MeshAxis& find_unit(const std::string& unit) const;

  // The split of the kv_heads rule's mesh axis for the KV heads of this op's tensors, if any.
  [[nodiscard]] const KvSplit* split_of(const Op& op) const;

  // Whether an op that writes or reads a KV cache splits it by batch over the split's inner
  // part: its sequences per device (after the batch rule's own mesh axis) must divide over it;
  // else the cache stays replicated there (noted).
  [[nodiscard]] bool splits_batch(const Op& op, const KvSplit& split) const;

  const Plan& plan_;
  std::vector<std::string>& notes_;
  std::vector<KvSplit> splits_;
};

}  // namespace rsim::shard
