// SPDX-License-Identifier: MIT
#pragma once
// Percentiles of a sample, as NumPy computes them by default: the serving simulation's latency
// percentiles and the validation set's median errors.

#include <vector>

namespace rsim {

/// Percentile `p` (0…100) of sorted `values`, interpolated linearly between ranks (NumPy's
/// default, "linear"): values[(n − 1)·p/100]; 0 for no values.
double percentile(const std::vector<double>& sorted, double p);

}  // namespace rsim
