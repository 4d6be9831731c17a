// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>

namespace rsim::test {

/// A path under the source tree (tests run from anywhere).
inline std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(RSIM_SOURCE_DIR) / relative;
}

}  // namespace rsim::test
