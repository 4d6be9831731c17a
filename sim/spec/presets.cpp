// SPDX-License-Identifier: MIT
#include "sim/spec/presets.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#ifndef RSIM_DATA_DIR
#define RSIM_DATA_DIR "."
#endif

namespace rsim {

std::filesystem::path find_preset(std::string_view name, std::string_view kind,
                                  const std::filesystem::path& referrer) {
  namespace fs = std::filesystem;
  const fs::path referrer_dir = referrer.empty() ? fs::path() : referrer.parent_path();
  const bool is_path = name.find('/') != std::string_view::npos || name.ends_with(".yaml") ||
                       name.ends_with(".json");
  std::vector<fs::path> candidates;
  if (is_path) {
    const fs::path given(name);
    candidates.push_back(given.is_absolute() || referrer.empty() ? given : referrer_dir / given);
  } else {
    const std::string file = std::string(name) + ".yaml";
    if (!referrer.empty()) {
      candidates.push_back(referrer_dir / ".." / kind / file);
      candidates.push_back(referrer_dir / file);
    }
    candidates.push_back(fs::path(kind) / file);
    if (const char* data_dir = std::getenv("RSIM_DATA_DIR")) {
      candidates.push_back(fs::path(data_dir) / kind / file);
    }
    candidates.push_back(fs::path(RSIM_DATA_DIR) / kind / file);
  }
  std::vector<std::string> tried;
  for (const fs::path& candidate : candidates) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      return candidate.lexically_normal();
    }
    tried.push_back(candidate.lexically_normal().string());
  }
  throw InputError(
      fmt::format("no {} preset or file '{}' (looked for {})", kind, name, fmt::join(tried, ", ")));
}

}  // namespace rsim
