// SPDX-License-Identifier: MIT
#pragma once
// A hardware's `efficiency:` section: what real kernels and collectives reach of its roofs, each
// figure with its source. The expected time (sim/cost/expected.hpp) reads them; the bounds never.

#include "sim/spec/config.hpp"
#include "sim/spec/hardware.hpp"

#include <filesystem>

namespace rsim {

/// Reads `efficiency` into the spec's compute paths, memory and network tiers and kernel overhead:
///   efficiency:
///     kernel_overhead: {time: 2.5 us, source: …}
///     compute: {bf16: {fraction: 0.80, source: …}}
///     attention: {forward: {fraction: 0.73, source: …}, backward: {fraction: 0.63, source: …}}
///     gemm: {tiles: [[128, 256], [256, 128], [128, 128]], mma: [64, 8], split_k_min: 1024,
///            source: …}
///     memory:  {hbm: {fraction: 0.89, source: …}}
///     network: {nvlink: {fraction: 0.82, latency: 6.6 us, processor_usage: 0.15, source: …}}
/// A path or tier the hardware lacks, a fraction outside (0, 1] and a figure without `source` or
/// `derived` are ConfigErrors at their file:line:col.
void parse_efficiency(const ConfigNode& node, HardwareSpec& spec);

/// Applies a calibration overlay (what `rsim calibrate` writes) over the spec's efficiencies:
///   hardware: NVIDIA H100 SXM5 80GB     # optional: must be the spec's name
///   efficiency: {compute: {bf16: {fraction: 0.74, derived: "rsim calibrate: …"}}}
/// Errors (a missing file, another hardware, a bad figure) name the overlay's file:line.
void apply_calibration(const std::filesystem::path& path, HardwareSpec& spec,
                       ConfigFiles* files = nullptr);

}  // namespace rsim
