// SPDX-License-Identifier: MIT
#pragma once
// The terms `rsim calibrate` fits (calibrate.hpp): each measurement's expected time as a sum of
// device ops (count × (the longest roof's T · 1/η + the launch)) and collectives (count ×
// (α + T_bandwidth · 1/η)), linear in the parameters once each op's binding roof is fixed. Shared
// by the CSV layouts of calibrate.cpp and the Nsight Compute export of calibrate_ncu.cpp.

#include "sim/explore/calibrate.hpp"
#include "sim/graph/op.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rsim::calibration {

/// An InputError "file:line: error: message".
[[noreturn]] void fail(const std::string& file, int line, const std::string& message);

/// A device op of a measurement: count × (max over its roofs of T · x[parameter] + the launch);
/// a GEMM of two activations (`serial`: serial_math_memory) adds its compute roof, roofs[0], to
/// the longest of the others instead, as its expected time does.
struct DeviceTerm {
  double count = 0.0;
  std::vector<std::pair<std::size_t, double>> roofs;  // (parameter, T at the roof itself)
  bool launches = false;
  bool serial = false;
};

// A collective on one tier: count × (x[latency] + T_bandwidth · x[fraction]); its steps ·
// t_hop go to the measurement's fixed time.
struct CollectiveTerm {
  double count = 0.0;
  double bandwidth = 0.0;
  std::size_t fraction = 0;
  std::size_t latency = 0;
};

struct Measurement {
  std::string label;
  double measured = 0.0;
  std::vector<DeviceTerm> devices;
  std::vector<CollectiveTerm> collectives;
  // What no parameter moves: collectives' hop latencies, and collectives over several tiers.
  double fixed = 0.0;
};

// The parameters in play: fractions as 1/η (so the expected time is linear in them), times in s.
class Parameters {
 public:
  std::size_t index(const std::string& key, bool fraction, double prior) {
    const auto found = indices_.find(key);
    if (found != indices_.end()) {
      return found->second;
    }
    list_.push_back({key, fraction, prior, prior, 0});
    values_.push_back(fraction ? 1.0 / prior : prior);
    indices_[key] = list_.size() - 1;
    return list_.size() - 1;
  }
  std::vector<CalibratedParameter>& list() { return list_; }
  [[nodiscard]] const std::vector<double>& values() const { return values_; }

 private:
  std::vector<CalibratedParameter> list_;
  std::vector<double> values_;
  std::map<std::string, std::size_t> indices_;
};

/// A device op's roofs: its compute path (a fused attention pass's own fraction) and every
/// memory tier with a time.
DeviceTerm device_term(const Op& op, double count, double t_math,
                       const std::vector<double>& tier_times, const Roofs& roofs,
                       Parameters& parameters);

}  // namespace rsim::calibration
