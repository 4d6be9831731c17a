// SPDX-License-Identifier: MIT
#pragma once

#include "sim/spec/model.hpp"

#include <string>

namespace rsim {

/// A component as models/NAME.yaml text (docs/yaml.md "Model"), loadable by `load_model`: what
/// `rsim import-hf` prints.
std::string model_yaml(const TransformerSpec& spec);

}  // namespace rsim
