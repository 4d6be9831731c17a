// SPDX-License-Identifier: MIT
#pragma once
// What one iteration of a continuous-batching engine costs: its decode tokens and prefill chunks
// in one pass of the model, costed by the cost model (docs/design/serving.md).

#include "sim/analysis/decode.hpp"
#include "sim/explore/batch_line.hpp"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace rsim {

/// A part of an iteration's time: its lower bound, expected time and upper bound.
struct IterationTimes {
  double lower = 0.0;  ///< seconds
  double expected = 0.0;
  double upper = 0.0;
  IterationTimes& operator+=(const IterationTimes& other) {
    lower += other.lower;
    expected += other.expected;
    upper += other.upper;
    return *this;
  }
  [[nodiscard]] IterationTimes scaled(double factor) const {
    return {lower * factor, expected * factor, upper * factor};
  }
};

/// An iteration: `decode_sequences` sequences decoding `tokens_per_sequence` tokens each against
/// `decode_context` cached tokens in all, and prefill chunks (new tokens, tokens already cached).
struct Iteration {
  std::int64_t decode_sequences = 0;
  std::int64_t tokens_per_sequence = 1;  ///< 1, or k + 1 when the target verifies k draft tokens
  std::int64_t decode_context = 0;       ///< Σ cached tokens over the decoding sequences
  struct Chunk {
    std::int64_t tokens = 0;
    std::int64_t cached = 0;
    bool last = false;  ///< completes its prompt: its last token's logits are computed
  };
  std::vector<Chunk> chunks;
};

/// An iteration's time as the sum of three kinds of rows of the model's op graph (the split is
/// exact: the bounds are sums over rows):
/// - the per-token rows (embedding, norms, projections, MLP, KV-cache writes, the plan's
///   collectives) at T = every token of the iteration: a decode step's rows at batch T, whose
///   matmuls have T rows whichever sequences the tokens come from;
/// - the head (final norm, LM head) at H = the sequences whose next token is sampled;
/// - attention: a decode sequence's at its context, by interpolation between decode steps at two
///   contexts (exact where the step is affine in the context, as a decode request checks); a
///   prefill chunk of p tokens after q cached ones as A(q + p) − A(q), where A(L) is the
///   attention of an L-token causal prefill (exact in FLOPs: Σ_{i=q+1}^{q+p} i; a prompt's chunks
///   add up to its unchunked prefill).
/// Every figure comes from batch lines (microseconds per batch, kept per batch): decode steps at
/// two contexts, and A(L) from prefills of L tokens at the iteration's number of chunks (one
/// kernel runs them: its occupancy is theirs), exact where L is one of the workload's fixed
/// prompt lengths, else interpolated on a grid of 8 points per octave (A(L)/L linear between).
class IterationCost {
 public:
  /// `scenario` a decode scenario (its batch and context are set per evaluation), costed on
  /// `roofs`; contexts between `least_context` and `most_context` are interpolated; `exact_prompts`
  /// are prompt lengths costed exactly. Throws InputError for a plan that splits the batch or
  /// pipelines the layers (one replica is simulated).
  IterationCost(const Scenario& scenario, const Roofs& roofs, std::int64_t least_context,
                std::int64_t most_context, std::vector<std::int64_t> exact_prompts);
  ~IterationCost();
  IterationCost(const IterationCost&) = delete;
  IterationCost& operator=(const IterationCost&) = delete;

  [[nodiscard]] IterationTimes cost(const Iteration& iteration);
  /// One decode step of the whole model for `sequences` sequences at `mean_context` cached tokens
  /// each (a draft model's step).
  [[nodiscard]] IterationTimes decode_step(std::int64_t sequences, double mean_context);

  /// Bytes of KV cache one token of one sequence takes on a device.
  [[nodiscard]] double kv_bytes_per_token() const { return kv_bytes_per_token_; }
  /// Weights and the largest working set at `tokens` tokens per iteration, on one device.
  [[nodiscard]] Bytes weights_and_activations(std::int64_t tokens);
  [[nodiscard]] Bytes capacity() const { return capacity_; }
  [[nodiscard]] std::int64_t devices() const { return devices_; }

 private:
  /// A batch line's point split into per-token, head and attention rows.
  struct Split {
    IterationTimes per_token;
    IterationTimes head;
    IterationTimes attention;
    IterationTimes total;
  };
  struct Line {
    std::unique_ptr<BatchLine> line;
    std::unique_ptr<BatchLine::Workspace> workspace;
    std::vector<unsigned char> kind;  ///< per table row: 0 per-token, 1 head, 2 attention
    std::vector<std::optional<Split>> at_batch;
  };
  /// Builds `line` for `scenario` (its rows' kinds found), returning its KV cache at batch 1.
  Bytes make_line(Line& line, const Scenario& scenario);
  const Split& split_at(Line& line, std::int64_t batch);
  /// A(L) per sequence where `sequences` prompts run in one kernel.
  IterationTimes prefill_attention(std::int64_t tokens, std::int64_t sequences);
  IterationTimes prefill_attention_exact(std::int64_t tokens, std::int64_t sequences);

  Scenario scenario_;
  Roofs roofs_;
  std::int64_t least_context_ = 1;
  std::int64_t most_context_ = 1;
  Line least_;  ///< decode steps at least_context_
  Line most_;   ///< decode steps at most_context_
  std::vector<std::int64_t> exact_prompts_;
  std::unordered_map<std::int64_t, Line> prefill_lines_;  ///< prefills of L tokens, by L
  double kv_bytes_per_token_ = 0.0;
  Bytes capacity_;
  std::int64_t devices_ = 1;
};

}  // namespace rsim
