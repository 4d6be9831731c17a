// SPDX-License-Identifier: MIT
#include "sim/analysis/measured.hpp"

#include "sim/base/csv.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>

namespace rsim {
namespace {

// "kernels.csv:7: error: ..." — CSV rows have no useful column, so none is printed.
[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw InputError(fmt::format("{}:{}: error: {}", file, line, message));
}

// What rsim reads from a metric.
enum class Role { dram_read, dram_write, dram_total, duration, flops };
enum class MetricKind { bytes, seconds, count };

struct MetricSpec {
  std::string_view name;
  Role role;
  MetricKind quantity;
  double flops_per_instruction;  // Role::flops: an FMA is 2 FLOPs, an add or a mul 1
};

// Nsight Compute's DRAM and throughput metrics (Kernel Profiling Guide, docs.nvidia.com/
// nsight-compute) and the SASS FLOP counters of the NERSC roofline method
// (Yang et al., "Hierarchical Roofline Analysis", 2020: FLOPs = add + mul + 2 × fma per
// precision). ncu's thread-level counters count one operation per thread per instruction.
constexpr std::array<MetricSpec, 13> kMetrics{{
    {"dram__bytes_read.sum", Role::dram_read, MetricKind::bytes, 0},
    {"dram__bytes_write.sum", Role::dram_write, MetricKind::bytes, 0},
    {"dram__bytes.sum", Role::dram_total, MetricKind::bytes, 0},
    {"gpu__time_duration.sum", Role::duration, MetricKind::seconds, 0},
    {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", Role::flops, MetricKind::count, 2},
    {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", Role::flops, MetricKind::count, 2},
    {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_dmul_pred_on.sum", Role::flops, MetricKind::count, 1},
    {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", Role::flops, MetricKind::count, 2},
}};

struct UnitScale {
  std::string_view unit;
  MetricKind quantity;
  double to_si;
};

// ncu's unit strings: decimal prefixes on bytes ("Kbyte" = 10³ B), nsecond/usecond/msecond for
// `--print-units auto` (newer versions print ns/us/ms), inst or nothing for counts.
constexpr std::array<UnitScale, 15> kUnits{{
    {"byte", MetricKind::bytes, 1.0},
    {"Kbyte", MetricKind::bytes, 1e3},
    {"Mbyte", MetricKind::bytes, 1e6},
    {"Gbyte", MetricKind::bytes, 1e9},
    {"Tbyte", MetricKind::bytes, 1e12},
    {"nsecond", MetricKind::seconds, 1e-9},
    {"usecond", MetricKind::seconds, 1e-6},
    {"msecond", MetricKind::seconds, 1e-3},
    {"second", MetricKind::seconds, 1.0},
    {"ns", MetricKind::seconds, 1e-9},
    {"us", MetricKind::seconds, 1e-6},
    {"ms", MetricKind::seconds, 1e-3},
    {"s", MetricKind::seconds, 1.0},
    {"inst", MetricKind::count, 1.0},
    {"", MetricKind::count, 1.0},
}};

std::string units_of(MetricKind quantity) {
  std::string names;
  for (const UnitScale& unit : kUnits) {
    if (unit.quantity == quantity) {
      names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", unit.unit);
    }
  }
  return names;
}

struct Columns {
  std::size_t count = 0;
  std::size_t id = 0;
  std::size_t kernel = 0;
  std::size_t metric = 0;
  std::size_t unit = 0;
  std::size_t value = 0;
};

std::optional<Columns> find_columns(const std::vector<std::string>& header) {
  const auto column = [&](std::string_view name) -> std::optional<std::size_t> {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto id = column("ID");
  const auto kernel = column("Kernel Name");
  const auto metric = column("Metric Name");
  const auto unit = column("Metric Unit");
  const auto value = column("Metric Value");
  if (!id || !kernel || !metric || !unit || !value) {
    return std::nullopt;
  }
  return Columns{header.size(), *id, *kernel, *metric, *unit, *value};
}

double parse_value(const std::string& text, const std::string& metric, const std::string& file,
                   int number) {
  if (text == "n/a") {
    fail(file, number, fmt::format("{} was not collected (\"n/a\")", metric));
  }
  std::string digits;
  for (char character : text) {
    if (character != ',') {  // thousands separators: "10,240,000"
      digits += character;
    }
  }
  double value = 0.0;
  const char* const end = digits.data() + digits.size();
  const auto [rest, error] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || error != std::errc{} || rest != end || !std::isfinite(value) ||
      value < 0.0) {
    fail(file, number,
         fmt::format("{}: \"{}\" is not a non-negative number (\"1,234.5\" or \"1.2e+06\")", metric,
                     text));
  }
  return value;
}

struct KernelRows {
  MeasuredKernel kernel;
  std::map<std::string, std::pair<double, int>> metrics;  // name → (SI value, line)
};

MeasuredKernel finish(const KernelRows& rows, const std::string& file) {
  MeasuredKernel kernel = rows.kernel;
  const auto value = [&](std::string_view name) -> std::optional<double> {
    const auto it = rows.metrics.find(std::string(name));
    return it == rows.metrics.end() ? std::nullopt : std::optional(it->second.first);
  };
  const std::string who = fmt::format("kernel \"{}\" (ID {})", kernel.name, kernel.id);
  const auto duration = value("gpu__time_duration.sum");
  if (!duration || *duration <= 0.0) {
    fail(file, kernel.line,
         fmt::format("{}: {} gpu__time_duration.sum (collect it: ncu --metrics "
                     "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum)",
                     who, duration ? "zero" : "no"));
  }
  kernel.duration = Seconds(*duration);
  const auto read = value("dram__bytes_read.sum");
  const auto write = value("dram__bytes_write.sum");
  const auto total = value("dram__bytes.sum");
  if (read && write) {
    kernel.dram_bytes = Bytes(*read + *write);
  } else if (total) {
    kernel.dram_bytes = Bytes(*total);
  } else {
    fail(file, kernel.line,
         fmt::format("{}: no DRAM bytes (expected dram__bytes_read.sum and "
                     "dram__bytes_write.sum, or dram__bytes.sum)",
                     who));
  }
  double flops = 0.0;
  bool counted = false;
  for (const MetricSpec& spec : kMetrics) {
    if (const auto count = value(spec.name); spec.role == Role::flops && count) {
      flops += spec.flops_per_instruction * *count;
      counted = true;
    }
  }
  if (counted) {
    kernel.sass_flops = Flops(flops);
  }
  // Each value is finite, but sums of values near 1e308 are not (issue 23 #1: "inf B/s").
  if (!std::isfinite(kernel.dram_bytes.si()) || !std::isfinite(flops)) {
    fail(file, kernel.line,
         fmt::format("{}: its DRAM bytes or FLOPs add up beyond a double's range", who));
  }
  return kernel;
}

void add_row(KernelRows& rows, const std::vector<std::string>& fields, const Columns& columns,
             const std::string& file, int number) {
  const std::string& metric = fields[columns.metric];
  const auto spec = std::find_if(kMetrics.begin(), kMetrics.end(),
                                 [&](const MetricSpec& known) { return known.name == metric; });
  if (spec == kMetrics.end()) {
    return;  // other metrics (throughput percentages, occupancy) are not needed here
  }
  const std::string& unit_text = fields[columns.unit];
  const auto unit = std::find_if(kUnits.begin(), kUnits.end(), [&](const UnitScale& known) {
    return known.unit == unit_text && known.quantity == spec->quantity;
  });
  if (unit == kUnits.end()) {
    fail(file, number,
         fmt::format("{}: unknown unit \"{}\" (expected one of {})", metric, unit_text,
                     units_of(spec->quantity)));
  }
  const double si = parse_value(fields[columns.value], metric, file, number) * unit->to_si;
  if (!std::isfinite(si)) {
    fail(file, number,
         fmt::format("{}: {} {} is beyond a double's range in SI units", metric,
                     fields[columns.value], unit_text));
  }
  const auto [it, inserted] = rows.metrics.emplace(metric, std::pair{si, number});
  if (!inserted && it->second.first != si) {
    fail(file, number,
         fmt::format("{} of kernel ID {} differs from line {} ({} vs {} in SI units)", metric,
                     rows.kernel.id, it->second.second, si, it->second.first));
  }
}

}  // namespace

std::vector<MeasuredKernel> parse_ncu_csv(std::istream& in, const std::string& file) {
  std::optional<Columns> columns;
  std::vector<KernelRows> kernels;
  std::map<std::string, std::size_t> by_id;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line == "\r") {
      continue;
    }
    if (!columns) {
      // Before the header come ncu's "==PROF==" lines and the profiled program's output.
      if (line.front() != '"') {
        continue;
      }
      const std::vector<std::string> header = split_csv(line, file, number);
      columns = find_columns(header);
      if (!columns && std::find(header.begin(), header.end(), "Kernel Name") != header.end()) {
        fail(file, number,
             "a header without \"Metric Name\", \"Metric Unit\", \"Metric Value\": rsim reads "
             "ncu's long layout (ncu --csv --page details), not --page raw");
      }
      continue;
    }
    const std::vector<std::string> fields = split_csv(line, file, number);
    if (fields.size() != columns->count) {
      fail(file, number,
           fmt::format("expected {} fields like the header, found {}", columns->count,
                       fields.size()));
    }
    const std::string& id = fields[columns->id];
    const auto [it, inserted] = by_id.emplace(id, kernels.size());
    if (inserted) {
      kernels.push_back({MeasuredKernel{id, fields[columns->kernel], number, {}, {}, {}}, {}});
    }
    add_row(kernels[it->second], fields, *columns, file, number);
  }
  if (!columns) {
    fail(file, std::max(number, 1),
         "no ncu CSV header (expected a line with \"ID\", \"Kernel Name\", \"Metric Name\", "
         "\"Metric Unit\", \"Metric Value\": ncu --csv --page details)");
  }
  if (kernels.empty()) {
    fail(file, number, "the header is followed by no kernel rows");
  }
  std::vector<MeasuredKernel> result;
  result.reserve(kernels.size());
  for (const KernelRows& rows : kernels) {
    result.push_back(finish(rows, file));
  }
  return result;
}

std::vector<MeasuredKernel> load_ncu_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw InputError(fmt::format("{}: error: cannot open the ncu CSV file", path.string()));
  }
  return parse_ncu_csv(in, path.string());
}

KernelMatch parse_kernel_match(const std::string& text) {
  const std::size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw InputError(fmt::format(
        "--match {}: expected KERNEL_SUBSTRING=OP, e.g. gemm_0=prefix/layer/gate_up_proj", text));
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

namespace {

// The row of the run's op a --match names: its qualified name, "stage/name", or a unique name.
std::size_t find_op_row(const RunResult& run, const KernelMatch& match) {
  std::vector<std::size_t> rows;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const Op& op = run.graph.op(run.table.order[row]);
    if (op.qualified_name() == match.op) {
      return row;
    }
    if (op.name == match.op || op.stage + "/" + op.name == match.op) {
      rows.push_back(row);
    }
  }
  if (rows.size() == 1) {
    return rows.front();
  }
  std::vector<std::string> names;
  for (std::size_t row : rows) {
    names.push_back(run.graph.op(run.table.order[row]).qualified_name());
  }
  throw InputError(rows.empty()
                       ? fmt::format("--match {}={}: no op {} in the run (names look like "
                                     "prefix/layer/gate_up_proj)",
                                     match.pattern, match.op, match.op)
                       : fmt::format("--match {}={}: {} names several ops ({}); give the full name",
                                     match.pattern, match.op, match.op, fmt::join(names, ", ")));
}

}  // namespace

std::vector<KernelOnRoofs> place_kernels(const std::vector<MeasuredKernel>& kernels,
                                         const Roofs& roofs, const RunResult* run,
                                         const std::vector<KernelMatch>& matches,
                                         const std::string& file) {
  RSIM_CHECK(run != nullptr || matches.empty(), "--match needs a run");
  std::vector<std::size_t> match_rows;
  for (const KernelMatch& match : matches) {
    match_rows.push_back(find_op_row(*run, match));
    const bool used = std::any_of(kernels.begin(), kernels.end(), [&](const MeasuredKernel& k) {
      return k.name.find(match.pattern) != std::string::npos;
    });
    if (!used) {
      throw InputError(fmt::format("--match {}={}: no kernel in {} has \"{}\" in its name",
                                   match.pattern, match.op, file, match.pattern));
    }
  }
  const BytesPerSecond dram = *roofs.main_memory().bandwidth;
  std::vector<KernelOnRoofs> placed;
  for (const MeasuredKernel& kernel : kernels) {
    KernelOnRoofs result;
    result.kernel = kernel;
    const auto match = std::find_if(matches.begin(), matches.end(), [&](const KernelMatch& m) {
      return kernel.name.find(m.pattern) != std::string::npos;
    });
    if (match != matches.end()) {
      const std::size_t row = match_rows[static_cast<std::size_t>(match - matches.begin())];
      const Op& op = run->graph.op(run->table.order[row]);
      result.flops = run->table.costs[row].flops;  // one launch = one instance of the op
      result.flops_source = "op " + op.qualified_name();
      result.op_row = row;
      result.compute_path = op.compute_path;
    } else if (kernel.sass_flops) {
      result.flops = *kernel.sass_flops;
      result.flops_source = "sass";
      result.compute_path = roofs.vector_path;
    } else {
      fail(file, kernel.line,
           fmt::format("kernel \"{}\" (ID {}) has no FLOPs: collect "
                       "sm__sass_thread_inst_executed_op_{{ffma,fadd,fmul}}_pred_on.sum "
                       "(CUDA-core work){}",
                       kernel.name, kernel.id,
                       run != nullptr ? " or match it to an rsim op with --match PATTERN=OP "
                                        "(tensor-core work)"
                                      : " or place it against a scenario's ops with rsim run "
                                        "--measured ... --match PATTERN=OP"));
    }
    const ComputePath* path = roofs.find_path(result.compute_path);
    RSIM_CHECK(path != nullptr, "an op's compute path is on the roofs");
    result.achieved = FlopsPerSecond(result.flops.si() / kernel.duration.si());
    result.achieved_bandwidth = BytesPerSecond(kernel.dram_bytes.si() / kernel.duration.si());
    if (!std::isfinite(result.achieved.si()) || !std::isfinite(result.achieved_bandwidth.si())) {
      // A duration near zero against large counts (a fuzz finding: 1e-310 s) overflows.
      fail(file, kernel.line,
           fmt::format("kernel \"{}\" (ID {}): its FLOPs or bytes over its {} s duration are "
                       "not a finite rate: check gpu__time_duration.sum's unit",
                       kernel.name, kernel.id, kernel.duration.si()));
    }
    result.intensity =
        kernel.dram_bytes.si() > 0.0 ? result.flops.si() / kernel.dram_bytes.si() : 0.0;
    result.dram_fraction = result.achieved_bandwidth / dram;
    result.compute_fraction = result.achieved / path->peak;
    placed.push_back(result);
  }
  return placed;
}

}  // namespace rsim
