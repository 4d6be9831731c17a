// SPDX-License-Identifier: MIT
#pragma once
// The serving simulation's engine: one continuous-batching scheduler (vLLM's) over a list of
// requests, iteration by iteration, each costed by IterationCost. serving.hpp runs it (once, or
// as a prefill pool feeding a decode pool) and summarizes its requests.

#include "sim/explore/serving.hpp"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace rsim {

/// One request as the engine sees it, and what happened to it.
struct ServingRequest {
  double arrival = 0.0;    ///< at this engine
  double submitted = 0.0;  ///< by its client (before a prefill pool, for a decode pool)
  std::int64_t input = 0;
  std::int64_t output = 0;
  std::int64_t prompt = 0;    ///< tokens to compute before decoding (after a preemption: more)
  std::int64_t computed = 0;  ///< of `prompt`
  std::int64_t cached = 0;    ///< tokens in its KV cache
  std::int64_t blocks = 0;
  double generated = 0.0;  ///< output tokens emitted (fractional when speculating)
  bool decoding = false;
  /// Arrives with its prompt's KV cache (from a prefill pool) and its first token.
  bool prefilled = false;
  double scheduled = -1.0;  ///< first admitted (by the first engine it met)
  double first_token = -1.0;
  double finish = -1.0;
  double transfer = 0.0;  ///< its KV cache's transfer between pools
};

/// The stream of `serving`, drawn from its seed: arrival times (open loop; a closed loop's
/// first `concurrency` at 0, the rest when a client's last one finishes) and lengths.
std::vector<ServingRequest> make_requests(const ServingSpec& serving);

/// What an engine's run measured besides its requests.
struct EngineStats {
  std::int64_t iterations = 0;
  std::int64_t preemptions = 0;
  double batch_tokens = 0.0;    ///< Σ tokens over iterations
  double running_time = 0.0;    ///< Σ sequences running × iteration time
  double occupancy_time = 0.0;  ///< Σ KV blocks' share in use × iteration time
  double occupancy_peak = 0.0;
  std::int64_t kv_capacity_tokens = 0;
};

class ServingEngine {
 public:
  /// `requests` in arrival order (index order is release order); a closed loop releases its
  /// first `concurrency` and one more per completion. Throws InputError where the KV cache has
  /// no room, or cannot hold the longest request.
  ServingEngine(const ServingSpec& serving, IterationCost& cost, IterationCost* draft,
                ServingClock clock, std::vector<ServingRequest> requests);
  void run();
  [[nodiscard]] const std::vector<ServingRequest>& requests() const { return requests_; }
  [[nodiscard]] const EngineStats& stats() const { return stats_; }

 private:
  [[nodiscard]] std::int64_t step_tokens() const {
    return serving_.speculative ? serving_.speculative->tokens + 1 : 1;
  }
  void release_arrivals();
  bool reserve(ServingRequest& request, std::int64_t tokens);
  void preempt(std::size_t position);
  void schedule_decodes(Iteration& iteration, std::int64_t& budget);
  /// Returns how many prefilled requests it admitted (no compute of their own).
  std::int64_t schedule_prefills(Iteration& iteration, std::int64_t& budget, bool whole_prompts);
  void finish(std::size_t index);

  const ServingSpec& serving_;
  const SchedulerSpec& scheduler_;
  IterationCost& cost_;
  IterationCost* draft_;
  ServingClock clock_;
  std::vector<ServingRequest> requests_;
  std::size_t released_ = 0;  ///< requests whose arrival time is known
  std::size_t arrived_ = 0;   ///< requests queued so far (in index order)
  std::size_t finished_ = 0;
  std::deque<std::size_t> waiting_;
  std::vector<std::size_t> running_;  ///< in admission order
  std::vector<std::size_t> decoding_;
  std::vector<std::pair<std::size_t, std::int64_t>> chunked_;  ///< request, chunk tokens
  std::int64_t total_blocks_ = 0;
  std::int64_t free_blocks_ = 0;
  double now_ = 0.0;
  EngineStats stats_;
};

}  // namespace rsim
