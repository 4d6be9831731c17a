// SPDX-License-Identifier: MIT
#pragma once
// How the training plan search orders its plans and keeps the best: the ranked step time first
// (rank_by.hpp), then the lower and upper bounds, then the plan's own dimensions, so that equal
// times rank the same on any number of threads.

#include "sim/analysis/schedule.hpp"
#include "sim/explore/search.hpp"

#include <cstddef>
#include <optional>
#include <tuple>
#include <vector>

namespace rsim::train_ranking {

/// A plan's dimensions in the order ties are broken.
inline auto plan_key(const TrainingPlan& plan) {
  return std::make_tuple(plan.tensor, plan.pipeline, plan.zero_stage, plan.sequence_parallel,
                         plan.microbatches, static_cast<int>(plan.recompute), plan.interleave,
                         plan.overlap_gradients, plan.overlap_tensor, plan.offload_weights,
                         plan.offload_activations, plan.offload_optimizer, plan.placement);
}

/// The ranked step first (by default the expected: the time a run takes, with collective
/// latency, kernel efficiency and only the overlaps the plan names), then the bounds, then the
/// plan.
inline auto rank_key(double expected, double lower, double upper, const TrainingPlan& plan,
                     RankBy rank_by) {
  return std::make_tuple(by_rank(rank_by, lower, expected, upper), lower, upper, plan_key(plan));
}

inline auto rank_key(const TrainingCandidate& candidate, RankBy rank_by) {
  return rank_key(candidate.step_expected.si(), candidate.step_lower.si(),
                  candidate.step_upper.si(), candidate.plan, rank_by);
}

/// Whether `left` ranks before `right` by `rank_by`.
struct RanksBefore {
  RankBy rank_by = RankBy::expected;
  bool operator()(const TrainingCandidate& left, const TrainingCandidate& right) const {
    return rank_key(left, rank_by) < rank_key(right, rank_by);
  }
};

/// The best `keep` candidates one task has seen (all of them when keep is 0). It keeps up to
/// 2·keep and trims to the best keep, so admitting is one comparison with the last kept.
class Leaderboard {
 public:
  Leaderboard(std::size_t keep, RankBy rank_by) : keep_(keep), before_{rank_by} {}

  /// Whether a plan with these step times would be kept (always, until `keep` are).
  [[nodiscard]] bool admits(const StepTimes& times, const TrainingPlan& plan) const;
  void add(TrainingCandidate candidate);
  /// The kept candidates, the best `keep` of them (unordered past the cut).
  std::vector<TrainingCandidate> take();

 private:
  void trim();

  std::size_t keep_;
  RanksBefore before_;
  std::vector<TrainingCandidate> entries_;
  std::optional<TrainingCandidate> bar_;  // the worst kept once `keep` are: what must be beaten
};

}  // namespace rsim::train_ranking
