// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rsim {

/// Element types of tensors and the precisions that name compute paths. mxfp4, nvfp4 and int4 are
/// block-scaled 4-bit formats whose scale bytes count in their size.
enum class DType { fp32, tf32, bf16, fp16, fp8, int8, fp4, mxfp4, nvfp4, int4 };

/// Storage bytes per element including block scales: fp4 0.5, mxfp4 0.5 + 1/32, nvfp4 0.5 + 1/16,
/// int4 0.5 + 2/128 (an fp16 scale per 128). TF32 is stored as FP32.
double bytes_per_element(DType dtype);

/// The lower-case name used in YAML, JSON and on the command line ("bf16").
std::string_view to_string(DType dtype);

/// Parses a dtype name; nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view name);

/// Every dtype name, in declaration order (for help text and error messages).
std::vector<std::string_view> dtype_names();

/// The compute path a dtype runs on by default: its own name, "fp4" for mxfp4 and nvfp4.
std::string_view default_compute_path(DType dtype);

/// A compute path name is a dtype name, optionally with "_sparse" (2:4 structured sparsity):
/// "fp8", "fp8_sparse". Returns the dtype it computes in, or nullopt if malformed.
std::optional<DType> compute_path_dtype(std::string_view path_name);

}  // namespace rsim
