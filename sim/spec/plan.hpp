// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/error.hpp"
#include "sim/spec/hardware.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

class ConfigNode;

/// The logical tensor axes that plan rules map to mesh axes (graph/transformer.cpp names every
/// tensor's axes with these; MaxText's logical_axis_rules play the same part).
namespace logical_axis {
inline constexpr std::string_view batch = "batch";
inline constexpr std::string_view seq = "seq";
inline constexpr std::string_view embed = "embed";
inline constexpr std::string_view heads = "heads";
inline constexpr std::string_view kv_heads = "kv_heads";
inline constexpr std::string_view mlp = "mlp";
inline constexpr std::string_view vocab = "vocab";
inline constexpr std::string_view experts = "experts";
inline constexpr std::string_view layers = "layers";  ///< pipeline stages: the layer stack
}  // namespace logical_axis

/// The most devices a mesh may hold: 2^24, 16.7 M, far beyond any machine built (a product of
/// axes past it overflowed to 0 devices and printed "inf per device", issue 23 #2).
inline constexpr std::int64_t kMaxMeshDevices = std::int64_t{1} << 24;

/// One named axis of the device mesh and the network tier its devices talk over.
struct MeshAxis {
  std::string name;  ///< e.g. "data", "model"
  std::int64_t size = 1;
  std::string network;  ///< a network tier of the hardware
};

/// A parallelism plan: a device mesh and logical-axis rules (t5x / MaxText / GSPMD style).
/// `rules` map a logical tensor axis (batch, embed, heads, mlp, ...) to a mesh axis for every
/// tensor; `weight_rules` override them for weights only (FSDP shards weights, not activations).
struct Plan {
  std::string name = "single";  ///< a preset name or "custom"
  /// Where a scenario file wrote this plan (its `plan:` key): a split found not to divide when
  /// the graph is sharded is reported there. None for plans a search builds.
  std::optional<SourceMark> written_at;
  std::vector<MeshAxis> mesh;
  std::vector<std::pair<std::string, std::string>> rules;
  std::vector<std::pair<std::string, std::string>> weight_rules;
  bool in_network_reduction = false;  ///< all-reduce in the switch (NVLink SHARP) where it can
  /// ZeRO (Rajbhandari et al. 2020) across the data axis (the `batch` rule) in training: 1 shards
  /// the optimizer state (each replica updates 1/d of every weight: the gradient all-reduce
  /// becomes a reduce-scatter and the updated weights are all-gathered, the same bytes), 2 also
  /// the gradients. ZeRO-3 is `weight_rules: {embed: data}`.
  std::int64_t zero_stage = 0;
  /// Megatron-LM's --make-vocab-size-divisible-by (its default 128): the vocabulary is padded to
  /// a multiple of this × the devices of the mesh axis the `vocab` rule names, so the LM head
  /// and the embedding always split over the tensor axis. 0: no padding.
  std::int64_t vocab_padding = 0;

  [[nodiscard]] std::int64_t devices() const;
  [[nodiscard]] const MeshAxis* find_axis(std::string_view name) const;
  /// The mesh axis a logical axis of a tensor maps to, if any.
  [[nodiscard]] std::optional<std::string> mesh_axis_for(std::string_view logical,
                                                         bool weight) const;
  /// The mesh axis the batch is split over (data parallelism), if any.
  [[nodiscard]] std::optional<std::string> data_axis() const {
    return mesh_axis_for(logical_axis::batch, false);
  }
  /// The mesh axis the layers are split over (pipeline parallelism), if any.
  [[nodiscard]] std::optional<std::string> pipeline_axis() const {
    return mesh_axis_for(logical_axis::layers, false);
  }
};

/// A preset's rules: single, data_parallel, megatron_tp, sequence_parallel, fsdp, fsdp_tp,
/// shard_d, shard_batch, the training 3D presets (megatron_3d, megatron_3d_sp, zero3_3d,
/// zero3_3d_sp: tensor × pipeline × data, the last two ZeRO-3 over data), expert_parallel.
struct PlanPreset {
  std::string_view name;
  std::string_view description;
  std::vector<std::pair<std::string, std::string>> rules;
  std::vector<std::pair<std::string, std::string>> weight_rules;
};
const std::vector<PlanPreset>& plan_presets();

/// Why a plan cannot run on a hardware or a model: what the searches count their rejections by.
enum class PlanProblem {
  unknown_tier,       ///< a mesh axis names a network tier the hardware lacks
  uneven_hierarchy,   ///< "nvlink+ib": the axis does not split into whole inner domains
  exceeds_domain,     ///< more devices on a tier than its domain holds
  unknown_preset,     ///< no plan preset of that name
  missing_mesh_axis,  ///< a rule names a mesh axis the mesh lacks
  zero_stage,         ///< a ZeRO stage the plan cannot take
  does_not_divide,    ///< a sharded tensor axis, the experts or the layers do not divide
};
std::string_view to_string(PlanProblem problem);

/// An InputError that says which PlanProblem it is.
class PlanError : public InputError {
 public:
  PlanError(PlanProblem problem, const std::string& message);
  [[nodiscard]] PlanProblem problem() const { return problem_; }

 private:
  PlanProblem problem_;
};

using Rules = std::vector<std::pair<std::string, std::string>>;

/// A mesh axis's tiers exist and a hierarchy ("nvlink+ib") splits into whole inner domains.
void check_mesh_axis(const MeshAxis& axis, const HardwareSpec& hardware);
/// The axes over each tier fit its domain.
void check_domains(const Plan& plan, const HardwareSpec& hardware);
/// All of a plan's checks against a hardware (what parse_plan checks, without YAML); PlanError.
void validate_plan(const Plan& plan, const HardwareSpec& hardware);
/// A preset on a mesh, `rules` overriding its rules (the plan is then "PRESET+"), at a ZeRO
/// stage: what a search tries, validated as parse_plan would; PlanError.
Plan make_plan(std::string_view preset, std::vector<MeshAxis> mesh, const HardwareSpec& hardware,
               const Rules& rules = {}, std::int64_t zero_stage = 0);

/// Parses `plan:` — a preset name (one device only: "single"), or a map with `mesh` ({axis: "N
/// over TIER"}), and `preset` and/or `rules` / `weight_rules`. Validates the tiers, their domain
/// sizes, and that every rule names a mesh axis. Errors name file:line:col.
Plan parse_plan(const ConfigNode& node, const HardwareSpec& hardware);

/// `vocab_size` padded as `plan.vocab_padding` asks (unchanged without padding or vocabulary).
std::int64_t padded_vocab(const Plan& plan, std::int64_t vocab_size);

}  // namespace rsim
