// SPDX-License-Identifier: MIT
#pragma once
// A serving scenario (`workload: {phase: serve, …}`, `scheduler:`): a stream of requests served
// by continuous batching, as vLLM, SGLang and TensorRT-LLM schedule it (docs/yaml.md "Serving").

#include "sim/spec/config.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/plan.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsim {

/// How many tokens a request has (its prompt, or the tokens it generates): a fixed count, or
/// drawn per request from a seeded distribution.
struct TokenCount {
  enum class Kind { fixed, uniform, lognormal, trace };
  Kind kind = Kind::fixed;
  std::int64_t fixed = 0;    ///< fixed
  std::int64_t minimum = 1;  ///< uniform: the least; lognormal: draws are clamped to [min, max]
  std::int64_t maximum = 1;  ///< uniform: the most (inclusive)
  double median = 0.0;       ///< lognormal: e^μ, in tokens
  double sigma = 0.0;        ///< lognormal: the standard deviation of ln(tokens)
  /// trace: a column of a CSV file (request i takes row i, cycling when the file has fewer).
  std::vector<std::int64_t> trace;
  /// The most a draw can be (fixed: the count).
  [[nodiscard]] std::int64_t most() const { return kind == Kind::fixed ? fixed : maximum; }
};

/// Arrivals: an open loop of Poisson arrivals at `rate`, or a closed loop of `concurrency`
/// clients, each sending its next request when its last one finishes.
struct Arrivals {
  double rate_per_s = 0.0;       ///< > 0: open loop
  std::int64_t concurrency = 0;  ///< > 0: closed loop
};

/// The scheduler's limits per iteration (vLLM's max_num_seqs, max_num_batched_tokens,
/// enable_chunked_prefill, block_size, gpu_memory_utilization).
struct SchedulerSpec {
  std::int64_t max_sequences = 256;
  std::int64_t max_batch_tokens = 8192;
  /// true: decode tokens first, then prompts in chunks filling the token budget (Sarathi-Serve,
  /// vLLM V1); false: an iteration either prefills whole prompts or decodes (vLLM V0).
  bool chunked_prefill = true;
  std::int64_t block_tokens = 16;  ///< the KV cache is allocated in blocks of this many tokens
  /// The share of each device's memory the engine may use (weights, activations, KV cache).
  double memory_fraction = 0.9;
};

/// Speculative decoding: a draft model proposes `tokens` tokens per step, the target verifies
/// them in one pass; each is accepted with probability `acceptance` (independently).
struct SpeculativeSpec {
  ModelSpec draft;  ///< `draft:` a model preset or file, run on the same devices and plan
  std::int64_t tokens = 0;
  double acceptance = 0.0;
  /// Tokens a sequence gains per step, expected: Σ_{i=0..k} αⁱ = (1 − α^(k+1)) / (1 − α)
  /// (Leviathan et al. 2023, eq. 1).
  [[nodiscard]] double tokens_per_step() const;
};

/// Service-level objectives a request must meet to count towards goodput (DistServe's): its time
/// to first token and its time per output token (seconds; 0: none).
struct ServingSlo {
  double ttft_s = 0.0;
  double tpot_s = 0.0;
  [[nodiscard]] bool any() const { return ttft_s > 0.0 || tpot_s > 0.0; }
};

/// Disaggregated prefill and decode (DistServe, Zhong et al. 2024; Splitwise, Patel et al.
/// 2024): a prefill pool computes prompts and the first token, each request's KV cache crosses
/// `transfer` to a decode pool that generates the rest.
struct Disaggregation {
  Plan prefill;  ///< one prefill replica's plan
  Plan decode;   ///< one decode replica's plan
  /// Replicas of each plan in its pool (`replicas:` beside the plan); requests go to them in
  /// turn (round robin, as DistServe's and vLLM's routers dispatch an even stream).
  std::int64_t prefill_replicas = 1;
  std::int64_t decode_replicas = 1;
  std::string transfer;  ///< the network tier between the pools
  [[nodiscard]] std::int64_t devices() const {
    return prefill_replicas * prefill.devices() + decode_replicas * decode.devices();
  }
};

/// "megatron_tp ×4", or "2 × megatron_tp ×4" for two replicas of it.
std::string describe_pool(const Plan& plan, std::int64_t replicas);
/// "prefill megatron_tp ×4 + decode 2 × megatron_tp ×4".
std::string describe_pools(const Disaggregation& pools);

struct ServingSpec {
  Arrivals arrivals;
  std::int64_t requests = 0;
  TokenCount input_tokens;
  TokenCount output_tokens;  ///< tokens generated per request, the first (from the prefill) too
  std::uint64_t seed = 1;
  SchedulerSpec scheduler;
  std::optional<SpeculativeSpec> speculative;
  ServingSlo slo;                               ///< `slo:`
  std::optional<Disaggregation> disaggregated;  ///< `disaggregated:`
};

/// Parses a `phase: serve` workload and the scenario's `scheduler:`, `speculative:` and `slo:`
/// (each may be null; the draft model is the caller's to load). Errors name file:line:col and
/// the key.
ServingSpec parse_serving(const ConfigNode& workload, const ConfigNode* scheduler,
                          const ConfigNode* speculative, const ConfigNode* slo);

/// The keys a `phase: serve` workload may have.
bool is_serving_workload_key(std::string_view key);

}  // namespace rsim
