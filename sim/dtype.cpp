// SPDX-License-Identifier: MIT
#include "sim/dtype.hpp"

#include <array>

namespace rsim {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  double bytes;
};

constexpr std::array kDTypes{
    DTypeInfo{DType::fp32, "fp32", 4.0}, DTypeInfo{DType::tf32, "tf32", 4.0},
    DTypeInfo{DType::bf16, "bf16", 2.0}, DTypeInfo{DType::fp16, "fp16", 2.0},
    DTypeInfo{DType::fp8, "fp8", 1.0},   DTypeInfo{DType::int8, "int8", 1.0},
    DTypeInfo{DType::fp4, "fp4", 0.5},   DTypeInfo{DType::int4, "int4", 0.5},
};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.dtype == dtype) {
      return entry;
    }
  }
  return kDTypes.front();
}

constexpr std::string_view kSparseSuffix = "_sparse";

}  // namespace

double bytes_per_element(DType dtype) { return info(dtype).bytes; }

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

std::optional<DType> compute_path_dtype(std::string_view path_name) {
  if (path_name.size() > kSparseSuffix.size() &&
      path_name.substr(path_name.size() - kSparseSuffix.size()) == kSparseSuffix) {
    path_name.remove_suffix(kSparseSuffix.size());
  }
  return parse_dtype(path_name);
}

}  // namespace rsim
