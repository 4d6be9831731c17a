// SPDX-License-Identifier: MIT
#pragma once
// `rsim calibrate`: the hardware's efficiency parameters (docs/design/expected.md) fitted to
// measured times by least squares. The expected time of a run is linear in the parameters once
// each op's binding roof is fixed: Σ count · (T_roof · (1/η_roof) + overhead) over device ops and
// Σ count · (α + steps · t_hop + T_bandwidth · (1/η_net)) over collectives. So each pass solves
// a linear least-squares problem (Eigen) in 1/η and the times, relative to each measurement,
// re-decides the binding roofs at the new values, and repeats until nothing changes.

#include "sim/analysis/measured.hpp"
#include "sim/spec/hardware.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace rsim {

/// One fitted (or kept) parameter: `key` as in the hardware's `efficiency:` section
/// ("compute.bf16", "attention.forward", "memory.hbm", "kernel_overhead", "network.nvlink",
/// "network.nvlink.latency"); fractions as fractions of the roof, times in seconds.
struct CalibratedParameter {
  std::string key;
  bool fraction = true;  ///< a fraction of a roof (else a time)
  double before = 0.0;
  double after = 0.0;
  std::size_t measurements = 0;  ///< measurements whose expected time it moves
};

/// One measurement as fitted.
struct CalibrationRow {
  std::string label;  ///< "file.csv:3 (h100_sxm 8192×8192×8192 bf16)"
  double measured = 0.0;
  double before = 0.0;  ///< expected time with the hardware's own efficiencies
  double after = 0.0;   ///< with the fitted ones
};

struct CalibrationResult {
  std::string file;      ///< the measurements' CSV
  std::string hardware;  ///< the hardware they were taken on (its name)
  std::vector<CalibratedParameter> parameters;
  std::vector<CalibrationRow> rows;
  double rms_before = 0.0;  ///< root mean square of (expected − measured) / measured
  double rms_after = 0.0;
  int iterations = 0;
};

/// What an Nsight Compute export needs beside itself: the hardware it ran on, or a scenario (whose
/// hardware it is) whose ops `matches` give tensor-core kernels their FLOPs (ncu's SASS counters
/// count CUDA-core instructions only).
struct NcuCalibration {
  std::string hardware;  ///< a preset name or a YAML path; "" with a scenario
  std::string scenario;  ///< a scenario file, for `matches`
  std::vector<KernelMatch> matches;
  [[nodiscard]] bool empty() const {
    return hardware.empty() && scenario.empty() && matches.empty();
  }
};

/// Reads measurements from a CSV and fits the efficiencies of the hardware they were taken on.
/// Three layouts, told apart by their header:
///   hardware,b,d,f,dtype,measured_s        one GEMM each (X[b,d]·W[d,f], as `rsim matmul`);
///   scenario,set,measured_s                an inference scenario (prefill or a decode step),
///                                          `set` a ';'-separated list of KEY=VALUE overrides;
///   an Nsight Compute export               one kernel launch each (`ncu --csv --metrics
///                                          gpu__time_duration.sum,dram__bytes_read.sum,
///                                          dram__bytes_write.sum[,SASS FLOP counters]`, the
///                                          long layout load_ncu_csv reads), with `ncu`;
/// paths relative to the CSV. Every row must run on one hardware. InputError at file:line for a
/// bad row, a training scenario (its step is a schedule, not a sum of ops), `ncu` options with
/// another layout, or fewer rows than the parameters they move.
CalibrationResult calibrate(const std::filesystem::path& csv, const NcuCalibration& ncu = {});

}  // namespace rsim
