// SPDX-License-Identifier: MIT
#include "sim/report/chart/series_chart.hpp"

#include "sim/base/error.hpp"
#include "sim/base/units.hpp"
#include "sim/report/chart/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <variant>

namespace rsim {
namespace {

// Tableau 10: distinguishable series colours.
constexpr std::array<const char*, 6> kColours{"#1f77b4", "#ff7f0e", "#2ca02c",
                                              "#d62728", "#9467bd", "#8c564b"};

double to_axis(double value, bool log) { return log ? std::log10(value) : value; }
double from_axis(double value, bool log) { return log ? std::pow(10.0, value) : value; }

}  // namespace

std::vector<Crossover> find_crossovers(const SeriesChart& chart) {
  std::vector<Crossover> result;
  for (std::size_t a = 0; a < chart.series.size(); ++a) {
    for (std::size_t b = a + 1; b < chart.series.size(); ++b) {
      const Series& first = chart.series[a];
      const Series& second = chart.series[b];
      RSIM_CHECK(first.x == second.x, "series of one chart share their x values");
      for (std::size_t i = 0; i + 1 < first.x.size(); ++i) {
        const double d0 =
            to_axis(first.lower_s[i], chart.log_y) - to_axis(second.lower_s[i], chart.log_y);
        const double d1 = to_axis(first.lower_s[i + 1], chart.log_y) -
                          to_axis(second.lower_s[i + 1], chart.log_y);
        if (d0 == 0.0 || d0 * d1 >= 0.0) {
          continue;  // no sign change in (x_i, x_i+1]; an exact tie at x_i+1 is found next step
        }
        // Linear in the axis coordinates: the lines cross where d(t) = d0 + t (d1 − d0) = 0.
        const double t = d0 / (d0 - d1);
        const double x0 = to_axis(first.x[i], chart.log_x);
        const double x1 = to_axis(first.x[i + 1], chart.log_x);
        const double y0 = to_axis(first.lower_s[i], chart.log_y);
        const double y1 = to_axis(first.lower_s[i + 1], chart.log_y);
        result.push_back({a, b, from_axis(x0 + t * (x1 - x0), chart.log_x),
                          from_axis(y0 + t * (y1 - y0), chart.log_y)});
      }
    }
  }
  return result;
}

namespace {

using Axis = std::variant<LogAxis, LinearAxis>;

double map(const Axis& axis, double value) {
  return std::visit([&](const auto& a) { return a.to_pixel(value); }, axis);
}

// A log axis spans the data with a 10 % margin (decade ticks inside); a linear one starts at 0.
Axis make_axis(double low, double high, bool log, double pixel_low, double pixel_high) {
  if (log) {
    return LogAxis{low / 1.1, high * 1.1, pixel_low, pixel_high};
  }
  return LinearAxis{0.0, nice_ceiling(high), pixel_low, pixel_high};
}

std::vector<double> ticks(const Axis& axis) {
  if (const auto* log = std::get_if<LogAxis>(&axis)) {
    if (log->decades().size() >= 3) {
      return log->decades();
    }
    // Under three decades, 1-2-5 steps so the axis has enough labels.
    std::vector<double> result;
    for (double decade = std::pow(10.0, std::floor(std::log10(log->low))); decade <= log->high;
         decade *= 10.0) {
      for (double step : {1.0, 2.0, 5.0}) {
        if (decade * step >= log->low && decade * step <= log->high) {
          result.push_back(decade * step);
        }
      }
    }
    return result;
  }
  return std::get<LinearAxis>(axis).ticks();
}

std::string tick_label(double value, bool time) {
  return time ? format_quantity(value, Dimension::seconds) : format_count(value);
}

}  // namespace

std::string render_series_svg(const SeriesChart& chart) {
  const Box plot{90.0, 80.0, 640.0, 420.0};
  // The legend is as wide as its longest entry: names never clip.
  double legend_width = text_width("upper bound (dashed)", 11.0);
  for (const Series& series : chart.series) {
    legend_width = std::max(legend_width, 30.0 + text_width(series.name, 12.0));
  }
  const bool unfit = std::any_of(chart.series.begin(), chart.series.end(), [](const Series& s) {
    return std::find(s.fits.begin(), s.fits.end(), false) != s.fits.end();
  });
  SvgDocument svg(plot.right() + 40.0 + legend_width, plot.bottom() + 70.0);
  double x_low = 1e300;
  double x_high = 0.0;
  double y_low = 1e300;
  double y_high = 0.0;
  // A series may have no point (no x value valid in every series of a sweep, or a sweep
  // cancelled before any): the axes then span a nominal decade and the plot says so.
  const bool empty = std::all_of(chart.series.begin(), chart.series.end(),
                                 [](const Series& series) { return series.x.empty(); });
  if (empty) {
    x_low = y_low = 1.0;
    x_high = y_high = 10.0;
  }
  for (const Series& series : chart.series) {
    if (series.x.empty()) {
      continue;
    }
    x_low = std::min(x_low, series.x.front());
    x_high = std::max(x_high, series.x.back());
    y_low = std::min(y_low, *std::min_element(series.lower_s.begin(), series.lower_s.end()));
    y_high = std::max(y_high, *std::max_element(series.upper_s.begin(), series.upper_s.end()));
  }
  const Axis x_axis = make_axis(x_low, x_high, chart.log_x, plot.x, plot.right());
  const Axis y_axis = make_axis(y_low, y_high, chart.log_y, plot.bottom(), plot.y);
  svg.text(plot.x, 30.0, chart.title, R"(font-size="18" font-weight="bold" fill="#111")");
  svg.text(plot.x, 50.0, chart.subtitle, R"(font-size="12" fill="#555")");
  svg.rect(plot, R"(fill="#fcfcfc" stroke="#444")");
  for (double tick : ticks(x_axis)) {
    const double x = map(x_axis, tick);
    svg.line(x, plot.y, x, plot.bottom(), R"(stroke="#e3e3e3")");
    svg.text(x, plot.bottom() + 18.0, tick_label(tick, false),
             R"(font-size="12" text-anchor="middle" fill="#333")");
  }
  for (double tick : ticks(y_axis)) {
    const double y = map(y_axis, tick);
    svg.line(plot.x, y, plot.right(), y, R"(stroke="#e3e3e3")");
    svg.text(plot.x - 8.0, y + 4.0, tick_label(tick, true),
             R"(font-size="12" text-anchor="end" fill="#333")");
  }
  svg.text(plot.x + plot.width / 2.0, plot.bottom() + 44.0, chart.x_label,
           R"(font-size="13" text-anchor="middle" fill="#222")");
  if (empty) {
    svg.text(plot.x + plot.width / 2.0, plot.y + plot.height / 2.0,
             fmt::format("no value of {} has a point in every series", chart.x_label),
             R"(font-size="14" text-anchor="middle" fill="#555")");
  }
  const double middle = plot.y + plot.height / 2.0;
  svg.text(24.0, middle, chart.y_label,
           fmt::format(R"svg(font-size="13" text-anchor="middle" fill="#222" )svg"
                       R"svg(transform="rotate(-90 {:.2f} {:.2f})")svg",
                       24.0, middle));
  double legend_y = plot.y + 10.0;
  // Many overlapping bands turn muddy: the more series, the lighter each band.
  const double band_opacity = chart.series.size() > 3 ? 0.07 : 0.15;
  for (std::size_t index = 0; index < chart.series.size(); ++index) {
    const Series& series = chart.series[index];
    const char* colour = kColours.at(index % kColours.size());
    std::vector<std::pair<double, double>> band;
    std::vector<std::pair<double, double>> lower;
    std::vector<std::pair<double, double>> upper;
    for (std::size_t i = 0; i < series.x.size(); ++i) {
      const double x = map(x_axis, series.x[i]);
      lower.emplace_back(x, map(y_axis, series.lower_s[i]));
      upper.emplace_back(x, map(y_axis, series.upper_s[i]));
    }
    band = upper;
    band.insert(band.end(), lower.rbegin(), lower.rend());
    if (!band.empty() && !series.markers_only) {
      svg.polygon(
          band, fmt::format(R"(fill="{}" fill-opacity="{}" stroke="none")", colour, band_opacity));
      svg.polyline(lower, fmt::format(R"(fill="none" stroke="{}" stroke-width="2.2")", colour));
      svg.polyline(
          upper, fmt::format(R"(fill="none" stroke="{}" stroke-width="1.2" stroke-dasharray="5 3")",
                             colour));
    }
    // A marker at every grid point: filled where the point fits in memory, hollow and grey
    // where it does not (a plan that cannot run is not a point on the curve).
    for (std::size_t i = 0; i < lower.size(); ++i) {
      const bool fits = i >= series.fits.size() || series.fits[i];
      svg.circle(lower[i].first, lower[i].second, 3.0,
                 fits ? fmt::format(R"(fill="{}" stroke="none" class="point")", colour)
                      : std::string(R"(fill="#fff" stroke="#888" stroke-width="1.5" )"
                                    R"(class="point unfit")"));
    }
    // Where the roof that holds the lower bound changes, a tick and the new roof's name.
    for (std::size_t i = 1; i < series.roofs.size() && i < lower.size(); ++i) {
      if (series.roofs[i] != series.roofs[i - 1]) {
        const double x = (lower[i - 1].first + lower[i].first) / 2.0;
        const double y = (lower[i - 1].second + lower[i].second) / 2.0;
        svg.line(x, y - 7.0, x, y + 7.0,
                 fmt::format(R"(stroke="{}" stroke-width="2" class="roof-change")", colour));
        svg.text(x + 4.0, y + 18.0, "→ " + series.roofs[i],
                 fmt::format(R"(font-size="10.5" fill="{}" stroke="#fff" stroke-width="3" )"
                             R"(paint-order="stroke")",
                             colour));
      }
    }
    if (series.markers_only) {
      svg.circle(plot.right() + 28.0, legend_y, 3.0,
                 fmt::format(R"(fill="{}" stroke="none")", colour));
    } else {
      svg.line(plot.right() + 16.0, legend_y, plot.right() + 40.0, legend_y,
               fmt::format(R"(stroke="{}" stroke-width="2.2")", colour));
    }
    svg.text(plot.right() + 46.0, legend_y + 4.0, series.name, R"(font-size="12" fill="#222")");
    legend_y += 20.0;
  }
  // The band's key, where some series has one (a series of single values has none).
  const bool banded = std::any_of(chart.series.begin(), chart.series.end(), [](const Series& s) {
    return !s.markers_only && s.lower_s != s.upper_s;
  });
  if (banded) {
    svg.text(plot.right() + 16.0, legend_y + 8.0, "band: lower (solid) …",
             R"(font-size="11" fill="#555")");
    svg.text(plot.right() + 16.0, legend_y + 22.0, "upper bound (dashed)",
             R"(font-size="11" fill="#555")");
  }
  if (unfit) {
    svg.circle(plot.right() + 22.0, legend_y + 38.0, 3.0,
               R"(fill="#fff" stroke="#888" stroke-width="1.5")");
    svg.text(plot.right() + 32.0, legend_y + 42.0, "does not fit in memory",
             R"(font-size="11" fill="#555")");
  }
  const std::vector<Crossover> crossovers = !chart.crossovers      ? std::vector<Crossover>{}
                                            : chart.marked.empty() ? find_crossovers(chart)
                                                                   : chart.marked;
  for (const Crossover& crossover : crossovers) {
    const double x = map(x_axis, crossover.x);
    const double y = map(y_axis, crossover.time_s);
    svg.circle(x, y, 5.0, R"(fill="#fff" stroke="#111" stroke-width="2")");
    svg.text(x + 8.0, y - 8.0, fmt::format("crossover at {}", format_count(crossover.x)),
             R"(font-size="11.5" fill="#111" stroke="#fff" stroke-width="3" paint-order="stroke")");
  }
  return svg.str();
}

}  // namespace rsim
