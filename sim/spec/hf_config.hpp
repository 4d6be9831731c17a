// SPDX-License-Identifier: MIT
#pragma once

#include "sim/spec/model.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace rsim {

/// True for a path rsim reads as a Hugging Face config.json rather than a model YAML (".json").
bool is_hf_config(const std::filesystem::path& path);

/// Builds a component from a Hugging Face config.json: sizes from its keys (GPT-2 names too),
/// what a config.json does not say (gated MLP, norm, positions) from rsim's table of model_types.
/// `name` overrides the display name (default: `_name_or_path`, else the folder of a
/// config.json, else the file stem). Experts, windows and latent attention follow the model
/// type's code (hf_architecture.hpp). Unreadable files, JSON syntax errors (file:line:col),
/// missing or mistyped keys, unknown model_types and features rsim does not model are
/// ConfigErrors naming the file.
TransformerSpec import_hf_config(const std::filesystem::path& path, std::string_view name = {});

/// The same from JSON text; `file_label` names it in messages and in the spec's `file`.
TransformerSpec parse_hf_config(const std::string& text, const std::string& file_label,
                                std::string_view name = {});

}  // namespace rsim
