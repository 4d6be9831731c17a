// SPDX-License-Identifier: MIT
#include "sim/explore/serving_cost.hpp"

#include "sim/analysis/request.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rsim {
namespace {

enum RowKind : unsigned char { kPerToken = 0, kHead = 1, kAttention = 2 };

// Rows whose cost grows with the tokens a sequence attends to: fused attention, and unfused
// attention's QKᵀ, softmax and AV.
bool attends_to_context(const Op& op) {
  return op.kind == OpKind::attention || op.group == "attention_scores" ||
         (op.kind == OpKind::elementwise && op.elementwise == ElementwiseKind::softmax);
}

// The head's rows that run only for the sequences sampled (the LM head); the final norm runs on
// every token of a prefill, as rsim's prefill graph (and vLLM's models) compute it.
unsigned char row_kind(const Op& op) {
  if (attends_to_context(op)) {
    return kAttention;
  }
  return op.block == Block::head && op.kind == OpKind::matmul ? kHead : kPerToken;
}

IterationTimes row_times(const CostTable& table, Eigen::Index row) {
  const double count = table.counts(row);
  return {table.times.row(row).maxCoeff() * count, table.expected(row) * count,
          table.times.row(row).sum() * count};
}

IterationTimes lerp(const IterationTimes& a, const IterationTimes& b, double fraction) {
  return {a.lower + (b.lower - a.lower) * fraction,
          a.expected + (b.expected - a.expected) * fraction,
          a.upper + (b.upper - a.upper) * fraction};
}

// 8 grid points per octave above 16 tokens (every length up to 16): the neighbours of `tokens`.
// A(L)/L is nearly affine between points 1/8 octave (9 %) apart; each point is a prefill line
// built once (a few runs of the cost model).
std::pair<std::int64_t, std::int64_t> grid_neighbours(std::int64_t tokens) {
  constexpr std::int64_t kExactBelow = 16;
  if (tokens <= kExactBelow) {
    return {tokens, tokens};
  }
  std::int64_t step = 2;  // (16, 32]: a point every 2 tokens, then every 4, …: 8 per octave
  while (tokens > kExactBelow * step) {
    step *= 2;
  }
  const std::int64_t below = tokens / step * step;
  return below == tokens ? std::pair{tokens, tokens} : std::pair{below, below + step};
}

}  // namespace

IterationCost::IterationCost(const Scenario& scenario, const Roofs& roofs,
                             std::int64_t least_context, std::int64_t most_context,
                             std::vector<std::int64_t> exact_prompts)
    : scenario_(scenario),
      roofs_(roofs),
      least_context_(std::max<std::int64_t>(least_context, 1)),
      most_context_(std::max(most_context, std::max<std::int64_t>(least_context, 1) + 1)),
      exact_prompts_(std::move(exact_prompts)) {
  scenario_.workload.batch = 1;
  scenario_.workload.decode_steps = 0;
  devices_ = scenario_.plan.devices();
  const RunResult probe = analyze_step(decode_step_scenario(scenario_, least_context_), roofs_);
  if (probe.pipeline) {
    throw InputError(fmt::format(
        "{}: serving with a pipeline-parallel plan (a `layers` rule) is not modelled; serve "
        "with a tensor- or expert-parallel plan",
        scenario_.file));
  }
  capacity_ = probe.footprint.capacity;
  const Bytes least_kv = make_line(least_, decode_step_scenario(scenario_, least_context_));
  const Bytes most_kv = make_line(most_, decode_step_scenario(scenario_, most_context_));
  kv_bytes_per_token_ =
      (most_kv - least_kv).si() / static_cast<double>(most_context_ - least_context_);
  std::sort(exact_prompts_.begin(), exact_prompts_.end());
}

IterationCost::~IterationCost() = default;

Bytes IterationCost::make_line(Line& line, const Scenario& scenario) {
  line.line = std::make_unique<BatchLine>(scenario, roofs_);
  if (!line.line->usable()) {
    throw InputError(
        fmt::format("{}: the serving simulation cannot cost this plan along the "
                    "batch: {}",
                    scenario_.file, line.line->why()));
  }
  line.workspace = line.line->workspace();
  const BatchLine::Point* point = line.line->evaluate(1, *line.workspace);
  if (point == nullptr) {
    throw InputError(fmt::format(
        "{}: plan '{}' splits the batch over data-parallel replicas; the serving simulation "
        "runs one replica: serve with a plan whose mesh has no data axis (each replica serves "
        "its share of the requests)",
        scenario_.file, scenario_.plan.name));
  }
  const CostTable& table = line.workspace->table();
  line.kind.resize(table.order.size());
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    line.kind[row] = row_kind(line.workspace->graph().op(table.order[row]));
  }
  return point->footprint.kv_cache;
}

const IterationCost::Split& IterationCost::split_at(Line& line, std::int64_t batch) {
  const auto index = static_cast<std::size_t>(batch);
  if (index >= line.at_batch.size()) {
    line.at_batch.resize(std::max(index + 1, line.at_batch.size() * 2));
  }
  std::optional<Split>& split = line.at_batch[index];
  if (split) {
    return *split;
  }
  const BatchLine::Point* point = line.line->evaluate(batch, *line.workspace);
  RSIM_CHECK(point != nullptr, "a plan that keeps the batch whole costs every batch");
  const CostTable& table = line.workspace->table();
  split.emplace();
  for (std::size_t row = 0; row < line.kind.size(); ++row) {
    const IterationTimes times = row_times(table, static_cast<Eigen::Index>(row));
    (line.kind[row] == kAttention ? split->attention
     : line.kind[row] == kHead    ? split->head
                                  : split->per_token) += times;
    split->total += times;
  }
  return *split;
}

IterationTimes IterationCost::prefill_attention_exact(std::int64_t tokens, std::int64_t sequences) {
  if (tokens == 0) {
    return {};
  }
  auto found = prefill_lines_.find(tokens);
  if (found == prefill_lines_.end()) {
    Scenario prompt = scenario_;
    prompt.workload.context = tokens;
    Line line;
    make_line(line, prompt_prefill_scenario(prompt));
    found = prefill_lines_.emplace(tokens, std::move(line)).first;
  }
  // One sequence's share of a prefill of `sequences` prompts: the kernel runs them together.
  return split_at(found->second, sequences).attention.scaled(1.0 / static_cast<double>(sequences));
}

IterationTimes IterationCost::prefill_attention(std::int64_t tokens, std::int64_t sequences) {
  if (std::binary_search(exact_prompts_.begin(), exact_prompts_.end(), tokens)) {
    return prefill_attention_exact(tokens, sequences);
  }
  const auto [below, above] = grid_neighbours(tokens);
  if (below == above) {
    return prefill_attention_exact(tokens, sequences);
  }
  // A(L)/L is affine in L where A is quadratic (causal FLOPs ∝ L(L+1)/2): interpolate it.
  const IterationTimes low =
      prefill_attention_exact(below, sequences).scaled(1.0 / static_cast<double>(below));
  const IterationTimes high =
      prefill_attention_exact(above, sequences).scaled(1.0 / static_cast<double>(above));
  const double fraction = static_cast<double>(tokens - below) / static_cast<double>(above - below);
  return lerp(low, high, fraction).scaled(static_cast<double>(tokens));
}

IterationTimes IterationCost::cost(const Iteration& iteration) {
  std::int64_t tokens = iteration.decode_sequences * iteration.tokens_per_sequence;
  std::int64_t sampled = iteration.decode_sequences * iteration.tokens_per_sequence;
  IterationTimes total;
  const auto chunks = static_cast<std::int64_t>(iteration.chunks.size());
  for (const Iteration::Chunk& chunk : iteration.chunks) {
    tokens += chunk.tokens;
    sampled += chunk.last ? 1 : 0;
    // A(q + p) − A(q): the chunk's queries against the q cached keys and its own (causal), at
    // the occupancy of a kernel running every chunk of the iteration.
    const IterationTimes upto = prefill_attention(chunk.cached + chunk.tokens, chunks);
    const IterationTimes before = prefill_attention(chunk.cached, chunks);
    total +=
        {upto.lower - before.lower, upto.expected - before.expected, upto.upper - before.upper};
  }
  if (tokens == 0) {
    return total;
  }
  total += split_at(least_, tokens).per_token;
  if (sampled > 0) {
    total += split_at(least_, sampled).head;
  }
  if (iteration.decode_sequences > 0) {
    // The decoding sequences' attention at their mean context: each reads its own cache, so the
    // step's attention is affine in Σ contexts. A verifying pass (k + 1 queries per sequence)
    // reads each cache once, as a decode step does: its k extra queries' FLOPs are left out
    // (decode attention is far below the ridge, intensity ≈ G).
    const auto sequences = iteration.decode_sequences;
    const double mean =
        static_cast<double>(iteration.decode_context) / static_cast<double>(sequences);
    const double fraction = (mean - static_cast<double>(least_context_)) /
                            static_cast<double>(most_context_ - least_context_);
    total +=
        lerp(split_at(least_, sequences).attention, split_at(most_, sequences).attention, fraction);
  }
  return total;
}

IterationTimes IterationCost::decode_step(std::int64_t sequences, double mean_context) {
  const double fraction = (mean_context - static_cast<double>(least_context_)) /
                          static_cast<double>(most_context_ - least_context_);
  return lerp(split_at(least_, sequences).total, split_at(most_, sequences).total, fraction);
}

Bytes IterationCost::weights_and_activations(std::int64_t tokens) {
  const BatchLine::Point* point = least_.line->evaluate(tokens, *least_.workspace);
  RSIM_CHECK(point != nullptr, "a plan that keeps the batch whole costs every batch");
  // The workspace now holds this point's table: the kept splits stay valid (they are copies).
  return point->footprint.weights + point->footprint.activations;
}

}  // namespace rsim
