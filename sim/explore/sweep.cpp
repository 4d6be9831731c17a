// SPDX-License-Identifier: MIT
#include "sim/explore/sweep.hpp"

#include "sim/base/error.hpp"
#include "sim/base/parallel.hpp"
#include "sim/explore/batch_line.hpp"
#include "sim/spec/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>
#include <mutex>
#include <unordered_map>

namespace rsim {
namespace {

// A sweep over more points than this is almost certainly a typo in a range.
constexpr std::size_t kMaxPoints = 1'000'000;

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// LO..HI, LO..HI:STEP, LO..HI:log2 → the integer values, ascending.
std::vector<std::string> range_values(std::string_view spec, std::string_view where) {
  const std::size_t dots = spec.find("..");
  const std::size_t colon = spec.find(':');
  const auto low = parse_integer(spec.substr(0, dots));
  const auto high = parse_integer(spec.substr(
      dots + 2, colon == std::string_view::npos ? std::string_view::npos : colon - dots - 2));
  const std::string_view step_text =
      colon == std::string_view::npos ? std::string_view("1") : spec.substr(colon + 1);
  const bool doubling = step_text == "log2";
  const auto step = doubling ? std::optional<std::int64_t>(2) : parse_integer(step_text);
  if (!low || !high || !step || *low < 1 || *high < *low || *step < 1) {
    throw InputError(
        fmt::format("{}: '{}': expected LO..HI, LO..HI:STEP or LO..HI:log2 with "
                    "1 ≤ LO ≤ HI and STEP ≥ 1",
                    where, spec));
  }
  std::vector<std::string> values;
  for (std::int64_t value = *low; value <= *high; value = doubling ? value * 2 : value + *step) {
    values.push_back(std::to_string(value));
    if (values.size() > kMaxPoints) {
      throw InputError(fmt::format("{}: '{}' has more than {} values", where, spec, kMaxPoints));
    }
  }
  if (doubling && values.back() != std::to_string(*high)) {
    values.push_back(std::to_string(*high));  // log2 ranges end on HI
  }
  return values;
}

// The scenario overrides of one grid point: `variant` picks a variant, `plan` a plan preset,
// every other key is a `--set` path.
ScenarioOverrides point_overrides(const ScenarioOverrides& base, const std::vector<SweepAxis>& axes,
                                  const std::vector<std::string>& values) {
  ScenarioOverrides overrides = base;
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    const std::string& key = axes[axis].key;
    if (key == "variant") {
      overrides.variant = values[axis] == "baseline" ? std::string() : values[axis];
    } else {
      overrides.sets.emplace_back(key == "plan" ? "plan.preset" : key, values[axis]);
    }
  }
  return overrides;
}

// The value of `axis` at grid point `index` of `axes` (the last axis fastest).
const std::string& grid_value(const std::vector<SweepAxis>& axes, std::size_t index,
                              std::size_t axis) {
  for (std::size_t later = axes.size(); --later > axis;) {
    index /= axes[later].values.size();
  }
  return axes[axis].values[index % axes[axis].values.size()];
}

std::vector<std::string> grid_values(const std::vector<SweepAxis>& axes, std::size_t index) {
  std::vector<std::string> values;
  values.reserve(axes.size());
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    values.push_back(grid_value(axes, index, axis));
  }
  return values;
}

// The key a sweep can vary without re-reading YAML: the batch is validated only as a whole
// number ≥ 1, so a validated scenario with its batch replaced is what `--set` would build.
constexpr std::string_view kBatchKey = "workload.batch";

// The text of a sweep's roofs and errors, each kept once (SweepResult::labels), shared by its
// threads: a point holds only the index.
class Labels {
 public:
  std::uint32_t intern(std::string_view text) {
    const std::lock_guard lock(mutex_);
    const auto found = ids_.find(text);
    if (found != ids_.end()) {
      return found->second;
    }
    const auto id = static_cast<std::uint32_t>(texts_.size());
    texts_.emplace_back(text);
    ids_.emplace(texts_.back(), id);
    return id;
  }

  [[nodiscard]] std::string text(std::uint32_t id) {
    const std::lock_guard lock(mutex_);
    return texts_.at(id);
  }

  std::vector<std::string> take() {
    const std::lock_guard lock(mutex_);
    ids_.clear();
    return std::move(texts_);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> texts_{""};
  std::map<std::string, std::uint32_t, std::less<>> ids_{{"", 0}};
};

// What one thread of a sweep keeps between points: its tile-search memo, its copies of the
// batch lines' template graphs (by base), made when it first evaluates a point of that base, and
// the roof labels it has met (a handful: compute, network, the memory tiers), found without the
// shared table's lock.
struct SweepThread {
  TileCache cache;
  std::vector<std::unique_ptr<BatchLine::Workspace>> workspaces;
  std::vector<std::pair<std::string, std::uint32_t>> roofs;

  std::uint32_t roof(const Totals& totals, Labels& labels) {
    const std::string_view label = bound_label(totals);
    for (const auto& [text, id] : roofs) {
      if (text == label) {
        return id;
      }
    }
    roofs.emplace_back(label, labels.intern(label));
    return roofs.back().second;
  }

  BatchLine::Workspace& workspace(std::size_t base, const BatchLine& line) {
    if (workspaces.size() <= base) {
      workspaces.resize(base + 1);
    }
    if (!workspaces[base]) {
      workspaces[base] = line.workspace();
    }
    return *workspaces[base];
  }
};

class Evaluator {
 public:
  /// Validates the baseline (InputError: a bad file is one error, not one per point) and loads
  /// the bases, on `options.threads` threads, reporting to `options.loading_progress`; a set
  /// `options.cancel` stops the loading (then cancelled(), and nothing may be evaluated).
  Evaluator(const std::filesystem::path& path, const ScenarioOverrides& overrides,
            const std::vector<SweepAxis>& axes, std::string_view mode,
            const RoofOverrides& roof_overrides, const SweepOptions& options)
      : path_(path),
        overrides_(overrides),
        axes_(axes),
        mode_(mode),
        roofs_(roof_overrides),
        batch_lines_(options.batch_lines) {
    const auto batch = std::find_if(axes.begin(), axes.end(),
                                    [](const SweepAxis& axis) { return axis.key == kBatchKey; });
    if (batch != axes.end()) {
      batch_axis_ = static_cast<std::size_t>(batch - axes.begin());
    }
    load_bases(options);
  }

  /// The loading was cancelled: the bases are not all there.
  [[nodiscard]] bool cancelled() const { return cancelled_; }

  /// The point at `values` (one per axis, any values: the crossover search asks between grid
  /// values). `thread`: what the calling thread keeps between points.
  [[nodiscard]] SweepPoint evaluate(const std::vector<std::string>& values,
                                    SweepThread& thread) const {
    SweepPoint point;
    if (const Base* base = base_for(values)) {
      evaluate_batch(*base, *parse_integer(values[*batch_axis_]), point, thread);
    } else {
      evaluate_values(values, point, thread);
    }
    return point;
  }

  /// The grid index (the last axis fastest) of the `position`th point in evaluation order: the
  /// batch fastest, so that a thread runs one batch line's points in a row (its workspace stays
  /// in cache) rather than every base in turn.
  [[nodiscard]] std::size_t grid_index(std::size_t position) const {
    if (!batch_axis_) {
      return position;
    }
    const std::size_t batches = axes_[*batch_axis_].values.size();
    const std::size_t batch = position % batches;
    std::size_t rest = position / batches;
    std::size_t index = 0;
    std::size_t stride = 1;
    for (std::size_t axis = axes_.size(); axis-- > 0;) {
      const std::size_t size = axes_[axis].values.size();
      std::size_t value = batch;
      if (axis != *batch_axis_) {
        value = rest % size;
        rest /= size;
      }
      index += value * stride;
      stride *= size;
    }
    return index;
  }

  /// The text of a point's roof or error.
  [[nodiscard]] std::string label(std::uint32_t id) const { return labels_.text(id); }
  /// Every label so far, by id, for the result (none may be added after).
  [[nodiscard]] std::vector<std::string> take_labels() const { return labels_.take(); }

  /// Fills grid point `index` (the last axis fastest): its base and batch found by arithmetic,
  /// not by its values, which are built only for a point the bases do not cover.
  void evaluate_grid(std::size_t index, SweepPoint& point, SweepThread& thread) const {
    if (batch_axis_) {
      std::size_t rest = index;
      std::size_t base_id = 0;
      std::size_t base_stride = 1;
      std::size_t batch_value = 0;
      for (std::size_t axis = axes_.size(); axis-- > 0;) {
        const std::size_t size = axes_[axis].values.size();
        const std::size_t value = rest % size;
        rest /= size;
        if (axis == *batch_axis_) {
          batch_value = value;
        } else {
          base_id += value * base_stride;
          base_stride *= size;
        }
      }
      // A base is missing where an axis repeats a value (its key was loaded once, for the
      // first): such points take the slow path, as do batches that are not whole numbers ≥ 1.
      const std::optional<std::int64_t> batch = batch_values_[batch_value];
      const Base* base = base_by_id_[base_id];
      if (base != nullptr && batch && *batch >= 1) {
        evaluate_batch(*base, *batch, point, thread);
        return;
      }
    }
    evaluate_values(grid_values(axes_, index), point, thread);
  }

 private:
  // One validated scenario per combination of the other axes' values (or why it is invalid).
  struct Base {
    std::size_t id = 0;
    std::optional<Scenario> scenario;
    std::optional<Roofs> roofs;
    std::optional<BatchLine> line;  ///< the fast path along the batch, where it is usable
    std::string error;
  };

  // A point of a loaded base at `batch` ≥ 1: along its batch line where the line answers, else
  // analyze() on the base's scenario with the batch replaced.
  void evaluate_batch(const Base& base, std::int64_t batch, SweepPoint& point,
                      SweepThread& thread) const {
    point.evaluated = true;
    if (!base.error.empty()) {
      point.error = labels_.intern(base.error);
      return;
    }
    try {
      if (base.line && base.line->usable()) {
        if (const auto* fast = base.line->evaluate(batch, thread.workspace(base.id, *base.line))) {
          fill(point, fast->total, fast->footprint, thread);
          return;
        }
      }
      Scenario scenario = *base.scenario;
      scenario.workload.batch = batch;
      const RunResult run = analyze(std::move(scenario), *base.roofs, &thread.cache);
      fill(point, run.bounds.total, run.footprint, thread);
    } catch (const InputError& error) {
      point.error = labels_.intern(error.what());
    }
  }

  // A point no base covers (no batch axis, or a batch that is not a whole number ≥ 1): its
  // scenario loaded from its values, which reports a bad value exactly as --set does.
  void evaluate_values(const std::vector<std::string>& values, SweepPoint& point,
                       SweepThread& thread) const {
    point.evaluated = true;
    try {
      Scenario scenario = load_scenario(path_, point_overrides(overrides_, axes_, values), &files_);
      Roofs roofs = scenario_roofs(scenario, mode_, roofs_);
      const RunResult run = analyze(std::move(scenario), std::move(roofs), &thread.cache);
      fill(point, run.bounds.total, run.footprint, thread);
    } catch (const InputError& error) {
      point.error = labels_.intern(error.what());
    }
  }

  void fill(SweepPoint& point, const Totals& totals, const Footprint& footprint,
            SweepThread& thread) const {
    point.total = {totals.t_lower,
                   totals.t_upper,
                   totals.t_math,
                   totals.t_mem,
                   totals.t_net,
                   totals.bound,
                   thread.roof(totals, labels_)};
    point.memory = footprint.total();
    point.capacity = footprint.capacity;
  }

  [[nodiscard]] std::vector<std::string> base_key(std::vector<std::string> values) const {
    values[*batch_axis_].clear();
    return values;
  }

  // Before the points, in parallel (each loads YAML and builds its batch line's probes): the
  // baseline, validated, and every combination of the axes other than the batch.
  void load_bases(const SweepOptions& options) {
    std::size_t combinations = 1;
    for (std::size_t axis = 0; batch_axis_ && axis < axes_.size(); ++axis) {
      combinations *= axis == *batch_axis_ ? 1 : axes_[axis].values.size();
    }
    std::vector<Base> loaded(batch_axis_ ? combinations : 0);
    std::vector<std::vector<std::string>> keys(loaded.size());
    // Index 0 (first on one thread) validates the baseline; base b is index b + 1.
    std::atomic<bool> validated{false};
    const ParallelRun run = parallel_indexed<char>(
        options.threads, loaded.size() + 1,
        [&](std::size_t index, char&) {
          if (index == 0) {
            load_scenario(path_, overrides_, &files_);  // throws the baseline's error
            validated = true;
            return;
          }
          keys[index - 1] = base_values(index - 1);
          loaded[index - 1] = load_base(index - 1, keys[index - 1]);
        },
        options.loading_progress, options.cancel);
    if (run.finished < loaded.size() + 1) {
      if (!validated) {  // cancelled before it ran: a bad file is still one error
        load_scenario(path_, overrides_, &files_);
      }
      cancelled_ = true;
      return;
    }
    for (std::size_t index = 0; index < loaded.size(); ++index) {
      bases_.emplace(std::move(keys[index]), std::move(loaded[index]));
    }
    // The map's nodes stay put: index them by id, and parse the batch values once.
    base_by_id_.resize(loaded.size());
    for (const auto& [values, base] : bases_) {
      base_by_id_[base.id] = &base;
    }
    if (batch_axis_) {
      for (const std::string& value : axes_[*batch_axis_].values) {
        batch_values_.push_back(parse_integer(value));
      }
    }
  }

  // The values of base `index` (the batch's left empty), the last other axis fastest.
  [[nodiscard]] std::vector<std::string> base_values(std::size_t index) const {
    std::vector<std::string> values(axes_.size());
    for (std::size_t axis = axes_.size(); axis-- > 0;) {
      if (axis != *batch_axis_) {
        values[axis] = axes_[axis].values[index % axes_[axis].values.size()];
        index /= axes_[axis].values.size();
      }
    }
    return values;
  }

  [[nodiscard]] Base load_base(std::size_t index, const std::vector<std::string>& values) const {
    // The other axes' keys and this base's values (not the batch axis' many values).
    std::vector<SweepAxis> others;
    std::vector<std::string> other_values;
    for (std::size_t axis = 0; axis < axes_.size(); ++axis) {
      if (axis != *batch_axis_) {
        others.push_back({axes_[axis].key, {}, axes_[axis].numeric});
        other_values.push_back(values[axis]);
      }
    }
    Base base;
    base.id = index;
    try {
      Scenario scenario =
          load_scenario(path_, point_overrides(overrides_, others, other_values), &files_);
      base.roofs = scenario_roofs(scenario, mode_, roofs_);
      if (batch_lines_) {
        base.line.emplace(scenario, *base.roofs);
      }
      base.scenario = std::move(scenario);
    } catch (const InputError& error) {
      base.error = error.what();
    }
    return base;
  }

  // The loaded base of a point whose batch is a whole number ≥ 1; else nullptr (slow path,
  // which reports a bad value exactly as --set does).
  [[nodiscard]] const Base* base_for(const std::vector<std::string>& values) const {
    if (!batch_axis_) {
      return nullptr;
    }
    const auto batch = parse_integer(values[*batch_axis_]);
    const auto base = bases_.find(base_key(values));
    return batch && *batch >= 1 && base != bases_.end() ? &base->second : nullptr;
  }

  std::filesystem::path path_;
  ScenarioOverrides overrides_;
  std::vector<SweepAxis> axes_;
  std::string mode_;
  RoofOverrides roofs_;
  bool batch_lines_ = true;
  std::optional<std::size_t> batch_axis_;
  std::map<std::vector<std::string>, Base> bases_;
  std::vector<const Base*> base_by_id_;                    ///< bases_ by Base::id
  std::vector<std::optional<std::int64_t>> batch_values_;  ///< the batch axis' values, parsed
  mutable Labels labels_;                                  ///< the points' roofs and errors
  /// The scenario's YAML files, each parsed once for every base and point.
  mutable ConfigFiles files_;
  bool cancelled_ = false;
};

class CrossoverFinder {
 public:
  CrossoverFinder(const Evaluator& evaluator, const SweepResult& result)
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
            return result_.points[left].total.t_lower < result_.points[right].total.t_lower;
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
            [](const std::vector<SweepPoint>& points) {
              return points[1].error == 0 &&
                     (points[0].error != 0 || points[1].total.t_lower <= points[0].total.t_lower);
            },
            before, after);
        crossover.t_before = after[0].total.t_lower;
        crossover.t_after = after[1].total.t_lower;
        found.push_back(std::move(crossover));
      }
    }
  }

  const Evaluator& evaluator_;
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

const std::string& SweepResult::value(std::size_t index, std::size_t axis) const {
  return grid_value(axes, index, axis);
}

std::vector<std::string> SweepResult::values(std::size_t index) const {
  return grid_values(axes, index);
}

SweepAxis parse_sweep_axis(std::string_view assignment, std::string_view origin) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == assignment.size()) {
    throw InputError(
        fmt::format("{} '{}': expected KEY=VALUES (e.g. workload.batch=1..4096:log2 "
                    "or variant=baseline,bf16)",
                    origin, assignment));
  }
  SweepAxis axis;
  axis.key = std::string(assignment.substr(0, equals));
  const std::string_view spec = assignment.substr(equals + 1);
  const std::string where = fmt::format("{} {}", origin, axis.key);
  axis.values =
      spec.find("..") != std::string_view::npos ? range_values(spec, where) : split(spec, ',');
  for (const std::string& value : axis.values) {
    if (value.empty()) {
      throw InputError(fmt::format("{}: an empty value in '{}'", where, spec));
    }
  }
  axis.numeric = std::all_of(axis.values.begin(), axis.values.end(),
                             [](const std::string& value) { return parse_integer(value); });
  return axis;
}

SweepResult run_sweep(const std::filesystem::path& path, const ScenarioOverrides& overrides,
                      const std::vector<SweepAxis>& axes, std::string_view mode,
                      const RoofOverrides& roof_overrides, const SweepOptions& options) {
  if (axes.empty()) {
    throw InputError("a sweep needs at least one axis: --over KEY=VALUES");
  }
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    for (std::size_t earlier = 0; earlier < axis; ++earlier) {
      if (axes[earlier].key == axes[axis].key) {
        throw InputError(fmt::format(
            "the sweep varies {} twice (in --over or the sweep: block); give all its values in "
            "one axis, e.g. --over {}=1,2,4",
            axes[axis].key, axes[axis].key));
      }
    }
  }
  std::size_t total = 1;
  for (const SweepAxis& axis : axes) {
    total *= axis.values.size();
    if (total > kMaxPoints) {
      throw InputError(fmt::format("the sweep grid has more than {} points", kMaxPoints));
    }
  }
  const Evaluator evaluator(path, overrides, axes, mode, roof_overrides, options);
  SweepResult result;
  result.scenario = path.string();
  result.axes = axes;
  result.points.resize(total);
  // Cancelled while loading: no point is evaluated (each stays `evaluated` false).
  const ParallelRun run = parallel_indexed<SweepThread>(
      options.threads, evaluator.cancelled() ? 0 : total,
      [&](std::size_t position, SweepThread& thread) {
        const std::size_t index = evaluator.grid_index(position);
        evaluator.evaluate_grid(index, result.points[index], thread);
      },
      options.progress, options.cancel);
  result.threads = run.threads;
  result.cancelled = run.finished < total;
  if (options.crossovers && !result.cancelled) {
    result.crossovers = CrossoverFinder(evaluator, result).find();
  }
  result.labels = evaluator.take_labels();
  return result;
}

}  // namespace rsim
