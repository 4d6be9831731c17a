// SPDX-License-Identifier: MIT
#pragma once

#include "sim/analysis/probes.hpp"
#include "sim/analysis/request.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace rsim {

/// One row per op (totals over its instances), SI units, RFC 4180 quoting.
void write_run_csv(std::ostream& out, const RunResult& result);
/// One row per (compute path, memory tier): peak, bandwidth, ridge.
void write_roofs_csv(std::ostream& out, const Roofs& roofs);
/// A header and one row with the matmul's figures.
void write_matmul_csv(std::ostream& out, const MatmulResult& result);
/// Records as CSV: nested objects become dotted columns ("bytes_by_tier.dram"), the header is
/// every column in order of first appearance, a record lacking one leaves it empty.
void write_records_csv(std::ostream& out, const std::vector<nlohmann::ordered_json>& records);
/// One CSV field (RFC 4180): quoted, with inner quotes doubled, if it holds a comma, a quote or a
/// newline.
std::string csv_field(std::string_view text);
/// A header and one row for any flat record (JSON object of scalars).
void write_record_csv(std::ostream& out, const nlohmann::ordered_json& record);
/// A header and one row with the collective's figures.
void write_collective_csv(std::ostream& out, const CollectiveResult& result);
/// One row per variant (baseline first).
void write_whatif_csv(std::ostream& out, const std::vector<RunResult>& runs);

}  // namespace rsim
