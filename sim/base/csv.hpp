// SPDX-License-Identifier: MIT
#pragma once
// Reading CSV input (Nsight Compute exports, measurements to calibrate against).

#include <string>
#include <vector>

namespace rsim {

/// Splits one CSV line into its fields (RFC 4180 quoting: "a,b" is one field, "" inside quotes
/// is a quote; a trailing \r is dropped). An unclosed quote is an InputError at file:line.
std::vector<std::string> split_csv(const std::string& line, const std::string& file,
                                   int line_number);

}  // namespace rsim
