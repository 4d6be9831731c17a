// SPDX-License-Identifier: MIT
#include "sim/spec/serving.hpp"

#include "sim/base/csv.hpp"
#include "sim/base/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace rsim {
namespace {

constexpr std::array<std::string_view, 6> kServingWorkloadKeys = {
    "phase", "arrivals", "requests", "input_tokens", "output_tokens", "seed"};

// Requests beyond this are refused: the simulation keeps every request's record.
constexpr std::int64_t kMostRequests = 10'000'000;
// Tokens per request beyond this are refused (a 16M-token context exceeds every model's).
constexpr std::int64_t kMostTokens = std::int64_t{1} << 24;

double positive_serving_number(const ConfigNode& node) {
  const double value = node.as_number();
  if (value <= 0.0) {
    node.fail(fmt::format("expected a number > 0, got {}", value));
  }
  return value;
}

std::int64_t tokens_at_most(const ConfigNode& node, std::int64_t minimum) {
  const std::int64_t value = minimum == 0 ? node.as_count() : node.as_positive_int();
  if (value > kMostTokens) {
    node.fail(
        fmt::format("{} tokens is more than rsim simulates per request ({})", value, kMostTokens));
  }
  return value;
}

// The whole numbers of `column` in the CSV file `node` names (relative to the scenario), each at
// least `least`: a request trace (e.g. Azure's LLM inference traces: ContextTokens,
// GeneratedTokens).
std::vector<std::int64_t> read_trace(const ConfigNode& node, const std::string& column,
                                     std::int64_t least) {
  std::filesystem::path path = node.as_string();
  if (path.is_relative()) {
    path = std::filesystem::path(node.mark().file).parent_path() / path;
  }
  std::ifstream stream(path);
  if (!stream) {
    node.fail(fmt::format("cannot open the trace {}", path.string()));
  }
  std::string line;
  int line_number = 1;
  if (!std::getline(stream, line)) {
    node.fail(fmt::format("{}: empty trace (expected a header with '{}')", path.string(), column));
  }
  const std::vector<std::string> header = split_csv(line, path.string(), line_number);
  const auto found = std::find(header.begin(), header.end(), column);
  if (found == header.end()) {
    node.fail(fmt::format("{}:1: no column '{}' (columns: {})", path.string(), column,
                          fmt::join(header, ", ")));
  }
  const auto index = static_cast<std::size_t>(found - header.begin());
  std::vector<std::int64_t> values;
  while (std::getline(stream, line)) {
    ++line_number;
    if (line.empty() || line == "\r") {
      continue;
    }
    const std::vector<std::string> fields = split_csv(line, path.string(), line_number);
    std::int64_t value = 0;
    const std::string& text = index < fields.size() ? fields[index] : std::string();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value < least ||
        value > kMostTokens) {
      throw InputError(
          fmt::format("{}:{}: error: '{}' is \"{}\": expected a whole number of "
                      "tokens from {} to {}",
                      path.string(), line_number, column, text, least, kMostTokens));
    }
    values.push_back(value);
  }
  if (values.empty()) {
    node.fail(fmt::format("{}: the trace has no rows", path.string()));
  }
  return values;
}

// `N`, `{dist: uniform, min: A, max: B}`, `{dist: lognormal, median: M, sigma: S, min: A,
// max: B}` or `{trace: FILE.csv, column: NAME}` (column: `default_column`); `least` is the
// fewest tokens a request may have.
TokenCount parse_token_count(const ConfigNode& node, std::int64_t least,
                             const std::string& default_column) {
  TokenCount count;
  if (node.kind() == ConfigNode::Kind::scalar) {
    count.fixed = tokens_at_most(node, least);
    return count;
  }
  if (const ConfigNode* trace = node.find("trace")) {
    node.allow_only({"trace", "column"});
    count.kind = TokenCount::Kind::trace;
    const std::string column =
        node.find("column") != nullptr ? node.at("column").as_string() : default_column;
    count.trace = read_trace(*trace, column, least);
    count.minimum = *std::min_element(count.trace.begin(), count.trace.end());
    count.maximum = *std::max_element(count.trace.begin(), count.trace.end());
    return count;
  }
  const std::string dist = node.at("dist").as_choice({"uniform", "lognormal"});
  if (dist == "uniform") {
    node.allow_only({"dist", "min", "max"});
    count.kind = TokenCount::Kind::uniform;
    count.minimum = tokens_at_most(node.at("min"), least);
    count.maximum = tokens_at_most(node.at("max"), least);
  } else {
    node.allow_only({"dist", "median", "sigma", "min", "max"});
    count.kind = TokenCount::Kind::lognormal;
    count.median = positive_serving_number(node.at("median"));
    count.sigma = node.at("sigma").as_number();
    if (count.sigma < 0.0 || count.sigma > 4.0) {
      node.at("sigma").fail(fmt::format(
          "expected the standard deviation of ln(tokens) in [0, 4], got {}", count.sigma));
    }
    count.minimum = node.find("min") != nullptr ? tokens_at_most(node.at("min"), least) : least;
    count.maximum = tokens_at_most(node.at("max"), least);
  }
  if (count.minimum > count.maximum) {
    node.fail(fmt::format("min ({}) is above max ({})", count.minimum, count.maximum));
  }
  return count;
}

SchedulerSpec parse_scheduler(const ConfigNode& node) {
  node.allow_only(
      {"max_sequences", "max_batch_tokens", "chunked_prefill", "block_tokens", "memory_fraction"});
  SchedulerSpec scheduler;
  if (const ConfigNode* sequences = node.find("max_sequences")) {
    scheduler.max_sequences = sequences->as_positive_int();
  }
  if (const ConfigNode* tokens = node.find("max_batch_tokens")) {
    scheduler.max_batch_tokens = tokens_at_most(*tokens, 1);
  }
  if (scheduler.max_sequences > scheduler.max_batch_tokens) {
    node.fail(
        fmt::format("max_sequences ({}) is above max_batch_tokens ({}): every running "
                    "sequence decodes one token per iteration",
                    scheduler.max_sequences, scheduler.max_batch_tokens));
  }
  if (const ConfigNode* chunked = node.find("chunked_prefill")) {
    scheduler.chunked_prefill = chunked->as_bool();
  }
  if (const ConfigNode* block = node.find("block_tokens")) {
    scheduler.block_tokens = tokens_at_most(*block, 1);
  }
  if (const ConfigNode* fraction = node.find("memory_fraction")) {
    scheduler.memory_fraction = fraction->as_number();
    if (scheduler.memory_fraction <= 0.0 || scheduler.memory_fraction > 1.0) {
      fraction->fail(
          fmt::format("expected a share of memory in (0, 1], got {}", scheduler.memory_fraction));
    }
  }
  return scheduler;
}

SpeculativeSpec parse_speculative(const ConfigNode& node) {
  node.allow_only({"draft", "tokens", "acceptance"});
  SpeculativeSpec speculative;
  speculative.tokens = node.at("tokens").as_positive_int();
  if (speculative.tokens > 64) {
    node.at("tokens").fail(
        fmt::format("{} draft tokens per step; rsim models up to 64", speculative.tokens));
  }
  speculative.acceptance = node.at("acceptance").as_number();
  if (speculative.acceptance < 0.0 || speculative.acceptance > 1.0) {
    node.at("acceptance")
        .fail(fmt::format(
            "expected the probability that a draft token is accepted, in [0, 1], got {}",
            speculative.acceptance));
  }
  return speculative;
}

}  // namespace

double SpeculativeSpec::tokens_per_step() const {
  const auto k = static_cast<double>(tokens);
  if (acceptance >= 1.0) {
    return k + 1.0;  // the limit of the geometric sum
  }
  return (1.0 - std::pow(acceptance, k + 1.0)) / (1.0 - acceptance);
}

std::string describe_pool(const Plan& plan, std::int64_t replicas) {
  const std::string one = fmt::format("{} ×{}", plan.name, plan.devices());
  return replicas == 1 ? one : fmt::format("{} × {}", replicas, one);
}

std::string describe_pools(const Disaggregation& pools) {
  return fmt::format("prefill {} + decode {}", describe_pool(pools.prefill, pools.prefill_replicas),
                     describe_pool(pools.decode, pools.decode_replicas));
}

bool is_serving_workload_key(std::string_view key) {
  for (std::string_view allowed : kServingWorkloadKeys) {
    if (key == allowed) {
      return true;
    }
  }
  return false;
}

ServingSpec parse_serving(const ConfigNode& workload, const ConfigNode* scheduler,
                          const ConfigNode* speculative, const ConfigNode* slo) {
  workload.allow_only({"phase", "arrivals", "requests", "input_tokens", "output_tokens", "seed"});
  ServingSpec serving;
  const ConfigNode& arrivals = workload.at("arrivals");
  arrivals.allow_only({"rate", "concurrency"});
  const ConfigNode* rate = arrivals.find("rate");
  const ConfigNode* concurrency = arrivals.find("concurrency");
  if ((rate == nullptr) == (concurrency == nullptr)) {
    arrivals.fail(
        "expected one of {rate: REQUESTS_PER_S} (Poisson arrivals) or {concurrency: N} "
        "(a closed loop of N clients)");
  }
  if (rate != nullptr) {
    serving.arrivals.rate_per_s = positive_serving_number(*rate);
  } else {
    serving.arrivals.concurrency = concurrency->as_positive_int();
  }
  serving.requests = workload.at("requests").as_positive_int();
  if (serving.requests > kMostRequests) {
    workload.at("requests")
        .fail(fmt::format("{} requests is more than rsim simulates ({})", serving.requests,
                          kMostRequests));
  }
  serving.input_tokens = parse_token_count(workload.at("input_tokens"), 1, "input_tokens");
  serving.output_tokens = parse_token_count(workload.at("output_tokens"), 1, "output_tokens");
  if (const ConfigNode* seed = workload.find("seed")) {
    serving.seed = static_cast<std::uint64_t>(seed->as_count());
  }
  if (scheduler != nullptr) {
    serving.scheduler = parse_scheduler(*scheduler);
  }
  if (!serving.scheduler.chunked_prefill &&
      serving.input_tokens.most() > serving.scheduler.max_batch_tokens) {
    workload.at("input_tokens")
        .fail(fmt::format("prompts of up to {} tokens never fit an iteration of {} tokens "
                          "(scheduler.max_batch_tokens) without chunked_prefill",
                          serving.input_tokens.most(), serving.scheduler.max_batch_tokens));
  }
  if (speculative != nullptr) {
    serving.speculative = parse_speculative(*speculative);
  }
  if (slo != nullptr) {
    slo->allow_only({"ttft", "tpot"});
    for (const auto& [key, target] :
         {std::pair{"ttft", &serving.slo.ttft_s}, std::pair{"tpot", &serving.slo.tpot_s}}) {
      if (const ConfigNode* node = slo->find(key)) {
        *target = node->as_quantity(Dimension::seconds);
        if (*target <= 0.0) {
          node->fail("expected a time > 0, e.g. 500 ms");
        }
      }
    }
  }
  return serving;
}

}  // namespace rsim
