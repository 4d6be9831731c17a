// SPDX-License-Identifier: MIT
#pragma once
// `rsim calibrate` from an Nsight Compute export (calibrate.hpp): each kernel launch one
// measurement, its duration against its own DRAM bytes and FLOPs.

#include "sim/explore/calibrate.hpp"
#include "sim/explore/calibration_terms.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rsim::calibration {

/// Whether `csv` is an Nsight Compute export (a "Kernel Name" column) rather than one of the
/// GEMM or scenario layouts.
bool is_ncu_export(const std::filesystem::path& csv);

/// One measurement per kernel: `duration = count 1 × (max(T_math / η_path, T_dram / η_dram) +
/// overhead)`, T_dram its measured DRAM bytes over the hardware's main-memory bandwidth, T_math its
/// FLOPs over the compute path's peak: a kernel matched to an op (`KernelMatch`, with the scenario)
/// takes that op's FLOPs, path and tile share as the expected time does; others their SASS FLOPs
/// on the vector path (none: memory alone). `hardware` and `kernel_overhead` are set to the
/// hardware's name and its overhead (the fit's prior). InputErrors: no hardware or scenario, a
/// match without a scenario, and load_ncu_csv's and place_kernels' own.
std::vector<Measurement> read_ncu_measurements(const std::filesystem::path& csv,
                                               const NcuCalibration& ncu, Parameters& parameters,
                                               std::string& hardware, double& kernel_overhead);

}  // namespace rsim::calibration
