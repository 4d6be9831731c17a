// SPDX-License-Identifier: MIT
#pragma once
// Where a Hugging Face model id's config.json sits in the local Hub cache
// (huggingface_hub's layout: HUB/models--ORG--NAME/snapshots/REVISION/config.json, with
// refs/main naming the revision that `main` resolved to when it was downloaded).

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace rsim {

/// The Hub cache folders in huggingface_hub's order of precedence: $HF_HUB_CACHE, else
/// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
std::vector<std::filesystem::path> hf_cache_folders();

/// True for text shaped like a Hub model id, "ORG/NAME" (one slash, no file extension).
bool looks_like_model_id(std::string_view text);

/// The cached config.json of `model_id`: refs/main's snapshot where it exists, else the newest
/// snapshot holding one; nullopt when no cache folder has it.
std::optional<std::filesystem::path> find_cached_config(std::string_view model_id);

/// What `rsim import-hf ARG` reads: ARG itself when it names a file, else the cached config.json
/// of the model id ARG; a model id in no cache is a ConfigError naming the folders searched.
std::filesystem::path resolve_hf_config(std::string_view argument);

}  // namespace rsim
