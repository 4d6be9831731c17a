// SPDX-License-Identifier: MIT
#pragma once

// How a sweep evaluates its points: the scenario loaded once per combination of the axes other
// than the batch (a base, with its batch line where usable), each thread's caches, and the
// labels of the points' roofs and errors.

#include "sim/explore/batch_line.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/spec/config.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

/// The text of a sweep's roofs and errors, each kept once (SweepResult::labels), shared by its
/// threads: a point holds only the index.
class SweepLabels {
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

/// What one thread of a sweep keeps between points: its tile-search memo, its copies of the
/// batch lines' template graphs (by base), made when it first evaluates a point of that base, and
/// the roof labels it has met (a handful: compute, network, the memory tiers), found without the
/// shared table's lock.
struct SweepThread {
  TileCache cache;
  std::vector<std::unique_ptr<BatchLine::Workspace>> workspaces;
  struct Roof {
    Bound bound = Bound::compute;
    std::string tier;
    std::uint32_t id = 0;
  };
  std::vector<Roof> roofs;

  // Found by (bound, tier) with no allocation; the label is made once per roof met.
  std::uint32_t roof(const Totals& totals, SweepLabels& labels) {
    for (const Roof& roof : roofs) {
      if (roof.bound == totals.bound && roof.tier == totals.bound_tier) {
        return roof.id;
      }
    }
    roofs.push_back({totals.bound, totals.bound_tier, labels.intern(bound_label(totals))});
    return roofs.back().id;
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

class SweepEvaluator {
 public:
  /// Validates the baseline (InputError: a bad file is one error, not one per point) and loads
  /// the bases, on `options.threads` threads, reporting to `options.loading_progress`; a set
  /// `options.cancel` stops the loading (then cancelled(), and nothing may be evaluated).
  SweepEvaluator(const std::filesystem::path& path, const ScenarioOverrides& overrides,
                 const std::vector<SweepAxis>& axes, std::string_view mode,
                 const RoofOverrides& roof_overrides, const SweepOptions& options);

  /// The loading was cancelled: the bases are not all there.
  [[nodiscard]] bool cancelled() const { return cancelled_; }

  /// The point at `values` (one per axis, any values: the crossover search asks between grid
  /// values). `thread`: what the calling thread keeps between points.
  [[nodiscard]] SweepPoint evaluate(const std::vector<std::string>& values,
                                    SweepThread& thread) const;

  /// The grid index (the last axis fastest) of the `position`th point in evaluation order: the
  /// batch fastest, so that a thread runs one batch line's points in a row (its workspace stays
  /// in cache) rather than every base in turn.
  [[nodiscard]] std::size_t grid_index(std::size_t position) const;

  /// The text of a point's roof or error.
  [[nodiscard]] std::string label(std::uint32_t id) const { return labels_.text(id); }
  /// The id of a roof's or an error's text (`rsim merge` re-labels points read from JSON).
  std::uint32_t intern(std::string_view text) const { return labels_.intern(text); }
  /// Every label so far, by id, for the result (none may be added after).
  [[nodiscard]] std::vector<std::string> take_labels() const { return labels_.take(); }

  /// Fills grid point `index` (the last axis fastest): its base and batch found by arithmetic,
  /// not by its values, which are built only for a point the bases do not cover.
  void evaluate_grid(std::size_t index, SweepPoint& point, SweepThread& thread) const;

 private:
  // One validated scenario per combination of the other axes' values (or why it is invalid).
  struct Base {
    std::size_t id = 0;
    std::optional<Scenario> scenario;
    std::optional<Roofs> roofs;
    std::optional<BatchLine> line;  ///< the fast path along the batch, where it is usable
    std::string error;
  };

  void evaluate_batch(const Base& base, std::int64_t batch, SweepPoint& point,
                      SweepThread& thread) const;
  void evaluate_values(const std::vector<std::string>& values, SweepPoint& point,
                       SweepThread& thread) const;
  void fill(SweepPoint& point, const Totals& totals, const Footprint& footprint,
            SweepThread& thread) const;
  /// The same from a whole run, with a decode request's TTFT, TPOT and total.
  void fill(SweepPoint& point, const RunResult& run, SweepThread& thread) const;
  [[nodiscard]] std::vector<std::string> base_key(std::vector<std::string> values) const;
  void load_bases(const SweepOptions& options);
  [[nodiscard]] std::vector<std::string> base_values(std::size_t index) const;
  [[nodiscard]] Base load_base(std::size_t index, const std::vector<std::string>& values) const;
  [[nodiscard]] const Base* base_for(const std::vector<std::string>& values) const;

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
  mutable SweepLabels labels_;                             ///< the points' roofs and errors
  /// The scenario's YAML files, each parsed once for every base and point.
  mutable ConfigFiles files_;
  bool cancelled_ = false;
};

}  // namespace rsim
