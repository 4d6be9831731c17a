// SPDX-License-Identifier: MIT
#include "sim/report/measured_report.hpp"

#include "sim/report/table.hpp"

#include <fmt/format.h>

namespace rsim {

void write_measured_text(std::ostream& out, const std::vector<KernelOnRoofs>& kernels,
                         const Roofs& roofs) {
  const BytesPerSecond dram = *roofs.main_memory().bandwidth;
  out << fmt::format(
      "Measured kernels (ncu) on the roofs: intensity = FLOPs / DRAM bytes, achieved = FLOPs / "
      "duration; % of the {} slope = (bytes / duration) / {}, % of roof = achieved / the path's "
      "peak\n",
      roofs.main_memory().name, format_quantity(dram.si(), Dimension::byte_rate));
  using Align = TextTable::Align;
  TextTable table({{"kernel", Align::left},
                   {"ID", Align::right, 2},
                   {"FLOPs", Align::right, 3},
                   {"from", Align::left, 4},
                   {"DRAM bytes"},
                   {"duration"},
                   {"FLOP/B", Align::right, 1},
                   {"achieved"},
                   {"bandwidth"},
                   {"% of DRAM"},
                   {"roof", Align::left},
                   {"% of roof"}});
  for (const KernelOnRoofs& kernel : kernels) {
    table.add_row({kernel.kernel.name, kernel.kernel.id, format_count(kernel.flops.si()),
                   kernel.flops_source,
                   format_quantity(kernel.kernel.dram_bytes.si(), Dimension::bytes),
                   format_quantity(kernel.kernel.duration.si(), Dimension::seconds),
                   format_plain(kernel.intensity),
                   format_quantity(kernel.achieved.si(), Dimension::flop_rate),
                   format_quantity(kernel.achieved_bandwidth.si(), Dimension::byte_rate),
                   fmt::format("{:.1f} %", 100.0 * kernel.dram_fraction), kernel.compute_path,
                   fmt::format("{:.1f} %", 100.0 * kernel.compute_fraction)});
  }
  table.print(out, "  ");
}

nlohmann::ordered_json measured_to_json(const std::vector<KernelOnRoofs>& kernels) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (const KernelOnRoofs& kernel : kernels) {
    records.push_back({{"kernel", kernel.kernel.name},
                       {"id", kernel.kernel.id},
                       {"flops", kernel.flops.si()},
                       {"flops_source", kernel.flops_source},
                       {"dram_bytes", kernel.kernel.dram_bytes.si()},
                       {"duration_s", kernel.kernel.duration.si()},
                       {"intensity_flop_per_byte", kernel.intensity},
                       {"achieved_flop_per_s", kernel.achieved.si()},
                       {"achieved_bytes_per_s", kernel.achieved_bandwidth.si()},
                       {"dram_fraction", kernel.dram_fraction},
                       {"compute_path", kernel.compute_path},
                       {"compute_fraction", kernel.compute_fraction}});
  }
  return records;
}

}  // namespace rsim
