// SPDX-License-Identifier: MIT
#pragma once
// Which file a model comes from: a model YAML or a Hugging Face config.json (hf_config.hpp).

#include "sim/spec/config.hpp"
#include "sim/spec/model.hpp"

#include <filesystem>
#include <functional>
#include <string_view>

namespace rsim {

/// Finds a preset or file by name: given "gemma_2b" and kind "models", returns the first
/// existing models/gemma_2b.yaml along the search path; a path to an existing file is returned
/// as is. InputError if nothing is found.
using PresetResolver = std::function<std::filesystem::path(
    std::string_view name, std::string_view kind, const std::filesystem::path& referrer)>;

/// Loads a component file: a model YAML, or a Hugging Face config.json (see
/// sim/spec/hf_config.hpp). YAML is parsed through `files` where given (here and in load_model).
TransformerSpec load_component(const std::filesystem::path& path, ConfigFiles* files = nullptr);
/// Loads a model file: a component (one stage, tokens set later by the workload; a YAML or a
/// Hugging Face config.json) or a composite with `stages:` whose components are resolved
/// through `resolve`.
ModelSpec load_model(const std::filesystem::path& path, const PresetResolver& resolve,
                     ConfigFiles* files = nullptr);

}  // namespace rsim
