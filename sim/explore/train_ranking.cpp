// SPDX-License-Identifier: MIT
#include "sim/explore/train_ranking.hpp"

#include <algorithm>
#include <utility>

namespace rsim {

std::vector<double> rank_key_values(const TrainingCandidate& candidate, RankBy rank_by) {
  std::vector<double> values;
  const auto add = [&](auto value) { values.push_back(static_cast<double>(value)); };
  const auto [ranked, lower, upper, plan] = train_ranking::rank_key(candidate, rank_by);
  add(ranked);
  add(lower);
  add(upper);
  std::apply([&](auto... fields) { (add(fields), ...); }, plan);
  return values;
}

namespace train_ranking {

bool Leaderboard::admits(const StepTimes& times, const TrainingPlan& plan) const {
  return !bar_ || rank_key(times.step_expected, times.step_lower, times.step_upper, plan,
                           before_.rank_by) < rank_key(*bar_, before_.rank_by);
}

void Leaderboard::add(TrainingCandidate candidate) {
  entries_.push_back(std::move(candidate));
  if (keep_ > 0 && entries_.size() >= 2 * keep_) {
    trim();
  }
}

std::vector<TrainingCandidate> Leaderboard::take() {
  if (keep_ > 0) {
    trim();
  }
  return std::move(entries_);
}

void Leaderboard::trim() {
  const auto kept = static_cast<std::ptrdiff_t>(std::min(keep_, entries_.size()));
  std::partial_sort(entries_.begin(), entries_.begin() + kept, entries_.end(), before_);
  entries_.erase(entries_.begin() + kept, entries_.end());
  if (entries_.size() == keep_) {
    bar_ = entries_.back();
  }
}

}  // namespace train_ranking
}  // namespace rsim
