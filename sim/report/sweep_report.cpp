// SPDX-License-Identifier: MIT
#include "sim/report/sweep_report.hpp"

#include "sim/base/error.hpp"
#include "sim/report/csv.hpp"
#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;
using Align = TextTable::Align;

std::string fixed_values(const SweepResult& result, const SweepCrossover& crossover) {
  std::vector<std::string> parts;
  for (std::size_t axis = 0; axis < result.axes.size(); ++axis) {
    if (!crossover.fixed[axis].empty()) {
      parts.push_back(result.axes[axis].key + "=" + crossover.fixed[axis]);
    }
  }
  return parts.empty() ? std::string("-") : fmt::format("{}", fmt::join(parts, ", "));
}

// Whether some point is a decode request (its TTFT, TPOT and tokens/s get columns).
bool any_request(const SweepResult& result) {
  return std::any_of(result.points.begin(), result.points.end(),
                     [](const SweepPoint& point) { return point.request.si() > 0.0; });
}

Json point_record(const SweepResult& result, std::size_t index) {
  const SweepPoint& point = result.points[index];
  Json values = Json::object();
  for (std::size_t axis = 0; axis < result.axes.size(); ++axis) {
    values[result.axes[axis].key] = result.value(index, axis);
  }
  if (!point.valid()) {
    return Json{
        {"values", values},
        {"error", point.evaluated ? Json(result.label(point.error)) : Json("not evaluated")}};
  }
  const SweepFigures& total = point.total;
  Json record{{"values", values},
              {"t_lower_s", total.t_lower.si()},
              {"t_expected_s", total.t_expected.si()},
              {"t_upper_s", total.t_upper.si()},
              {"t_math_s", total.t_math.si()},
              {"t_mem_s", total.t_mem.si()},
              {"t_net_s", total.t_net.si()},
              {"bound", result.label(total.roof)},
              {"memory_per_device_bytes", point.memory.si()},
              {"capacity_bytes", point.capacity.si()},
              {"fits", point.fits()},
              {"error", nullptr}};
  if (point.request.si() > 0.0) {
    // A decode request: what a user waits (expected), beside the step's bounds above.
    record["ttft_s"] = point.ttft.si();
    record["tpot_s"] = point.tpot.si();
    record["request_s"] = point.request.si();
    record["tokens_per_s"] = point.tokens_per_s();
  }
  return record;
}

std::optional<std::size_t> numeric_axis(const SweepResult& result) {
  for (std::size_t axis = 0; axis < result.axes.size(); ++axis) {
    if (result.axes[axis].numeric) {
      return axis;
    }
  }
  return std::nullopt;
}

// A series is the values of every axis but x, joined ("bf16", "shard_d · 2 over ici").
std::string series_name(const SweepResult& result, const std::vector<std::string>& values,
                        std::size_t x_axis) {
  std::vector<std::string> parts;
  for (std::size_t axis = 0; axis < values.size(); ++axis) {
    if (axis != x_axis) {
      parts.push_back(values[axis]);
    }
  }
  return parts.empty() ? result.scenario : fmt::format("{}", fmt::join(parts, " · "));
}

}  // namespace

namespace {

// A swept key with what it counts, for an axis title: "workload.batch (sequences)".
std::string axis_label(const std::string& key) {
  static const std::array<std::pair<std::string_view, std::string_view>, 7> kUnits{{
      {"batch", "sequences"},
      {"seq_len", "tokens"},
      {"context", "tokens"},
      {"decode_steps", "output tokens"},
      {"microbatches", "microbatches"},
      {"d_model", "model width"},
      {"devices", "devices"},
  }};
  const std::string_view last = std::string_view(key).substr(key.rfind('.') + 1);
  for (const auto& [name, unit] : kUnits) {
    if (last == name) {
      return fmt::format("{} ({})", key, unit);
    }
  }
  return key;
}

}  // namespace

SeriesChart sweep_chart(const SweepResult& result) {
  const auto x_axis = numeric_axis(result);
  if (!x_axis) {
    throw InputError("--plot: a sweep chart needs a numeric axis (e.g. workload.batch=1..64:log2)");
  }
  const SweepAxis& axis = result.axes[*x_axis];
  // x values valid for every series (a plan that splits the batch skips odd batches).
  std::vector<std::string> names;
  std::map<std::string, std::map<std::int64_t, const SweepPoint*>> by_series;
  for (std::size_t index = 0; index < result.points.size(); ++index) {
    const SweepPoint& point = result.points[index];
    const std::string name = series_name(result, result.values(index), *x_axis);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
    if (point.valid()) {
      by_series[name][std::stoll(result.value(index, *x_axis))] = &point;
    }
  }
  std::vector<std::int64_t> xs;
  for (const std::string& value : axis.values) {
    const std::int64_t x = std::stoll(value);
    const bool everywhere = std::all_of(names.begin(), names.end(), [&](const std::string& name) {
      return by_series[name].contains(x);
    });
    if (everywhere && std::find(xs.begin(), xs.end(), x) == xs.end()) {
      xs.push_back(x);
    }
  }
  std::sort(xs.begin(), xs.end());
  SeriesChart chart;
  chart.title = result.scenario_name.empty() ? result.scenario : result.scenario_name;
  chart.subtitle = fmt::format(
      "rsim sweep · {} · the whole run's time per device: lower bound "
      "(solid) … upper bound (dashed) per series",
      result.scenario);
  chart.x_label = axis_label(axis.key);
  chart.y_label = "time per run, per device";
  double time_low = std::numeric_limits<double>::infinity();
  double time_high = 0.0;
  for (const std::string& name : names) {
    Series series{name, {}, {}, {}, {}, {}};
    for (std::int64_t x : xs) {
      const SweepPoint& point = *by_series[name][x];
      const SweepFigures& total = point.total;
      series.fits.push_back(point.fits());
      series.roofs.push_back(result.label(total.roof));
      series.x.push_back(static_cast<double>(x));
      series.lower_s.push_back(total.t_lower.si());
      series.upper_s.push_back(total.t_upper.si());
      time_low = std::min(time_low, total.t_lower.si());
      time_high = std::max(time_high, total.t_upper.si());
    }
    chart.series.push_back(std::move(series));
  }
  // Log axes when the values span a decade or more (doubling batches, growing times).
  chart.log_x = !xs.empty() && xs.front() > 0 && xs.back() >= 8 * xs.front();
  chart.log_y = time_low > 0.0 && time_high >= 10.0 * time_low;
  for (const SweepCrossover& crossover : result.crossovers) {
    const auto first = std::find(names.begin(), names.end(), crossover.from);
    const auto second = std::find(names.begin(), names.end(), crossover.to);
    if (crossover.kind == SweepCrossover::Kind::fastest && first != names.end() &&
        second != names.end()) {
      chart.marked.push_back({static_cast<std::size_t>(first - names.begin()),
                              static_cast<std::size_t>(second - names.begin()),
                              static_cast<double>(crossover.at), crossover.t_after.si()});
    }
  }
  return chart;
}

void write_sweep_text(std::ostream& out, const SweepResult& result) {
  std::vector<std::string> axes;
  for (const SweepAxis& axis : result.axes) {
    axes.push_back(fmt::format("{} ({} values)", axis.key, axis.values.size()));
  }
  write_wrapped(out,
                fmt::format("Sweep of {} over {}: {} points on {} threads{}", result.scenario,
                            fmt::join(axes, " × "), result.points.size(), result.threads,
                            result.cancelled ? " (cancelled: the points finished so far)" : ""));
  out << '\n';
  // No network column where no point has network time (one device).
  const bool network = std::any_of(
      result.points.begin(), result.points.end(),
      [](const SweepPoint& point) { return point.valid() && point.total.t_net.si() > 0.0; });
  std::vector<TextTable::Column> columns;
  for (const SweepAxis& axis : result.axes) {
    columns.push_back({axis.key, axis.numeric ? Align::right : Align::left});
  }
  columns.push_back({"lower"});
  columns.push_back({"expected"});
  columns.push_back({"upper", Align::right, 1});
  columns.push_back({"ΣT_math", Align::right, 3});
  columns.push_back({"ΣT_mem", Align::right, 2});
  if (network) {
    columns.push_back({"ΣT_net", Align::right, 4});
  }
  columns.push_back({"bound", Align::left});
  columns.push_back({"memory/device"});
  columns.push_back({"fits", Align::left});
  // Decode requests: what a user waits and the tokens/s (expected), beside the step's bounds.
  const bool requests = any_request(result);
  if (requests) {
    columns.push_back({"TTFT", Align::right, 5});
    columns.push_back({"TPOT", Align::right, 5});
    columns.push_back({"tokens/s", Align::right, 6});
  }
  TextTable table(columns);
  std::vector<std::string> errors;
  for (std::size_t index = 0; index < result.points.size(); ++index) {
    const SweepPoint& point = result.points[index];
    if (!point.evaluated) {
      continue;
    }
    std::vector<std::string> cells = result.values(index);
    if (point.error != 0) {
      errors.push_back(fmt::format("{}: {}", fmt::join(cells, ", "), result.label(point.error)));
      const std::size_t tail = requests ? 6 : 3;
      cells.insert(cells.end(), columns.size() - cells.size() - tail, "-");
      cells.insert(cells.end(), {"invalid", "-", "-"});
      if (requests) {
        cells.insert(cells.end(), {"-", "-", "-"});
      }
    } else {
      const SweepFigures& total = point.total;
      cells.insert(cells.end(),
                   {seconds(total.t_lower), seconds(total.t_expected), seconds(total.t_upper),
                    seconds(total.t_math), seconds(total.t_mem)});
      if (network) {
        cells.push_back(seconds(total.t_net));
      }
      cells.insert(cells.end(),
                   {result.label(total.roof), format_quantity(point.memory.si(), Dimension::bytes),
                    point.fits() ? "yes" : "NO"});
      if (requests) {
        const bool request = point.request.si() > 0.0;
        cells.insert(cells.end(),
                     {request ? seconds(point.ttft) : std::string("-"),
                      request ? seconds(point.tpot) : std::string("-"),
                      request ? format_plain(point.tokens_per_s()) : std::string("-")});
      }
    }
    table.add_row(cells);
  }
  table.print(out, "  ");
  for (const std::string& error : errors) {
    out << "  invalid point " << error << '\n';
  }
  if (result.crossovers.empty()) {
    return;
  }
  out << "\nCrossovers along " <<
      [&] {
        for (const SweepAxis& axis : result.axes) {
          if (axis.numeric) {
            return axis.key;
          }
        }
        return std::string();
      }()
      << " (bisection on the cost model between grid values; roof: the series' lower bound "
         "before and at the change; fastest: the old and new winner's "
      << to_string(result.rank_by) << " time at the change)\n";
  TextTable crossings({{"change", Align::left},
                       {"with", Align::left},
                       {"at"},
                       {"before"},
                       {"after"},
                       {"evaluations"}});
  for (const SweepCrossover& crossover : result.crossovers) {
    crossings.add_row({crossover.what, fixed_values(result, crossover),
                       fmt::format("{}", crossover.at), seconds(crossover.t_before),
                       seconds(crossover.t_after), fmt::format("{}", crossover.evaluations)});
  }
  crossings.print(out, "  ");
}

nlohmann::ordered_json sweep_to_json(const SweepResult& result) {
  Json axes = Json::array();
  for (const SweepAxis& axis : result.axes) {
    axes.push_back(Json{{"key", axis.key}, {"values", axis.values}, {"numeric", axis.numeric}});
  }
  // A shard's JSON holds its slice of the grid; `rsim merge` joins the slices.
  const auto [first, end] = result.shard.slice(result.points.size());
  Json points = Json::array();
  for (std::size_t index = first; index < end; ++index) {
    points.push_back(point_record(result, index));
  }
  Json crossovers = Json::array();
  for (const SweepCrossover& crossover : result.crossovers) {
    crossovers.push_back(Json{{"change", crossover.what},
                              {"fixed", fixed_values(result, crossover)},
                              {"at", crossover.at},
                              {"t_before_s", crossover.t_before.si()},
                              {"t_after_s", crossover.t_after.si()},
                              {"evaluations", crossover.evaluations}});
  }
  Json json{{"scenario", result.scenario},
            {"threads", result.threads},
            {"cancelled", result.cancelled},
            {"rank_by", to_string(result.rank_by)},
            {"axes", axes},
            {"points", points},
            {"crossovers", crossovers}};
  if (result.shard.requested) {
    json["shard"] = Json{{"command", "sweep"},
                         {"index", result.shard.index},
                         {"count", result.shard.count},
                         {"first", first},
                         {"end", end},
                         {"points", result.points.size()},
                         {"scenario_name", result.scenario_name}};
  }
  return json;
}

// The same columns as write_records_csv would make of one record per evaluated point (the axes,
// then the figures; empty where a point is invalid), written directly: a sweep has millions.
void write_sweep_csv(std::ostream& out, const SweepResult& result) {
  const bool any = std::any_of(result.points.begin(), result.points.end(),
                               [](const SweepPoint& point) { return point.evaluated; });
  if (!any) {
    return;
  }
  fmt::memory_buffer buffer;
  auto write = std::back_inserter(buffer);
  for (const SweepAxis& axis : result.axes) {
    fmt::format_to(write, "{},", csv_field(axis.key));
  }
  const bool requests = any_request(result);
  fmt::format_to(write,
                 "t_lower_s,t_expected_s,t_upper_s,t_math_s,t_mem_s,t_net_s,bound,"
                 "memory_per_device_bytes,fits,error{}\n",
                 requests ? ",ttft_s,tpot_s,request_s,tokens_per_s" : "");
  for (std::size_t index = 0; index < result.points.size(); ++index) {
    const SweepPoint& point = result.points[index];
    if (!point.evaluated) {
      continue;
    }
    for (std::size_t axis = 0; axis < result.axes.size(); ++axis) {
      fmt::format_to(write, "{},", csv_field(result.value(index, axis)));
    }
    if (point.error != 0) {
      fmt::format_to(write, ",,,,,,,,,{}{}\n", csv_field(result.label(point.error)),
                     requests ? ",,,," : "");
    } else {
      const SweepFigures& total = point.total;
      fmt::format_to(write, "{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{},{:.17g},{},",
                     total.t_lower.si(), total.t_expected.si(), total.t_upper.si(),
                     total.t_math.si(), total.t_mem.si(), total.t_net.si(),
                     csv_field(result.label(total.roof)), point.memory.si(), point.fits());
      if (requests && point.request.si() > 0.0) {
        fmt::format_to(write, ",{:.17g},{:.17g},{:.17g},{:.17g}", point.ttft.si(), point.tpot.si(),
                       point.request.si(), point.tokens_per_s());
      } else if (requests) {
        fmt::format_to(write, ",,,,");
      }
      fmt::format_to(write, "\n");
    }
    if (buffer.size() > (std::size_t{1} << 20)) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace rsim
