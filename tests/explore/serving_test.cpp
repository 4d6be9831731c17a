// SPDX-License-Identifier: MIT
#include "sim/explore/serving.hpp"

#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/report/serving_report.hpp"

#include <catch2/catch.hpp>

#include <cmath>

namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;

rsim::Scenario serve_scenario(Sets sets) {
  return rsim::load_scenario(rsim::test::source_path("scenarios/llama3_70b_serve_h100.yaml"),
                             {std::move(sets), ""});
}

rsim::ServingResult simulate(const rsim::Scenario& scenario,
                             rsim::ServingClock clock = rsim::ServingClock::expected) {
  return rsim::simulate_serving(scenario, rsim::scenario_roofs(scenario, ""), clock);
}

bool near(double value, double expected) {
  return std::abs(value - expected) <= 1e-9 * std::abs(expected);
}

}  // namespace

TEST_CASE("percentiles interpolate between ranks as NumPy's linear method does", "[serving]") {
  // values[(n − 1)·p/100] over {1, 2, 3, 4}: p50 at rank 1.5 → 2.5, p90 at 2.7 → 3.7, p99 at
  // 2.97 → 3.97; the mean 10/4 = 2.5.
  const rsim::LatencySummary summary = rsim::summarize({4.0, 1.0, 3.0, 2.0});
  REQUIRE(summary.mean == 2.5);
  REQUIRE(summary.p50 == 2.5);
  REQUIRE(std::abs(summary.p90 - 3.7) < 1e-12);
  REQUIRE(std::abs(summary.p99 - 3.97) < 1e-12);
  REQUIRE(summary.count == 4);
}

TEST_CASE("speculative decoding's expected tokens per step", "[serving]") {
  // Leviathan et al. 2023, eq. 1: (1 − α^(k+1)) / (1 − α). k = 4, α = 0.8:
  // (1 − 0.32768) / 0.2 = 3.3616; α = 0: 1 (only the target's own token); α = 1: k + 1.
  rsim::SpeculativeSpec speculative;
  speculative.tokens = 4;
  speculative.acceptance = 0.8;
  REQUIRE(std::abs(speculative.tokens_per_step() - 3.3616) < 1e-12);
  speculative.acceptance = 0.0;
  REQUIRE(speculative.tokens_per_step() == 1.0);
  speculative.acceptance = 1.0;
  REQUIRE(speculative.tokens_per_step() == 5.0);
}

TEST_CASE("requests all at time zero without chunking equal the static decode request",
          "[serving]") {
  // 8 requests of a 1024-token prompt and 65 output tokens, all sent at once (a closed loop of
  // 8 clients, 8 requests), whole prompts first: one iteration prefills the 8 prompts (the
  // request's prefill, batch 8), then 64 iterations decode the 8 sequences at contexts 1024 …
  // 1087 (the request's 64 steps). So every request's TTFT is the request's prefill, its TPOT
  // the mean step, its end to end the request's total.
  const rsim::Scenario serve = serve_scenario({{"workload.arrivals", "{concurrency: 8}"},
                                               {"workload.requests", "8"},
                                               {"workload.input_tokens", "1024"},
                                               {"workload.output_tokens", "65"},
                                               {"scheduler.chunked_prefill", "false"}});
  rsim::Scenario request = rsim::load_scenario(
      rsim::test::source_path("scenarios/llama3_70b_request_h100.yaml"),
      {{{"workload.batch", "8"}, {"workload.context", "1024"}, {"workload.decode_steps", "64"}},
       ""});
  const rsim::DecodeRequest expected =
      rsim::analyze_request(request, rsim::scenario_roofs(request, ""));
  for (const rsim::ServingClock clock : {rsim::ServingClock::expected, rsim::ServingClock::lower}) {
    const rsim::ServingResult result = simulate(serve, clock);
    const auto pick = [&](const rsim::PhaseTimes& times) {
      return (clock == rsim::ServingClock::expected ? times.expected : times.lower).si();
    };
    REQUIRE(result.iterations == 65);
    REQUIRE(near(result.ttft.p50, pick(expected.prefill)));
    REQUIRE(near(result.ttft.p99, pick(expected.prefill)));
    REQUIRE(near(result.tpot.mean, pick(expected.per_output_token())));
    REQUIRE(near(result.e2e.p99, pick(expected.total())));
    // 8 × 65 tokens over the request's total.
    REQUIRE(near(result.output_tokens_per_s, 8.0 * 65.0 / pick(expected.total())));
  }
}

TEST_CASE("a closed loop of fixed-length requests obeys Little's law", "[serving]") {
  // Little's law, L = λ·W: with C clients always waiting on their request, throughput × mean
  // latency = C. Here exactly: 4 clients, 16 requests of the same lengths, all admitted together
  // (4 × 256 prompt tokens fit an iteration), so each round of 4 finishes together and the next
  // 4 arrive at once: 4 rounds of equal length R, X = 16 / 4R, W = R, X·W = 4.
  for (const std::string chunked : {"false", "true"}) {
    const rsim::ServingResult result =
        simulate(serve_scenario({{"workload.arrivals", "{concurrency: 4}"},
                                 {"workload.requests", "16"},
                                 {"workload.input_tokens", "256"},
                                 {"workload.output_tokens", "32"},
                                 {"scheduler.chunked_prefill", chunked}}));
    REQUIRE(near(result.requests_per_s * result.e2e.mean, 4.0));
    REQUIRE(!result.saturated);
  }
}

TEST_CASE("a rate above capacity is reported as saturated, not as latencies", "[serving]") {
  // One request of 512 + 128 tokens takes ≳ 128 decode steps of ≥ 5 ms (the 70B weights' 1/8,
  // 17.6 GB, read at 3.35 TB/s): 256 sequences at once finish ≲ 400 requests/s, so 5,000
  // requests/s outpaces the engine; 0.5 requests/s is far below it.
  const Sets common{{"workload.requests", "600"},
                    {"workload.input_tokens", "512"},
                    {"workload.output_tokens", "128"}};
  Sets fast = common;
  fast.emplace_back("workload.arrivals", "{rate: 5000}");
  const rsim::Scenario flooded = serve_scenario(fast);
  const rsim::ServingResult saturated = simulate(flooded);
  REQUIRE(saturated.saturated);
  REQUIRE(saturated.capacity_requests_per_s < 5000.0);
  const nlohmann::ordered_json json = rsim::serving_json(saturated);
  REQUIRE(json["saturated"] == true);
  REQUIRE(json["ttft_s"].is_null());
  REQUIRE(json["tpot_s"].is_null());
  Sets slow = common;
  slow.emplace_back("workload.arrivals", "{rate: 0.5}");
  const rsim::ServingResult calm = simulate(serve_scenario(slow));
  REQUIRE(!calm.saturated);
  REQUIRE(rsim::serving_json(calm)["ttft_s"]["p99"].is_number());
}

TEST_CASE("the load curve runs the stream at shares of its capacity", "[serving]") {
  // Capacity: the same 300 requests all at once (1e9/s) complete at requests / makespan; the
  // curve's rates are 5 %, 10 %, 20 % … 100 %, 125 %, 150 % of it. Far below it the engine is
  // stable; at 150 % arrivals outpace completions and the queue grows (saturated). A closed loop
  // runs 1, 2, 4 … 2 × max_sequences clients (max_sequences 8: 1 … 16).
  const Sets common{{"workload.requests", "300"},
                    {"workload.input_tokens", "512"},
                    {"workload.output_tokens", "128"}};
  const rsim::Scenario scenario = serve_scenario(common);
  const rsim::Roofs roofs = rsim::scenario_roofs(scenario, "");
  const rsim::ServingCosts costs = rsim::build_serving_costs(scenario, roofs);
  const auto curve = rsim::serving_load_curve(scenario, roofs, costs);
  Sets burst = common;
  burst.emplace_back("workload.arrivals", "{rate: 1e9}");
  const double capacity = simulate(serve_scenario(burst)).requests_per_s;
  const std::vector<double> shares{0.05, 0.1, 0.2, 0.3, 0.4,  0.5, 0.6,
                                   0.7,  0.8, 0.9, 1.0, 1.25, 1.5};
  REQUIRE(curve.size() == shares.size());
  for (std::size_t index = 0; index < shares.size(); ++index) {
    REQUIRE(near(curve[index].load, shares[index] * capacity));
    REQUIRE(near(curve[index].result.offered_requests_per_s, curve[index].load));
  }
  REQUIRE_FALSE(curve.front().result.saturated);
  REQUIRE(curve.back().result.saturated);
  Sets closed = common;
  closed.emplace_back("workload.arrivals", "{concurrency: 2}");
  closed.emplace_back("scheduler", "{max_sequences: 8}");
  const rsim::Scenario loop = serve_scenario(closed);
  const auto clients =
      rsim::serving_load_curve(loop, roofs, rsim::build_serving_costs(loop, roofs));
  REQUIRE(clients.size() == 5);
  REQUIRE(clients.back().load == 16.0);
}

TEST_CASE("the same seed gives the same run and another seed another", "[serving]") {
  // Lengths drawn from the seed (uniform, short prompts: few prefill lines to build).
  const Sets sets{{"workload.requests", "300"},
                  {"workload.input_tokens", "{dist: uniform, min: 64, max: 256}"},
                  {"workload.output_tokens", "{dist: uniform, min: 16, max: 64}"}};
  const rsim::Scenario scenario = serve_scenario(sets);
  const nlohmann::ordered_json first = rsim::serving_json(simulate(scenario));
  const nlohmann::ordered_json again = rsim::serving_json(simulate(scenario));
  REQUIRE(first.dump() == again.dump());
  Sets other = sets;
  other.emplace_back("workload.seed", "2");
  REQUIRE(rsim::serving_json(simulate(serve_scenario(other))).dump() != first.dump());
}

TEST_CASE("speculative decoding emits its expected tokens per step", "[serving]") {
  // One request, 101 output tokens: the prefill emits the first, then each step 3.3616 (k = 4,
  // α = 0.8): ⌈100 / 3.3616⌉ = ⌈29.75⌉ = 30 steps, 31 iterations in all.
  const rsim::Scenario scenario =
      serve_scenario({{"workload.arrivals", "{concurrency: 1}"},
                      {"workload.requests", "1"},
                      {"workload.input_tokens", "512"},
                      {"workload.output_tokens", "101"},
                      {"speculative", "{draft: llama3_8b, tokens: 4, acceptance: 0.8}"}});
  const rsim::ServingResult result = simulate(scenario);
  REQUIRE(result.iterations == 31);
  REQUIRE(result.tokens_per_step);
  REQUIRE(std::abs(*result.tokens_per_step - 3.3616) < 1e-12);
  // Each step verifies 5 tokens and runs 4 draft steps: slower than a plain step, fewer of them.
  const rsim::ServingResult plain =
      simulate(serve_scenario({{"workload.arrivals", "{concurrency: 1}"},
                               {"workload.requests", "1"},
                               {"workload.input_tokens", "512"},
                               {"workload.output_tokens", "101"}}));
  REQUIRE(plain.iterations == 101);
  REQUIRE(result.tpot.mean > plain.tpot.mean / 3.3616);
  REQUIRE(result.e2e.mean < plain.e2e.mean);
}

TEST_CASE("a full KV cache preempts the latest request and every request still finishes",
          "[serving]") {
  // memory_fraction 0.25 of 80 GB leaves 20 GB − 17.6 GB of weights − activations ≈ 2 GB of KV
  // cache per device: at 40,960 B per token (80 layers × 2 × 1 KV head of 128 × 2 B on each of
  // 8 devices) about 55k tokens, fewer than 256 sequences × (1024 + 512) tokens = 393k.
  const rsim::ServingResult result =
      simulate(serve_scenario({{"workload.arrivals", "{concurrency: 256}"},
                               {"workload.requests", "512"},
                               {"workload.input_tokens", "1024"},
                               {"workload.output_tokens", "512"},
                               {"scheduler.memory_fraction", "0.25"}}));
  REQUIRE(result.kv_capacity_tokens < 70'000);
  REQUIRE(result.kv_capacity_tokens > 40'000);
  REQUIRE(result.preemptions > 0);
  REQUIRE(result.kv_occupancy_peak <= 1.0);
  REQUIRE(result.e2e.count == 512);
}

TEST_CASE("serving keys are checked with their file and line", "[serving]") {
  const auto message = [](Sets sets) {
    try {
      (void)serve_scenario(std::move(sets));
    } catch (const rsim::InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  REQUIRE_THAT(message({{"workload.arrivals", "{rate: 1, concurrency: 2}"}}),
               Catch::Contains("expected one of {rate: REQUESTS_PER_S}"));
  REQUIRE_THAT(message({{"scheduler.max_sequences", "9000"}}),
               Catch::Contains("max_sequences (9000) is above max_batch_tokens (8192)"));
  REQUIRE_THAT(message({{"workload.input_tokens", "{dist: uniform, min: 9, max: 3}"}}),
               Catch::Contains("min (9) is above max (3)"));
  REQUIRE_THAT(message({{"scheduler", "{chunked_prefill: false, max_batch_tokens: 2048}"}}),
               Catch::Contains("never fit an iteration of 2048 tokens"));
  REQUIRE_THAT(message({{"speculative", "{draft: llama3_8b, tokens: 4, acceptance: 1.5}"}}),
               Catch::Contains("in [0, 1], got 1.5"));
  REQUIRE_THAT(message({{"slo.ttft", "-1 s"}}), Catch::Contains("slo.ttft"));
  // The serving keys on a step scenario.
  try {
    (void)rsim::load_scenario(rsim::test::source_path("scenarios/llama3_70b_request_h100.yaml"),
                              {{{"scheduler", "{max_sequences: 8}"}}, ""});
    FAIL("scheduler on a decode scenario");
  } catch (const rsim::InputError& error) {
    REQUIRE_THAT(std::string(error.what()), Catch::Contains("is for a serving scenario"));
  }
}

TEST_CASE("disaggregated pools add the KV cache's transfer to an idle request", "[serving]") {
  // One request of 1024 + 33 tokens on TP=8 pools of H100s: the prefill pool computes the prompt
  // and the first token as the aggregated engine does, then the KV cache crosses InfiniBand and
  // the decode pool runs the same 32 steps. The lower-bound transfer: 80 layers × 2 (K, V) × 1 KV
  // head per device × 128 × 2 B = 40,960 B per token per device, × 1024 tokens = 41,943,040 B
  // over one 400 Gb/s (50 GB/s) NIC per device = 838.86 µs, plus NCCL's 2.7 µs hop.
  const Sets one{{"workload.arrivals", "{rate: 0.001}"},
                 {"workload.requests", "1"},
                 {"workload.input_tokens", "1024"},
                 {"workload.output_tokens", "33"}};
  Sets pools = one;
  pools.emplace_back("disaggregated",
                     "{prefill: {preset: megatron_tp, mesh: {model: 8 over nvlink}}, decode: "
                     "{preset: megatron_tp, mesh: {model: 8 over nvlink}}}");
  const auto aggregated = simulate(serve_scenario(one), rsim::ServingClock::lower);
  const auto split = simulate(serve_scenario(pools), rsim::ServingClock::lower);
  const double transfer = 41'943'040.0 / 50e9 + 2.7e-6;
  REQUIRE(split.pools);
  REQUIRE(split.pools->transfer == "ib");
  REQUIRE(split.devices == 16);
  REQUIRE(std::abs(split.pools->kv_transfer.mean - transfer) < 1e-12);
  REQUIRE(near(split.ttft.mean, aggregated.ttft.mean));
  REQUIRE(near(split.e2e.mean, aggregated.e2e.mean + transfer));
  REQUIRE_THROWS_WITH(serve_scenario({{"workload.arrivals", "{concurrency: 4}"},
                                      {"disaggregated", "{prefill: single, decode: single}"}}),
                      Catch::Contains("open loop"));
}

TEST_CASE("replicated pools send each request to the next replica in turn", "[serving]") {
  // Two requests 1 ms apart (rate 1000/s, seed 1 draws gaps near it) on pools of two replicas
  // each: round robin gives each request a prefill and a decode replica of its own, so each runs
  // as the lone request of the test above: TTFT as the aggregated engine's for one request, end
  // to end that plus the transfer (41,943,040 B / 50 GB/s + 2.7 µs). Devices: 2 × 8 + 2 × 8.
  const Sets one{{"workload.arrivals", "{rate: 0.001}"},
                 {"workload.requests", "1"},
                 {"workload.input_tokens", "1024"},
                 {"workload.output_tokens", "33"}};
  const Sets two{{"workload.arrivals", "{rate: 1000}"},
                 {"workload.requests", "2"},
                 {"workload.input_tokens", "1024"},
                 {"workload.output_tokens", "33"},
                 {"disaggregated",
                  "{prefill: {preset: megatron_tp, mesh: {model: 8 over nvlink}, replicas: 2}, "
                  "decode: {preset: megatron_tp, mesh: {model: 8 over nvlink}, replicas: 2}}"}};
  const auto alone = simulate(serve_scenario(one), rsim::ServingClock::lower);
  const auto split = simulate(serve_scenario(two), rsim::ServingClock::lower);
  const double transfer = 41'943'040.0 / 50e9 + 2.7e-6;
  REQUIRE(split.devices == 32);
  REQUIRE(split.pools->prefill_replicas == 2);
  REQUIRE(split.pools->decode_devices == 16);
  REQUIRE(near(split.ttft.p50, alone.ttft.mean));
  REQUIRE(near(split.ttft.p99, alone.ttft.mean));
  REQUIRE(near(split.e2e.p99, alone.e2e.mean + transfer));
  const rsim::Scenario replicated = serve_scenario(two);
  REQUIRE(rsim::describe_pools(*replicated.serving->disaggregated) ==
          "prefill 2 × megatron_tp ×8 + decode 2 × megatron_tp ×8");
  // One replica each: the second request shares the first's iterations, so it is slower.
  Sets shared = two;
  shared.back().second =
      "{prefill: {preset: megatron_tp, mesh: {model: 8 over nvlink}}, decode: {preset: "
      "megatron_tp, mesh: {model: 8 over nvlink}}}";
  REQUIRE(simulate(serve_scenario(shared), rsim::ServingClock::lower).e2e.p99 >
          split.e2e.p99 * 1.001);
  REQUIRE_THROWS_WITH(
      serve_scenario({{"disaggregated",
                       "{prefill: {preset: megatron_tp, mesh: {model: 8 over nvlink}, replicas: "
                       "0}, decode: single}"}}),
      Catch::Contains("replicas"));
}

TEST_CASE("request lengths from a trace's columns", "[serving]") {
  // Azure's LLM inference trace layout (ContextTokens, GeneratedTokens): 3 rows of 100/10,
  // 200/20, 300/30 tokens, served one at a time: the run's output tokens are 10 + 20 + 30 = 60,
  // so throughput × makespan = 60 and the mean output 20.
  const std::string trace = rsim::test::source_path("tests/data/serve/azure_like.csv").string();
  const rsim::Scenario scenario = serve_scenario(
      {{"workload.arrivals", "{concurrency: 1}"},
       {"workload.requests", "3"},
       {"workload.input_tokens", "{trace: " + trace + ", column: ContextTokens}"},
       {"workload.output_tokens", "{trace: " + trace + ", column: GeneratedTokens}"}});
  const rsim::ServingResult result = simulate(scenario);
  REQUIRE(near(result.output_tokens_per_s * result.makespan_s, 60.0));
  REQUIRE(near(result.input_tokens_per_s * result.makespan_s, 600.0));
  REQUIRE_THROWS_WITH(
      serve_scenario({{"workload.input_tokens", "{trace: " + trace + ", column: Prompt}"}}),
      Catch::Contains("no column 'Prompt' (columns: TIMESTAMP, ContextTokens, GeneratedTokens)"));
}
