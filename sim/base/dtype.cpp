// SPDX-License-Identifier: MIT
#include "sim/base/dtype.hpp"

#include <array>

namespace rsim {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  double value_bytes;  // bytes of one packed value
  double scale_bytes;  // bytes of one block scale (0: none)
  double block;        // values sharing one scale
  [[nodiscard]] constexpr double bytes() const {
    return value_bytes + (scale_bytes > 0.0 ? scale_bytes / block : 0.0);
  }
};

constexpr std::array kDTypes{
    DTypeInfo{DType::fp32, "fp32", 4.0, 0.0, 1.0},
    DTypeInfo{DType::tf32, "tf32", 4.0, 0.0, 1.0},  // stored as FP32
    DTypeInfo{DType::bf16, "bf16", 2.0, 0.0, 1.0},
    DTypeInfo{DType::fp16, "fp16", 2.0, 0.0, 1.0},
    DTypeInfo{DType::fp8, "fp8", 1.0, 0.0, 1.0},    // e4m3 / e5m2, per-tensor scale
    DTypeInfo{DType::int8, "int8", 1.0, 0.0, 1.0},  // per-channel scales are negligible
    DTypeInfo{DType::fp4, "fp4", 0.5, 0.0, 1.0},    // bare e2m1, as the fp4 compute path names it
    // OCP MX: one 8-bit E8M0 scale per 32 values → 0.5 + 1/32 = 0.53125 B
    DTypeInfo{DType::mxfp4, "mxfp4", 0.5, 1.0, 32.0},
    // NVIDIA NVFP4: one 8-bit E4M3 scale per 16 values → 0.5 + 1/16 = 0.5625 B
    DTypeInfo{DType::nvfp4, "nvfp4", 0.5, 1.0, 16.0},
    // GPTQ/AWQ-style int4: one fp16 scale per group of 128 → 0.5 + 2/128 = 0.515625 B
    DTypeInfo{DType::int4, "int4", 0.5, 2.0, 128.0},
};

// The table is in the enum's order, so a dtype is its own index (costing looks widths up per
// tensor per point of a sweep).
constexpr bool in_enum_order() {
  for (std::size_t index = 0; index < kDTypes.size(); ++index) {
    if (static_cast<std::size_t>(kDTypes[index].dtype) != index) {
      return false;
    }
  }
  return true;
}
static_assert(in_enum_order(), "kDTypes must list the dtypes in DType's order");

const DTypeInfo& info(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  return index < kDTypes.size() ? kDTypes[index] : kDTypes.front();
}

constexpr std::string_view kSparseSuffix = "_sparse";

}  // namespace

double bytes_per_element(DType dtype) { return info(dtype).bytes(); }

std::string_view to_string(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.name == name) {
      return entry.dtype;
    }
  }
  return std::nullopt;
}

std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const DTypeInfo& entry : kDTypes) {
    names.push_back(entry.name);
  }
  return names;
}

std::string_view default_compute_path(DType dtype) {
  return dtype == DType::mxfp4 || dtype == DType::nvfp4 ? "fp4" : to_string(dtype);
}

std::optional<DType> compute_path_dtype(std::string_view path_name) {
  if (path_name.size() > kSparseSuffix.size() &&
      path_name.substr(path_name.size() - kSparseSuffix.size()) == kSparseSuffix) {
    path_name.remove_suffix(kSparseSuffix.size());
  }
  return parse_dtype(path_name);
}

}  // namespace rsim
