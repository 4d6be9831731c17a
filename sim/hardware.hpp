// SPDX-License-Identifier: MIT
#pragma once

#include "sim/dtype.hpp"
#include "sim/units.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

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
};

/// One level of the memory hierarchy, outermost (DRAM/HBM) first.
struct MemoryTier {
  std::string name;                         ///< dram, hbm, l2, smem, vmem
  std::optional<BytesPerSecond> bandwidth;  ///< absent where no figure is known
  Bytes capacity;                           ///< per instance
  std::int64_t count = 1;                   ///< instances (e.g. one SMEM per SM)
  std::string per;                          ///< what one instance belongs to ("sm"), or ""
  Provenance provenance;
};

/// A power/clock mode: explicit peaks and bandwidths, else peaks scaled by clock / base clock.
struct HardwareMode {
  std::string name;
  std::optional<Hertz> clock;
  std::vector<std::pair<std::string, FlopsPerSecond>> peaks;
  std::vector<std::pair<std::string, BytesPerSecond>> bandwidths;
  std::string source;
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
  std::vector<HardwareMode> modes;
  std::string default_mode;
};

/// Command-line or scenario overrides of peaks and bandwidths (applied after the mode).
struct RoofOverrides {
  std::vector<std::pair<std::string, FlopsPerSecond>> peaks;
  std::vector<std::pair<std::string, BytesPerSecond>> bandwidths;
};

/// The roofs of one hardware in one mode: what every cost is measured against.
struct Roofs {
  std::string hardware;
  std::string mode;
  bool unified_memory = false;
  std::string vector_path;
  std::vector<ComputePath> compute;
  std::vector<MemoryTier> memory;

  [[nodiscard]] const ComputePath* find_path(std::string_view name) const;
  [[nodiscard]] const MemoryTier* find_tier(std::string_view name) const;
  /// The outermost tier (DRAM/HBM): the one every operand is read from once.
  [[nodiscard]] const MemoryTier& main_memory() const { return memory.front(); }
  /// Compute path names, comma-separated, for error messages.
  [[nodiscard]] std::string path_names() const;
};

/// Builds a HardwareSpec from a parsed YAML document (errors carry file:line:col).
HardwareSpec parse_hardware(const ConfigNode& document);
/// Loads and validates a hardware YAML file.
HardwareSpec load_hardware(const std::filesystem::path& path);

/// Applies a mode (empty = the default mode) and overrides. Unknown modes, paths and tiers are
/// InputErrors listing what exists.
Roofs resolve_roofs(const HardwareSpec& spec, std::string_view mode,
                    const RoofOverrides& overrides = {});

}  // namespace rsim
