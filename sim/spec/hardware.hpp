// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/dtype.hpp"
#include "sim/base/units.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

class ConfigFiles;
class ConfigNode;

/// The hardware unit that executes a compute path.
enum class ComputeUnit { tensor_core, cuda_core, mxu, vpu };
std::string_view to_string(ComputeUnit unit);

/// Where a figure came from: a citation, or the arithmetic that derived it.
struct Provenance {
  std::string source;   ///< citation; empty when derived
  std::string derived;  ///< formula and inputs; empty when sourced
};

/// One compute roof: a peak named by its precision ("fp8", "fp8_sparse").
struct ComputePath {
  std::string name;
  DType dtype = DType::fp32;
  bool sparse = false;
  FlopsPerSecond peak;  ///< dense (or sparse, for *_sparse) peak at the base clock
  ComputeUnit unit = ComputeUnit::tensor_core;
  Provenance provenance;
  /// The fraction of `peak` large kernels reach (hardware `efficiency.compute`; 1 where unknown):
  /// what the expected time divides T_math by.
  double efficiency = 1.0;
};

/// One level of the memory hierarchy, outermost (DRAM/HBM) first.
struct MemoryTier {
  std::string name;                         ///< dram, hbm, l2, smem, vmem
  std::optional<BytesPerSecond> bandwidth;  ///< absent where no figure is known
  Bytes capacity;                           ///< per instance
  std::int64_t count = 1;                   ///< instances (e.g. one SMEM per SM)
  std::string per;                          ///< what one instance belongs to ("sm"), or ""
  bool clocked = false;  ///< bandwidth = bytes per clock × the GPU clock (scales with modes)
  /// The tier that holds the accumulators of this tier's tiles (GPU registers or TMEM); empty:
  /// this tier holds them itself (TPU VMEM).
  std::string accumulator_tier;
  Provenance provenance;
  /// The fraction of `bandwidth` streaming kernels reach (`efficiency.memory`; 1 where unknown).
  double efficiency = 1.0;
};

/// Memory behind the host link (a GPU's PCIe to its CPU's DRAM) that a training plan may offload
/// weights, saved activations or optimizer state to: one device's share of it and of the link.
struct HostMemory {
  Bytes capacity;            ///< per device
  BytesPerSecond bandwidth;  ///< one direction, per device (the link is full duplex)
  Provenance provenance;
};

/// How a network tier connects devices.
enum class Topology {
  torus,     ///< per-axis rings of point-to-point links (TPU ICI); wraparound only at full size
  switched,  ///< every device has `bandwidth` of egress into a switch (NVLink/NVSwitch)
  fat_tree,  ///< full-bisection switched scale-out (InfiniBand, DCN): like a switch
};
std::string_view to_string(Topology topology);

/// One level of the interconnect: NVLink, InfiniBand, TPU ICI, DCN.
struct NetworkTier {
  std::string name;  ///< nvlink, ib, ici, dcn
  Topology topology = Topology::switched;
  /// One direction. Torus: per link (a device has two links per axis, one each way, so an axis
  /// carries 2 × this both ways); switched / fat tree: per device egress.
  BytesPerSecond bandwidth;
  std::int64_t devices = 0;            ///< devices one domain of this tier spans (0: unbounded)
  std::int64_t wraparound_size = 0;    ///< torus: axes of this size have wraparound links
  std::optional<Seconds> hop_latency;  ///< per hop or ring step; absent: bandwidth term only
  bool in_network_reduction = false;   ///< the switch can reduce (NVLink SHARP)
  Provenance provenance;
  /// The fraction of `bandwidth` a collective's bus bandwidth reaches (`efficiency.network`).
  double efficiency = 1.0;
  /// A collective call's fixed latency α, before its steps (NCCL's base latency): expected time.
  Seconds call_latency;
  /// The fraction of the device's compute a collective on this tier takes while it runs under
  /// compute (its kernels occupy SMs: Calculon's `processor_usage`); the expected time adds
  /// this share of every hidden collective's time back (`efficiency.network.TIER`).
  double processor_usage = 0.0;
};

/// A power/clock mode: explicit peaks and bandwidths, else peaks scaled by clock / base clock.
/// Peaks and bandwidths that replace a hardware's own: a mode's, a variant's, the command line's.
struct RoofOverrides {
  std::vector<std::pair<std::string, FlopsPerSecond>> peaks;
  std::vector<std::pair<std::string, BytesPerSecond>> bandwidths;  ///< memory or network tiers
};

struct HardwareMode {
  std::string name;
  std::optional<Hertz> clock;
  RoofOverrides overrides;  ///< explicit figures of this mode
  std::string source;
};

/// What fused attention kernels (FlashAttention) reach of their compute path's peak, per pass
/// (`efficiency.attention`); absent: the path's own fraction, as a matmul's.
struct AttentionEfficiency {
  std::optional<double> forward;
  std::optional<double> backward;
  /// Each query tile's fixed work (loading Q, the epilogue writing O) as the keys its main loop
  /// would cover meanwhile: a pass whose queries see L keys on average runs at L / (L + this)
  /// of its fraction (`efficiency.attention.length_overhead.tokens`; 0: none).
  double length_overhead = 0.0;
  /// The per-score work beside the two matmuls (softmax's exponentials on the special-function
  /// units, FlashAttention-3 §3.1) as head dimensions of matmul work: a pass of head dim d runs
  /// at [d / (d + this)] / [128 / (128 + this)] of its fraction, which is given at head dim 128
  /// (`efficiency.attention.head_dim_overhead.dims`; 0: none).
  double head_dim_overhead = 0.0;
  /// The share of the main memory's bandwidth an unfused attention's batched GEMMs reach (a
  /// GEMM of two activations: Q·Kᵀ, P·V and their gradients, whose K or N is the head dim and
  /// whose s × s scores dominate the traffic), in place of the tier's own fraction
  /// (`efficiency.attention.unfused_memory.fraction`; nullopt: the tier's).
  std::optional<double> unfused_memory;
};

/// One output tile a GEMM kernel gives each compute unit (a CTA's M × N on an SM).
struct GemmTile {
  std::int64_t m = 0;
  std::int64_t n = 0;
};

/// How a GEMM library spreads a matmul over the compute units (`efficiency.gemm`): the output
/// tiles it picks from and the split-K it allows. A matmul fills `units` with
/// ⌈M/m⌉·⌈N/n⌉ tiles (× its GEMM batch), in waves; the last wave and the tiles' edges past M and N
/// run idle (NVIDIA, Matrix Multiplication Background User's Guide, DU-09799-001, §3 "Dimension
/// Quantization Effects"). No tiles: every matmul fills the device.
struct GemmQuantization {
  std::vector<GemmTile> tiles;
  /// The tensor cores' MMA instruction (Hopper wgmma: 64 × 8): a tile larger than its matmul
  /// shrinks to the matmul rounded up to it, as libraries pick small-M kernels for small M.
  GemmTile mma{1, 1};
  std::int64_t units = 1;  ///< SMs (CUs): the tiles of one wave
  /// The least K one tile of a split-K kernel sums over; 0: no split-K.
  std::int64_t split_k_min = 0;
};

/// A hardware preset as written in hardware/*.yaml (validated).
struct HardwareSpec {
  std::string name;
  std::string source;
  std::string file;  ///< the YAML it came from
  std::optional<Hertz> clock;
  bool unified_memory = false;
  std::string vector_path;  ///< compute path that runs elementwise ops (norms, activations)
  std::vector<ComputePath> compute;
  std::vector<MemoryTier> memory;
  std::vector<NetworkTier> network;
  std::optional<HostMemory> host_memory;  ///< absent: nothing to offload to (or unified memory)
  std::vector<HardwareMode> modes;
  std::string default_mode;
  /// The gap one kernel launch adds between dependent kernels (`efficiency.kernel_overhead`).
  Seconds kernel_overhead;
  AttentionEfficiency attention_efficiency;
  GemmQuantization gemm_quantization;  ///< `efficiency.gemm`
};

/// The roofs of one hardware in one mode: what every cost is measured against.
struct Roofs {
  std::string hardware;
  std::string mode;
  bool unified_memory = false;
  std::string vector_path;
  std::vector<ComputePath> compute;
  std::vector<MemoryTier> memory;
  std::vector<NetworkTier> network;
  std::optional<HostMemory> host_memory;
  Seconds kernel_overhead;  ///< per kernel launch (HardwareSpec::kernel_overhead)
  AttentionEfficiency attention_efficiency;
  GemmQuantization gemm_quantization;

  [[nodiscard]] const ComputePath* find_path(std::string_view name) const;
  [[nodiscard]] const NetworkTier* find_network(std::string_view name) const;
  /// The tiers of "nvlink" or "nvlink+ib" (innermost first); empty if any is missing.
  [[nodiscard]] std::vector<const NetworkTier*> find_networks(std::string_view names) const;
  [[nodiscard]] const MemoryTier* find_tier(std::string_view name) const;
  /// The outermost tier (DRAM/HBM): the one every operand is read from once.
  [[nodiscard]] const MemoryTier& main_memory() const { return memory.front(); }
  /// Compute path names, comma-separated, for error messages.
  [[nodiscard]] std::string path_names() const;
};

/// Reads the `peaks` ({path: rate}) and `bandwidths` ({tier: rate}) maps of a YAML node, checking
/// every path and (memory or network) tier against the hardware.
RoofOverrides parse_roof_overrides(const ConfigNode& node, const HardwareSpec& spec);

/// A figure's `source` or `derived` (exactly one), as every hardware figure carries.
Provenance parse_provenance(const ConfigNode& node);

/// Builds a HardwareSpec from a parsed YAML document (errors carry file:line:col).
HardwareSpec parse_hardware(const ConfigNode& document);
/// Loads and validates a hardware YAML file (parsed through `files` where given).
HardwareSpec load_hardware(const std::filesystem::path& path, ConfigFiles* files = nullptr);

/// Applies a mode (empty = the default mode) and overrides. Unknown modes, paths and tiers are
/// InputErrors listing what exists.
Roofs resolve_roofs(const HardwareSpec& spec, std::string_view mode,
                    const RoofOverrides& overrides = {});

}  // namespace rsim
