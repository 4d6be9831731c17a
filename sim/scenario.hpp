// SPDX-License-Identifier: MIT
#pragma once

#include "sim/dtype.hpp"
#include "sim/hardware.hpp"
#include "sim/model.hpp"
#include "sim/units.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rsim {

/// Elementwise op families; a scenario may declare some fused into a neighbouring matmul.
enum class ElementwiseKind { norm, activation, residual, rope, embedding, softmax };
std::string_view to_string(ElementwiseKind kind);

/// Dtypes of each tensor role and the compute path the matmuls run on.
struct Precision {
  DType weights = DType::bf16;
  DType activations = DType::bf16;
  DType outputs = DType::bf16;   ///< matmul outputs; defaults to the activation dtype
  DType kv_cache = DType::bf16;  ///< defaults to the activation dtype
  std::string compute;           ///< a compute path of the hardware, e.g. "fp8"
};

/// What the kernels keep on chip (the fusion assumption behind every byte count).
struct Fusion {
  bool attention_fused = true;  ///< FMHA keeps scores on chip; unfused writes and reads them
  std::vector<ElementwiseKind> into_matmul;  ///< kinds with no DRAM traffic of their own
  [[nodiscard]] bool is_fused(ElementwiseKind kind) const;
};

/// What is run: the phase, the batch and (for single-stage models) the sequence length.
struct Workload {
  std::string phase = "prefill";
  std::int64_t batch = 1;
  std::int64_t seq_len = 0;  ///< single-stage models only; composites fix their lengths
};

/// A measured time to set beside the bound ("the seed's 63 ms").
struct Reference {
  std::string stage;  ///< a stage name, or "" for the whole run
  Seconds time;
  std::string source;
};

/// A validated scenario: hardware + mode, model, workload, precision, fusion, references.
struct Scenario {
  std::string name;
  std::string file;
  HardwareSpec hardware;
  std::string mode;
  ModelSpec model;
  Workload workload;
  Precision precision;
  Fusion fusion;
  std::vector<Reference> references;
};

/// Overrides given on the command line: `--set key.path=value` entries, applied to the YAML
/// tree before validation, so they are checked exactly like the file's own values.
struct ScenarioOverrides {
  std::vector<std::pair<std::string, std::string>> sets;
};

/// Loads and validates a scenario file, resolving hardware and model presets.
Scenario load_scenario(const std::filesystem::path& path, const ScenarioOverrides& overrides = {});

}  // namespace rsim
