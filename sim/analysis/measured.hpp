// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/analysis.hpp"
#include "sim/base/units.hpp"
#include "sim/spec/hardware.hpp"

#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// One kernel launch from an Nsight Compute CSV export (`ncu --csv --metrics ...`, the long
/// "details" layout: one row per kernel and metric, with "Metric Name", "Metric Unit" and
/// "Metric Value" columns).
struct MeasuredKernel {
  std::string id;    ///< ncu's "ID" column (the launch index)
  std::string name;  ///< "Kernel Name"
  int line = 0;      ///< 1-based line of its first row in the file
  Bytes dram_bytes;  ///< dram__bytes_read.sum + dram__bytes_write.sum (or dram__bytes.sum)
  Seconds duration;  ///< gpu__time_duration.sum
  /// FLOPs counted from SASS: Σ over precisions of add + mul + 2·fma thread instructions
  /// (sm__sass_thread_inst_executed_op_{f,h,d}{add,mul,fma}_pred_on.sum); absent when the CSV
  /// has none of these metrics for the kernel. Tensor-core work is not in these counters.
  std::optional<Flops> sass_flops;
};

/// Reads an ncu CSV export. Lines before the header (ncu's "==PROF==" lines, the program's own
/// output) are skipped. Errors name file:line and what was expected: a missing header or column,
/// a row with the wrong number of fields, a value that is not a number (thousands separators
/// "1,234" are accepted), an unknown unit for a metric rsim reads, a kernel without DRAM bytes or
/// duration.
std::vector<MeasuredKernel> load_ncu_csv(const std::filesystem::path& path);
/// The same from a stream; `file` names it in errors.
std::vector<MeasuredKernel> parse_ncu_csv(std::istream& in, const std::string& file);

/// A kernel whose name contains `pattern` takes the FLOPs and compute path of rsim op `op`
/// (`--match PATTERN=OP`): tensor-core FLOPs are not in ncu's SASS counters.
struct KernelMatch {
  std::string pattern;
  std::string op;  ///< "prefix/layer/gate_up_proj", or a name that is unique in the run
};

/// One measured kernel placed on the roofs as in Yang et al., "Hierarchical Roofline Analysis"
/// (2020): AI = FLOPs / DRAM bytes, achieved = FLOPs / duration; with the fraction of the DRAM
/// slope and of the compute roof it reaches.
struct KernelOnRoofs {
  MeasuredKernel kernel;
  Flops flops;
  std::string flops_source;           ///< "sass" or "op prefix/layer/q_proj"
  std::optional<std::size_t> op_row;  ///< the matched op's row in the run's table (none: SASS)
  std::string compute_path;           ///< the roof it is measured against
  double intensity = 0.0;             ///< FLOPs / DRAM byte
  FlopsPerSecond achieved;            ///< FLOPs / duration
  BytesPerSecond achieved_bandwidth;  ///< DRAM bytes / duration
  /// achieved bandwidth / main-memory bandwidth: how close the kernel sits to the DRAM slope
  /// (at its intensity the slope allows I·B FLOP/s, and achieved / (I·B) = (bytes/t) / B).
  double dram_fraction = 0.0;
  double compute_fraction = 0.0;  ///< achieved / peak of `compute_path`
};

/// Places kernels on the roofs. A kernel matched by `matches` (first match wins) takes that op's
/// FLOPs per instance and its compute path from `run`; otherwise its SASS FLOPs, measured against
/// the hardware's vector path (SASS counts CUDA-core instructions). A kernel with neither is an
/// InputError naming its line. `run` may be null (`rsim roofs`): then `matches` must be empty.
std::vector<KernelOnRoofs> place_kernels(const std::vector<MeasuredKernel>& kernels,
                                         const Roofs& roofs, const RunResult* run,
                                         const std::vector<KernelMatch>& matches,
                                         const std::string& file);

/// Parses "PATTERN=OP" (`--match`).
KernelMatch parse_kernel_match(const std::string& text);

}  // namespace rsim
