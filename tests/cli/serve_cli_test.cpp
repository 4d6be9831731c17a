// SPDX-License-Identifier: MIT
// `rsim run|whatif|compare|sweep` on a serving scenario, and the step commands refusing it.
#include "cli_fixture.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using rsim::test::rsim_cli;

const std::string kServe = "scenarios/llama3_70b_serve_h100.yaml";

// A quick stream: 200 requests of fixed lengths.
std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* set :
       {"workload.requests=200", "workload.input_tokens=512", "workload.output_tokens=64"}) {
    args.emplace_back("--set");
    args.emplace_back(set);
  }
  return args;
}

// A shorter one for what simulates it many times (a search bisects every deployment's SLO rate;
// the HTML report runs a load curve): 60 requests (CI runs these under ASan).
std::vector<std::string> tiny(std::vector<std::string> args) {
  args = quick(std::move(args));
  args.emplace_back("--set");
  args.emplace_back("workload.requests=60");
  return args;
}

}  // namespace

TEST_CASE("rsim run of a serving scenario reports its latencies and throughput", "[serving][cli]") {
  const auto text = rsim_cli(quick({"run", kServe}));
  REQUIRE(text.code == 0);
  REQUIRE_THAT(text.out, Catch::Contains("TTFT p99"));
  REQUIRE_THAT(text.out, Catch::Contains("time per output token"));
  REQUIRE_THAT(text.out, Catch::Contains("KV cache occupancy (peak)"));
  const auto json_run = rsim_cli(quick({"run", kServe, "--format", "json"}));
  REQUIRE(json_run.code == 0);
  const auto json = nlohmann::json::parse(json_run.out);
  REQUIRE(json["workload"]["phase"] == "serve");
  const auto& serving = json["serving"];
  for (const char* key : {"ttft_s", "tpot_s", "e2e_s"}) {
    for (const char* stat : {"mean", "p50", "p90", "p99"}) {
      REQUIRE(serving[key][stat].is_number());
    }
  }
  REQUIRE(serving["requests"] == 200);
  // 8 devices: per device is an eighth of the whole.
  REQUIRE(serving["throughput_tokens_per_s_per_device"].get<double>() ==
          Approx(serving["throughput_tokens_per_s"].get<double>() / 8.0));
  // The lower-bound clock is never slower than the expected one for a request's latency.
  REQUIRE(json["serving_at_lower_bound"]["e2e_s"]["mean"].get<double>() <=
          serving["e2e_s"]["mean"].get<double>());
  const auto csv = rsim_cli(quick({"run", kServe, "--format", "csv"}));
  REQUIRE(csv.code == 0);
  REQUIRE_THAT(csv.out, Catch::StartsWith("clock,metric,mean_s,p50_s,p90_s,p99_s\nexpected,ttft,"));
}

TEST_CASE("whatif, compare and sweep simulate each serving variant", "[serving][cli]") {
  const auto compare = rsim_cli(quick({"compare", kServe, "--plan", "shard_d"}));
  REQUIRE(compare.code == 0);
  REQUIRE_THAT(compare.out, Catch::Contains("plan shard_d"));
  REQUIRE_THAT(compare.out, Catch::Contains("TTFT p99"));
  const auto sweep = rsim_cli(
      quick({"sweep", kServe, "--over", "workload.arrivals.rate=1,1000", "--format", "json"}));
  REQUIRE(sweep.code == 0);
  const auto json = nlohmann::json::parse(sweep.out);
  REQUIRE(json["variants"].size() == 2);
  REQUIRE(json["variants"][0]["serving"]["saturated"] == false);
  REQUIRE(json["variants"][1]["serving"]["saturated"] == true);
  REQUIRE(json["variants"][1]["serving"]["ttft_s"].is_null());
}

TEST_CASE("the serving search ranks deployments by goodput per device", "[serving][cli]") {
  const auto search = rsim_cli(tiny({"search", kServe, "--devices", "8", "--top", "0", "--slo",
                                     "ttft_p99=2s,tpot_p99=100ms", "--format", "json"}));
  REQUIRE(search.code == 0);
  const auto json = nlohmann::json::parse(search.out);
  const auto& ranked = json["ranked"];
  REQUIRE(ranked.size() >= 2);
  bool disaggregated = false;
  bool small_chunk = false;
  for (std::size_t rank = 0; rank < ranked.size(); ++rank) {
    // Every deployment uses the 8 devices; goodput per device = SLO rate / 8, non-increasing.
    REQUIRE(ranked[rank]["replica_devices"].get<int>() * ranked[rank]["replicas"].get<int>() == 8);
    const auto& pools = ranked[rank]["disaggregated"];
    if (!pools.is_null()) {
      // A unit's pools fill it: prefill replicas × devices + decode replicas × devices.
      disaggregated = true;
      REQUIRE(pools["prefill"]["devices"].get<int>() * pools["prefill"]["replicas"].get<int>() +
                  pools["decode"]["devices"].get<int>() * pools["decode"]["replicas"].get<int>() ==
              ranked[rank]["replica_devices"].get<int>());
      // 8 devices fit one NVLink domain: KV caches move over NVLink.
      REQUIRE(pools["transfer_tier"] == "nvlink");
    }
    small_chunk = small_chunk || ranked[rank]["max_batch_tokens"] == 512;
    // vLLM's rule: a chunk holds at least one token per sequence.
    REQUIRE(ranked[rank]["max_batch_tokens"].get<int>() >=
            ranked[rank]["max_sequences"].get<int>());
    // The Pareto front at the SLO rate: no deployment has more tokens/s per device there and a
    // lower p99 TPOT.
    if (ranked[rank]["pareto"] == true) {
      const auto& mine = ranked[rank]["at_slo_rate"];
      for (const auto& other : ranked) {
        const auto& theirs = other["at_slo_rate"];
        if (theirs.is_null()) {
          continue;
        }
        const double my_tokens = mine["throughput_tokens_per_s_per_device"].get<double>();
        const double their_tokens = theirs["throughput_tokens_per_s_per_device"].get<double>();
        const double my_tpot = mine["tpot_p99_s"].get<double>();
        const double their_tpot = theirs["tpot_p99_s"].get<double>();
        const bool dominated = their_tokens >= my_tokens && their_tpot <= my_tpot &&
                               (their_tokens > my_tokens || their_tpot < my_tpot);
        REQUIRE_FALSE(dominated);
      }
    }
    REQUIRE(ranked[rank]["goodput_requests_per_s_per_device"].get<double>() ==
            Approx(ranked[rank]["slo_rate_requests_per_s"].get<double>() / 8.0));
    if (rank > 0) {
      REQUIRE(ranked[rank]["goodput_requests_per_s_per_device"].get<double>() <=
              ranked[rank - 1]["goodput_requests_per_s_per_device"].get<double>());
    }
  }
  REQUIRE(disaggregated);
  REQUIRE(small_chunk);
  // Pools are not tried with a plan whose replicas cannot serve (Llama 3 70B on one H100), so
  // no disaggregated pairing is rejected; the one-device plans are, by name.
  for (const auto& why : json["rejected"]) {
    REQUIRE_FALSE(why.get<std::string>().find("prefill") != std::string::npos);
  }
  REQUIRE_THAT(json["rejected"].dump(), Catch::Contains("megatron_tp ×1: serving: the weights"));
  REQUIRE(ranked[0]["meets_slo"] == true);
  REQUIRE(json["slo"]["ttft_p99_s"] == 2.0);
  // 3 devices: Llama 3 70B's 64 heads do not split over 3 and one H100 cannot hold it.
  const auto none = rsim_cli(tiny({"search", kServe, "--devices", "3"}));
  REQUIRE(none.code == 0);
  REQUIRE_THAT(none.out, Catch::Contains("No deployment of 3 devices can serve this stream"));
  const auto bad = rsim_cli({"search", kServe, "--devices", "8", "--slo", "latency=1s"});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.err, Catch::Contains("unknown objective 'latency'"));
}

TEST_CASE("step commands refuse a serving scenario with exit 2", "[serving][cli]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"threshold", kServe},
        std::vector<std::string>{"run", kServe, "--explain", "q_proj"}}) {
    const auto outcome = rsim_cli(args);
    REQUIRE(outcome.code == 2);
    REQUIRE_THAT(outcome.err, Catch::Contains("serving scenario"));
  }
}

TEST_CASE("serving charts: latency quantiles and p99 over the arrival rate", "[serving][cli]") {
  const auto directory = std::filesystem::temp_directory_path() / "rsim_serve_charts";
  std::filesystem::create_directories(directory);
  const auto read = [](const std::filesystem::path& path) {
    std::ifstream stream(path);
    std::ostringstream text;
    text << stream.rdbuf();
    return text.str();
  };
  const auto quantiles = directory / "quantiles.svg";
  REQUIRE(rsim_cli(quick({"run", kServe, "--plot", quantiles.string()})).code == 0);
  const std::string svg = read(quantiles);
  REQUIRE_THAT(svg, Catch::StartsWith("<svg") || Catch::StartsWith("<?xml"));
  REQUIRE_THAT(svg, Catch::Contains("time to first token"));
  REQUIRE_THAT(svg, Catch::Contains("percentile of requests"));
  const auto curve = directory / "rate.svg";
  REQUIRE(rsim_cli(quick({"sweep", kServe, "--over", "workload.arrivals.rate=1,2,4", "--plot",
                          curve.string()}))
              .code == 0);
  REQUIRE_THAT(read(curve), Catch::Contains("TTFT p99"));
  // The HTML reports: a run's latencies, quantile chart and load curve; a sweep's runs.
  const auto page = directory / "serve.html";
  REQUIRE(rsim_cli(tiny({"run", kServe, "--html", page.string()})).code == 0);
  const std::string document = read(page);
  for (const char* part :
       {"<!DOCTYPE html>", "id=\"latency-table\"", "id=\"quantiles\"", "id=\"curve\"",
        "id=\"curve-table\"", "time to first token", "arrival rate (requests/s)", "saturated"}) {
    REQUIRE_THAT(document, Catch::Contains(part));
  }
  const auto swept = directory / "sweep.html";
  REQUIRE(rsim_cli(quick({"sweep", kServe, "--over", "workload.arrivals.rate=1,2,4", "--html",
                          swept.string()}))
              .code == 0);
  REQUIRE_THAT(read(swept), Catch::Contains("id=\"variants-table\""));
  REQUIRE_THAT(read(swept), Catch::Contains("p99 latency against the swept value"));
  const auto pareto = directory / "pareto.svg";
  REQUIRE(rsim_cli(tiny({"search", kServe, "--devices", "4", "--plot", pareto.string()})).code ==
          0);
  REQUIRE_THAT(read(pareto), Catch::Contains("Pareto front"));
  REQUIRE_THAT(read(pareto), Catch::Contains("output tokens/s per device"));
  const auto step =
      rsim_cli({"search", "scenarios/pi05_thor.yaml", "--devices", "1", "--plot", "x.svg"});
  REQUIRE(step.code == 2);
  REQUIRE_THAT(step.err, Catch::Contains("--plot is for a serving scenario"));
  // Two axes have no single x: refused.
  const auto two = rsim_cli(quick({"sweep", kServe, "--over", "workload.arrivals.rate=1,2",
                                   "--over", "workload.seed=1,2", "--plot", curve.string()}));
  REQUIRE(two.code == 2);
  std::filesystem::remove_all(directory);
}

TEST_CASE("a decode request's TTFT and TPOT in sweep points and whatif and search tables",
          "[serving][cli]") {
  const std::string request = "scenarios/llama3_70b_request_h100.yaml";
  const auto run = rsim_cli({"run", request, "--set", "workload.batch=8", "--format", "json"});
  REQUIRE(run.code == 0);
  const auto expected = nlohmann::json::parse(run.out)["decode"]["request"];
  // The sweep's point at batch 8 is that run: its request's prefill, mean time per output token
  // and total (expected).
  const auto sweep =
      rsim_cli({"sweep", request, "--over", "workload.batch=8,16", "--format", "json"});
  REQUIRE(sweep.code == 0);
  const auto point = nlohmann::json::parse(sweep.out)["points"][0];
  REQUIRE(point["ttft_s"] == expected["prefill"]["t_expected_s"]);
  REQUIRE(point["tpot_s"] == expected["per_output_token"]["t_expected_s"]);
  REQUIRE(point["request_s"] == expected["total"]["t_expected_s"]);
  REQUIRE(point["tokens_per_s"].get<double>() ==
          Approx(8.0 * (expected["decode_steps"].get<double>() + 1.0) /
                 expected["total"]["t_expected_s"].get<double>()));
  // The table and the CSV carry them too.
  const auto table = rsim_cli({"sweep", request, "--over", "workload.batch=8,16", "--wide"});
  REQUIRE_THAT(table.out, Catch::Contains("TTFT") && Catch::Contains("tokens/s"));
  const auto csv = rsim_cli({"sweep", request, "--over", "workload.batch=8,16", "--format", "csv"});
  REQUIRE_THAT(csv.out, Catch::Contains("fits,error,ttft_s,tpot_s,request_s,tokens_per_s\n"));
  // Tokens/s at the expected time: batch 8 × (decode_steps + 1) outputs over the total.
  const double outputs = 8.0 * (expected["decode_steps"].get<double>() + 1.0);
  REQUIRE(expected["tokens_per_s"]["at_expected"].get<double>() ==
          Approx(outputs / expected["total"]["t_expected_s"].get<double>()));
  const auto whatif = rsim_cli({"whatif", request, "--wide"});
  REQUIRE(whatif.code == 0);
  REQUIRE_THAT(whatif.out, Catch::Contains("TTFT"));
  REQUIRE_THAT(whatif.out, Catch::Contains("TPOT"));
  REQUIRE_THAT(whatif.out, Catch::Contains("tokens/s"));
  const auto search = rsim_cli({"search", request, "--devices", "8", "--top", "2"});
  REQUIRE(search.code == 0);
  REQUIRE_THAT(search.out, Catch::Contains("TTFT"));
  const auto ranked_json =
      rsim_cli({"search", request, "--devices", "8", "--top", "1", "--format", "json"});
  const auto first = nlohmann::json::parse(ranked_json.out)["ranked"][0]["request"];
  // One sequence: 513 output tokens (512 steps + 1) over its expected total.
  REQUIRE(first["tokens_per_s_per_sequence"].get<double>() ==
          Approx(513.0 / first["total"]["t_expected_s"].get<double>()));
}
