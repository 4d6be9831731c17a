// SPDX-License-Identifier: MIT
#include "sim/spec/hf_cache.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace rsim {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at startup only
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

std::optional<fs::path> config_in(const fs::path& repository) {
  std::error_code error;
  const fs::path snapshots = repository / "snapshots";
  std::ifstream ref(repository / "refs" / "main");
  std::string revision;
  if (ref && std::getline(ref, revision)) {
    const fs::path config = snapshots / revision / "config.json";
    if (fs::is_regular_file(config, error)) {
      return config;
    }
  }
  std::optional<fs::path> newest;
  fs::file_time_type newest_time;
  for (fs::directory_iterator it(snapshots, error), end; !error && it != end; it.increment(error)) {
    const fs::path config = it->path() / "config.json";
    if (!fs::is_regular_file(config, error)) {
      continue;
    }
    const fs::file_time_type time = fs::last_write_time(config, error);
    if (!error && (!newest || time > newest_time)) {
      newest = config;
      newest_time = time;
    }
  }
  return newest;
}

}  // namespace

std::vector<fs::path> hf_cache_folders() {
  if (const auto hub = environment("HF_HUB_CACHE")) {
    return {fs::path(*hub)};
  }
  if (const auto home = environment("HF_HOME")) {
    return {fs::path(*home) / "hub"};
  }
  if (const auto xdg = environment("XDG_CACHE_HOME")) {
    return {fs::path(*xdg) / "huggingface" / "hub"};
  }
  if (const auto home = environment("HOME")) {
    return {fs::path(*home) / ".cache" / "huggingface" / "hub"};
  }
  return {};
}

bool looks_like_model_id(std::string_view text) {
  const auto slash = text.find('/');
  return slash != std::string_view::npos && slash > 0 && slash + 1 < text.size() &&
         text.find('/', slash + 1) == std::string_view::npos && !text.ends_with(".json") &&
         !text.ends_with(".yaml") && text.front() != '.';
}

std::optional<fs::path> find_cached_config(std::string_view model_id) {
  if (!looks_like_model_id(model_id)) {
    return std::nullopt;
  }
  // "Qwen/Qwen3-8B" → models--Qwen--Qwen3-8B (huggingface_hub's repo_folder_name).
  const std::size_t slash = model_id.find('/');
  const std::string folder = "models--" + std::string(model_id.substr(0, slash)) + "--" +
                             std::string(model_id.substr(slash + 1));
  for (const fs::path& hub : hf_cache_folders()) {
    if (auto config = config_in(hub / folder)) {
      return config;
    }
  }
  return std::nullopt;
}

fs::path resolve_hf_config(std::string_view argument) {
  const fs::path path(argument);
  std::error_code error;
  if (fs::exists(path, error) || !looks_like_model_id(argument)) {
    return path;
  }
  if (auto config = find_cached_config(argument)) {
    return *config;
  }
  std::vector<std::string> folders;
  for (const fs::path& hub : hf_cache_folders()) {
    folders.push_back(hub.string());
  }
  throw ConfigError(
      SourceMark{std::string(argument), 0, 0},
      fmt::format("no such file, and no cached config.json of model id '{}' in {} (download it "
                  "with `huggingface-cli download {} config.json`, or pass the file's path)",
                  argument,
                  folders.empty() ? std::string("no Hub cache ($HOME is unset)")
                                  : fmt::format("{}", fmt::join(folders, ", ")),
                  argument));
}

}  // namespace rsim
