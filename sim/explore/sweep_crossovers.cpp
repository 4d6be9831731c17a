// SPDX-License-Identifier: MIT
#include "sim/explore/sweep_crossovers.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace rsim {
namespace {

class CrossoverFinder {
 public:
  CrossoverFinder(const SweepEvaluator& evaluator, const SweepResult& result)
      : evaluator_(evaluator), result_(result) {
    const std::vector<SweepAxis>& axes = result.axes;
    for (std::size_t axis = 0; axis < axes.size(); ++axis) {
      if (axes[axis].numeric && !x_axis_) {
        x_axis_ = axis;
      } else if (!axes[axis].numeric && !series_axis_) {
        series_axis_ = axis;
      }
    }
    // Each axis' stride in the grid (the last fastest), and the rank of each of its values among
    // its distinct values in string order, with the radix of those ranks.
    strides_.assign(axes.size(), 1);
    for (std::size_t axis = axes.size(); axis-- > 1;) {
      strides_[axis - 1] = strides_[axis] * axes[axis].values.size();
    }
    for (const SweepAxis& axis : axes) {
      std::vector<std::string> distinct = axis.values;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      std::vector<std::uint64_t>& ranks = ranks_.emplace_back();
      for (const std::string& value : axis.values) {
        ranks.push_back(static_cast<std::uint64_t>(
            std::lower_bound(distinct.begin(), distinct.end(), value) - distinct.begin()));
      }
      rank_radices_.push_back(distinct.size());
    }
    if (x_axis_) {
      for (const std::string& value : axes[*x_axis_].values) {
        const auto x = parse_integer(value);
        RSIM_CHECK(x.has_value(), "a numeric sweep axis with a value that is not an integer");
        x_values_.push_back(*x);
      }
    }
  }

  std::vector<SweepCrossover> find() {
    std::vector<SweepCrossover> found;
    if (!x_axis_) {
      return found;
    }
    // Lines along x: every combination of the other axes (the series axis included).
    std::map<std::uint64_t, std::vector<std::size_t>> lines;
    for (std::size_t index = 0; index < result_.points.size(); ++index) {
      if (valid(index)) {
        lines[key_without(index, *x_axis_)].push_back(index);
      }
    }
    for (auto& [key, line] : lines) {
      sort_by_x(line);
      roof_changes(line, found);
    }
    if (series_axis_) {
      winner_changes(found);
    }
    return found;
  }

 private:
  std::vector<std::string> key_without(std::vector<std::string> values,
                                       const std::vector<std::size_t>& axes) const {
    for (std::size_t axis : axes) {
      values[axis].clear();
    }
    return values;
  }

  // The value index of grid point `index` on `axis`.
  std::size_t digit(std::size_t index, std::size_t axis) const {
    return index / strides_[axis] % result_.axes[axis].values.size();
  }

  // The key of grid point `index` without `axis` (and `also`, if given), as one number: its
  // other values' ranks in mixed radix, the first axis most significant. Keys order as the
  // points' values would, compared axis by axis as strings (the axes left out compare equal),
  // and points whose values are equal strings share a key.
  std::uint64_t key_without(std::size_t index, std::size_t axis,
                            std::optional<std::size_t> also = std::nullopt) const {
    std::uint64_t key = 0;
    for (std::size_t other = 0; other < result_.axes.size(); ++other) {
      const bool left_out = other == axis || (also && other == *also);
      key = key * rank_radices_[other] + (left_out ? 0 : ranks_[other][digit(index, other)]);
    }
    return key;
  }

  // Grid point `index` was evaluated and is a valid scenario.
  bool valid(std::size_t index) const { return result_.points[index].valid(); }

  std::int64_t x_of(std::size_t index) const { return x_values_[digit(index, *x_axis_)]; }

  void sort_by_x(std::vector<std::size_t>& line) const {
    std::stable_sort(line.begin(), line.end(),
                     [&](std::size_t left, std::size_t right) { return x_of(left) < x_of(right); });
  }

  SweepPoint at(std::vector<std::string> values, std::int64_t x, int& evaluations) const {
    values[*x_axis_] = std::to_string(x);
    ++evaluations;
    return evaluator_.evaluate(values, thread_);
  }

  // What one crossover's searches found at each value they asked: the rows' points in row
  // order, as far as they were evaluated (every row, or up to the first invalid one).
  using Scanned = std::unordered_map<std::int64_t, std::vector<SweepPoint>>;

  // The first value from `from` towards `limit` (inclusive; `step` is +1 or −1) at which every
  // series in `rows` is a valid scenario — a plan splitting the batch over 2 devices accepts
  // only even batches — with those points (at `limit`, a grid value, whatever they are). A
  // value's rows are evaluated until one is invalid (every row at `limit`), each at most once
  // per crossover (`scanned`): the bisection's scans from each midpoint, and the scan back for
  // the point before the change, cross the same values.
  std::pair<std::int64_t, std::vector<SweepPoint>> first_valid(
      const std::vector<std::vector<std::string>>& rows, std::int64_t from, std::int64_t limit,
      std::int64_t step, Scanned& scanned, int& evaluations) const {
    const auto invalid = [](const SweepPoint& point) { return point.error != 0; };
    for (std::int64_t x = from;; x += step) {
      std::vector<SweepPoint>& points = scanned[x];
      while (points.size() < rows.size() &&
             (x == limit || points.empty() || !invalid(points.back()))) {
        points.push_back(at(rows[points.size()], x, evaluations));
      }
      const bool valid =
          points.size() == rows.size() && std::none_of(points.begin(), points.end(), invalid);
      if (valid || x == limit) {
        return {x, points};
      }
    }
  }

  // Bisects (low, high] for the first valid value where `holds` is true of the rows' points;
  // fills the crossover's value and the points just before and at it.
  void locate(SweepCrossover& crossover, const std::vector<std::vector<std::string>>& rows,
              std::int64_t low, std::int64_t high,
              const std::function<bool(const std::vector<SweepPoint>&)>& holds,
              std::vector<SweepPoint>& before, std::vector<SweepPoint>& after) const {
    const std::int64_t grid_low = low;
    const std::int64_t grid_high = high;
    Scanned scanned;
    while (high - low > 1) {
      const std::int64_t middle = low + (high - low) / 2;
      auto [x, points] = first_valid(rows, middle, high, 1, scanned, crossover.evaluations);
      if (x >= high) {
        low = middle;  // no valid value in [middle, high): only `high` is left
      } else if (holds(points)) {
        high = x;
      } else {
        low = x;
      }
    }
    auto [at_x, at_points] = first_valid(rows, high, grid_high, 1, scanned, crossover.evaluations);
    auto [before_x, before_points] =
        first_valid(rows, at_x - 1, grid_low, -1, scanned, crossover.evaluations);
    crossover.at = at_x;
    before = std::move(before_points);
    after = std::move(at_points);
  }

  // Along one series: where the bound changes between two neighbouring grid values.
  void roof_changes(const std::vector<std::size_t>& line, std::vector<SweepCrossover>& found) {
    for (std::size_t index = 1; index < line.size(); ++index) {
      const std::uint32_t from_roof = result_.points[line[index - 1]].total.roof;
      const std::uint32_t to_roof = result_.points[line[index]].total.roof;
      if (from_roof == to_roof) {
        continue;
      }
      const std::string from = evaluator_.label(from_roof);
      const std::string to = evaluator_.label(to_roof);
      SweepCrossover crossover;
      crossover.what = fmt::format("{} → {}", from, to);
      crossover.from = from;
      crossover.to = to;
      std::vector<std::string> previous = result_.values(line[index - 1]);
      crossover.fixed = key_without(previous, {*x_axis_});
      std::vector<SweepPoint> before;
      std::vector<SweepPoint> after;
      locate(
          crossover, {previous}, x_of(line[index - 1]), x_of(line[index]),
          [&](const std::vector<SweepPoint>& points) {
            return points.front().total.roof == to_roof;
          },
          before, after);
      crossover.t_before = before.front().total.t_lower;
      crossover.t_after = after.front().total.t_lower;
      found.push_back(std::move(crossover));
    }
  }

  // Between series: where the fastest series changes between neighbouring grid values.
  void winner_changes(std::vector<SweepCrossover>& found) {
    std::map<std::uint64_t, std::vector<std::size_t>> columns;
    for (std::size_t index = 0; index < result_.points.size(); ++index) {
      if (valid(index)) {
        columns[key_without(index, *series_axis_)].push_back(index);
      }
    }
    // Winner per (other axes, x), then walk x within each group of the other axes.
    std::map<std::uint64_t, std::vector<std::size_t>> winners;
    for (const auto& [key, column] : columns) {
      const std::size_t best =
          *std::min_element(column.begin(), column.end(), [&](std::size_t left, std::size_t right) {
            return ranked(result_.points[left]) < ranked(result_.points[right]);
          });
      winners[key_without(column.front(), *series_axis_, *x_axis_)].push_back(best);
    }
    for (auto& [key, line] : winners) {
      sort_by_x(line);
      for (std::size_t index = 1; index < line.size(); ++index) {
        const std::vector<std::string> old_values = result_.values(line[index - 1]);
        const std::string& old_series = old_values[*series_axis_];
        const std::string& new_series = result_.value(line[index], *series_axis_);
        if (old_series == new_series) {
          continue;
        }
        SweepCrossover crossover;
        crossover.what = fmt::format("{} → {} fastest", old_series, new_series);
        crossover.kind = SweepCrossover::Kind::fastest;
        crossover.from = old_series;
        crossover.to = new_series;
        crossover.fixed = key_without(result_.values(line[index]), {*series_axis_, *x_axis_});
        std::vector<std::string> new_values = old_values;
        new_values[*series_axis_] = new_series;
        std::vector<SweepPoint> before;
        std::vector<SweepPoint> after;
        locate(
            crossover, {old_values, new_values}, x_of(line[index - 1]), x_of(line[index]),
            [this](const std::vector<SweepPoint>& points) {
              return points[1].error == 0 &&
                     (points[0].error != 0 || ranked(points[1]) <= ranked(points[0]));
            },
            before, after);
        crossover.t_before = ranked(after[0]);
        crossover.t_after = ranked(after[1]);
        found.push_back(std::move(crossover));
      }
    }
  }

  // The time that picks the fastest series (SweepResult::rank_by).
  [[nodiscard]] Seconds ranked(const SweepPoint& point) const {
    return ranked_time(point.total, result_.rank_by);
  }

  const SweepEvaluator& evaluator_;
  const SweepResult& result_;
  mutable SweepThread thread_;
  std::optional<std::size_t> x_axis_;
  std::optional<std::size_t> series_axis_;
  std::vector<std::size_t> strides_;               ///< per axis, in grid indices
  std::vector<std::vector<std::uint64_t>> ranks_;  ///< per axis and value: its string's rank
  std::vector<std::uint64_t> rank_radices_;        ///< per axis: how many distinct values
  std::vector<std::int64_t> x_values_;             ///< the x axis' values, parsed
};

}  // namespace

std::vector<SweepCrossover> find_sweep_crossovers(const SweepEvaluator& evaluator,
                                                  const SweepResult& result) {
  return CrossoverFinder(evaluator, result).find();
}

}  // namespace rsim
