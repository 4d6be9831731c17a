// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace rsim {

/// Finds a preset ("thor_t5000" of kind "hardware") or a file path. A name with a '/' or a
/// ".yaml" or ".json" suffix (a Hugging Face config.json as a model) is a path, taken relative to
/// the referring file's folder (or the working directory when `referrer` is empty). A bare name is
/// looked up as KIND/NAME.yaml next to the referrer (REF/../KIND, REF/.), then under the working
/// directory, then under $RSIM_DATA_DIR, then under an installed binary's PREFIX/share/rsim, then
/// under the source tree rsim was built from. InputError
/// lists every place tried.
std::filesystem::path find_preset(std::string_view name, std::string_view kind,
                                  const std::filesystem::path& referrer);

/// The folders a bare preset name of KIND is looked up in that exist, in find_preset's order
/// (./KIND, $RSIM_DATA_DIR/KIND, an installed binary's PREFIX/share/rsim/KIND, the source tree's
/// KIND), each once.
std::vector<std::filesystem::path> preset_folders(std::string_view kind);

/// The YAML presets of KIND in those folders, a name once (the first folder's), by name.
std::vector<std::filesystem::path> preset_files(std::string_view kind);

}  // namespace rsim
