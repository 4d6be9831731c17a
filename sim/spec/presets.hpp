// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string_view>

namespace rsim {

/// Finds a preset ("thor_t5000" of kind "hardware") or a file path. A name with a '/' or a
/// ".yaml" or ".json" suffix (a Hugging Face config.json as a model) is a path, taken relative to
/// the referring file's folder (or the working directory when `referrer` is empty). A bare name is
/// looked up as KIND/NAME.yaml next to the referrer (REF/../KIND, REF/.), then under the working
/// directory, then under $RSIM_DATA_DIR, then under the source tree rsim was built from. InputError
/// lists every place tried.
std::filesystem::path find_preset(std::string_view name, std::string_view kind,
                                  const std::filesystem::path& referrer);

}  // namespace rsim
