// SPDX-License-Identifier: MIT
#include "sim/spec/presets.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

#ifndef RSIM_DATA_DIR
#define RSIM_DATA_DIR "."
#endif

namespace rsim {
namespace {

// Where bare preset names are looked up after the referring file's folder, in order: the working
// directory, $RSIM_DATA_DIR, an installed binary's PREFIX/share/rsim (beside PREFIX/bin/rsim:
// cmake --install), and the source tree this binary was built from.
std::vector<std::filesystem::path> data_roots() {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots{fs::path(".")};
  if (const char* data_dir = std::getenv("RSIM_DATA_DIR")) {
    roots.emplace_back(data_dir);
  }
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    roots.push_back(executable.parent_path().parent_path() / "share" / "rsim");
  }
  roots.emplace_back(RSIM_DATA_DIR);
  return roots;
}

}  // namespace

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
    for (const fs::path& root : data_roots()) {
      candidates.push_back(root == "." ? fs::path(kind) / file : root / kind / file);
    }
  }
  std::vector<std::string> tried;
  for (const fs::path& candidate : candidates) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      return candidate.lexically_normal();
    }
    tried.push_back(candidate.lexically_normal().string());
  }
  // The presets there are, and the nearest name to a bare one that is not among them.
  std::vector<std::string> names;
  for (const fs::path& file : preset_files(kind)) {
    names.push_back(file.stem().string());
  }
  const std::optional<std::string> closest = is_path ? std::nullopt : closest_name(name, names);
  throw InputError(
      fmt::format("no {} preset or file '{}'{} (presets: {}; looked for {})", kind, name,
                  closest ? fmt::format("; did you mean '{}'?", *closest) : "",
                  names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")),
                  fmt::join(tried, ", ")));
}

std::vector<std::filesystem::path> preset_folders(std::string_view kind) {
  namespace fs = std::filesystem;
  const std::vector<fs::path> roots = data_roots();
  std::vector<fs::path> folders;
  std::vector<fs::path> seen;
  for (const fs::path& root : roots) {
    std::error_code error;
    const fs::path folder = root / kind;
    if (!fs::is_directory(folder, error)) {
      continue;
    }
    const fs::path canonical = fs::weakly_canonical(folder, error);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      continue;
    }
    seen.push_back(canonical);
    folders.push_back(folder);
  }
  return folders;
}

std::vector<std::filesystem::path> preset_files(std::string_view kind) {
  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path& folder : preset_folders(kind)) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      const std::filesystem::path& file = entry.path();
      const bool seen = std::any_of(files.begin(), files.end(),
                                    [&](const auto& other) { return other.stem() == file.stem(); });
      if (file.extension() == ".yaml" && !seen) {
        files.push_back(file);
      }
    }
  }
  std::sort(files.begin(), files.end(),
            [](const auto& left, const auto& right) { return left.stem() < right.stem(); });
  return files;
}

}  // namespace rsim
