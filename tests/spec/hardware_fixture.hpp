// SPDX-License-Identifier: MIT
#pragma once
// What the hardware tests read off a shipped preset: its roofs, a path's ridge and peak, a tier.

#include "sim/analysis/thresholds.hpp"
#include "sim/spec/hardware.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace rsim::test {

/// The roofs of hardware/PRESET.yaml in `mode` (the default mode when empty).
inline Roofs roofs_of(const std::string& preset, const std::string& mode = "",
                      const RoofOverrides& overrides = {}) {
  const auto spec = load_hardware(source_path("hardware/" + preset + ".yaml"));
  return resolve_roofs(spec, mode, overrides);
}

/// A compute path's ridge against main memory, FLOP/B.
inline double ridge_of(const Roofs& roofs, const std::string& path) {
  return ridge(roofs.find_path(path)->peak, *roofs.main_memory().bandwidth);
}

/// A compute path's peak in FLOP/s (the test fails where the path is missing).
inline double peak_of(const Roofs& roofs, const std::string& path) {
  const auto* found = roofs.find_path(path);
  REQUIRE(found != nullptr);
  return found->peak.si();
}

/// A network tier (the test fails where it is missing).
inline const NetworkTier& network_of(const Roofs& roofs, const std::string& tier) {
  const auto* found = roofs.find_network(tier);
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace rsim::test
