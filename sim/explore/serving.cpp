// SPDX-License-Identifier: MIT
#include "sim/explore/serving.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <numbers>
#include <numeric>
#include <random>

namespace rsim {
namespace {

// A uniform double in [0, 1) from the top 53 bits of a std::mt19937_64 draw (the engine's output
// is fixed by the standard; the library's distributions are not, so none is used).
double uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11U) * 0x1.0p-53;
}

std::int64_t draw_tokens(const TokenCount& count, std::mt19937_64& engine) {
  switch (count.kind) {
    case TokenCount::Kind::fixed:
      return count.fixed;
    case TokenCount::Kind::uniform: {
      const auto span = static_cast<double>(count.maximum - count.minimum + 1);
      return std::min(count.maximum,
                      count.minimum + static_cast<std::int64_t>(uniform01(engine) * span));
    }
    case TokenCount::Kind::lognormal: {
      // Box–Muller: z = √(−2 ln u₁) · cos(2π u₂) is standard normal for u₁ in (0, 1].
      const double u1 = 1.0 - uniform01(engine);
      const double u2 = uniform01(engine);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      const double tokens = std::round(count.median * std::exp(count.sigma * z));
      return std::clamp(static_cast<std::int64_t>(std::min(tokens, 1e15)), count.minimum,
                        count.maximum);
    }
  }
  return count.fixed;
}

struct Request {
  double arrival = 0.0;
  std::int64_t input = 0;
  std::int64_t output = 0;
  std::int64_t prompt = 0;    ///< tokens to compute before decoding (after a preemption: more)
  std::int64_t computed = 0;  ///< of `prompt`
  std::int64_t cached = 0;    ///< tokens in its KV cache
  std::int64_t blocks = 0;
  double generated = 0.0;  ///< output tokens emitted (fractional when speculating)
  bool decoding = false;
  double scheduled = -1.0;
  double first_token = -1.0;
  double finish = -1.0;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Simulation {
 public:
  Simulation(const ServingSpec& serving, IterationCost& cost, IterationCost* draft,
             ServingClock clock)
      : serving_(serving),
        scheduler_(serving.scheduler),
        cost_(cost),
        draft_(draft),
        clock_(clock) {
    generate_requests();
    const Bytes resident = cost_.weights_and_activations(scheduler_.max_batch_tokens +
                                                         scheduler_.max_sequences * step_tokens());
    const double kv_budget = cost_.capacity().si() * scheduler_.memory_fraction - resident.si();
    const double block_bytes =
        cost_.kv_bytes_per_token() * static_cast<double>(scheduler_.block_tokens);
    if (kv_budget < block_bytes) {
      throw InputError(fmt::format(
          "serving: the weights and activations ({:.4g} GB per device) leave no room for a KV "
          "cache in {:.0f} % of {:.4g} GB (scheduler.memory_fraction): use more devices or "
          "smaller weights",
          resident.si() / 1e9, scheduler_.memory_fraction * 100.0, cost_.capacity().si() / 1e9));
    }
    total_blocks_ = block_bytes > 0.0
                        ? static_cast<std::int64_t>(std::min(kv_budget / block_bytes, 1e15))
                        : std::int64_t{1} << 50;
    free_blocks_ = total_blocks_;
    const std::int64_t longest =
        serving_.input_tokens.most() + serving_.output_tokens.most() + step_tokens();
    if (ceil_div(longest, scheduler_.block_tokens) > total_blocks_) {
      throw InputError(fmt::format(
          "serving: a request of {} tokens needs more KV cache than the {} tokens a device "
          "holds beside the weights",
          longest, total_blocks_ * scheduler_.block_tokens));
    }
  }

  ServingResult run();

 private:
  [[nodiscard]] std::int64_t step_tokens() const {
    return serving_.speculative ? serving_.speculative->tokens + 1 : 1;
  }
  void generate_requests();
  void release_arrivals();
  bool reserve(Request& request, std::int64_t tokens);
  void preempt(std::size_t position);
  bool schedule_decodes(Iteration& iteration, std::int64_t& budget);
  void schedule_prefills(Iteration& iteration, std::int64_t& budget, bool whole_prompts);
  void finish(std::size_t index);
  ServingResult summarize_run() const;

  const ServingSpec& serving_;
  const SchedulerSpec& scheduler_;
  IterationCost& cost_;
  IterationCost* draft_;
  ServingClock clock_;
  std::vector<Request> requests_;
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
  std::int64_t iterations_ = 0;
  std::int64_t preemptions_ = 0;
  double batch_tokens_ = 0.0;
  double running_time_ = 0.0;
  double occupancy_time_ = 0.0;
  double occupancy_peak_ = 0.0;
};

void Simulation::generate_requests() {
  std::mt19937_64 engine(serving_.seed);
  requests_.resize(static_cast<std::size_t>(serving_.requests));
  double clock = 0.0;
  for (Request& request : requests_) {
    if (serving_.arrivals.rate_per_s > 0.0) {
      // Poisson arrivals: exponential gaps, −ln(1 − u) / λ.
      clock += -std::log(1.0 - uniform01(engine)) / serving_.arrivals.rate_per_s;
      request.arrival = clock;
    }
    request.input = draw_tokens(serving_.input_tokens, engine);
    request.output = draw_tokens(serving_.output_tokens, engine);
    request.prompt = request.input;
  }
  released_ =
      serving_.arrivals.rate_per_s > 0.0
          ? requests_.size()
          : std::min(requests_.size(), static_cast<std::size_t>(serving_.arrivals.concurrency));
}

void Simulation::release_arrivals() {
  while (arrived_ < released_ && requests_[arrived_].arrival <= now_) {
    waiting_.push_back(arrived_++);
  }
}

// Blocks for `tokens` cached tokens of the request; false (nothing taken) where too few are free.
bool Simulation::reserve(Request& request, std::int64_t tokens) {
  const std::int64_t more = ceil_div(tokens, scheduler_.block_tokens) - request.blocks;
  if (more <= 0) {
    return true;
  }
  if (more > free_blocks_) {
    return false;
  }
  free_blocks_ -= more;
  request.blocks += more;
  return true;
}

// vLLM's recompute preemption: the request gives back its KV cache and queues first, to prefill
// its prompt and the tokens it has generated again.
void Simulation::preempt(std::size_t position) {
  const std::size_t index = running_[position];
  Request& request = requests_[index];
  free_blocks_ += request.blocks;
  request.blocks = 0;
  request.cached = 0;
  request.computed = 0;
  request.decoding = false;
  const auto emitted = static_cast<std::int64_t>(std::ceil(request.generated - 1e-9));
  request.prompt = request.input + std::max<std::int64_t>(emitted - 1, 0);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(position));
  waiting_.push_front(index);
  ++preemptions_;
}

// Every decoding sequence's next token(s), preempting the latest admitted where the KV cache is
// full; false where none decodes.
bool Simulation::schedule_decodes(Iteration& iteration, std::int64_t& budget) {
  const std::int64_t tokens = step_tokens();
  for (std::size_t position = 0; position < running_.size(); ++position) {
    Request& request = requests_[running_[position]];
    if (!request.decoding) {
      continue;
    }
    if (budget < tokens) {
      break;
    }
    bool preempted_itself = false;
    while (!reserve(request, request.cached + tokens)) {
      preempted_itself = running_.size() - 1 == position;
      preempt(running_.size() - 1);
      if (preempted_itself) {
        break;
      }
    }
    if (preempted_itself) {
      break;  // it was the latest admitted: every later one is preempted too
    }
    decoding_.push_back(running_[position]);
    iteration.decode_context += request.cached;
    ++iteration.decode_sequences;
    budget -= tokens;
  }
  return iteration.decode_sequences > 0;
}

// Prompts: the running ones' next chunks, then new ones while the sequences, the token budget
// and the KV cache allow (`whole_prompts`: a prompt only whole, as without chunked prefill).
void Simulation::schedule_prefills(Iteration& iteration, std::int64_t& budget, bool whole_prompts) {
  const auto add_chunk = [&](std::size_t index) {
    Request& request = requests_[index];
    const std::int64_t left = request.prompt - request.computed;
    const std::int64_t chunk = std::min(left, budget);
    if (chunk <= 0 || (whole_prompts && chunk < left) ||
        !reserve(request, request.computed + chunk)) {
      return false;
    }
    iteration.chunks.push_back({chunk, request.computed, chunk == left});
    chunked_.emplace_back(index, chunk);
    budget -= chunk;
    return true;
  };
  for (const std::size_t index : running_) {
    if (!requests_[index].decoding && !add_chunk(index)) {
      return;
    }
  }
  while (!waiting_.empty() && budget > 0 &&
         static_cast<std::int64_t>(running_.size()) < scheduler_.max_sequences) {
    const std::size_t index = waiting_.front();
    if (!add_chunk(index)) {
      return;
    }
    waiting_.pop_front();
    running_.push_back(index);
    Request& request = requests_[index];
    if (request.scheduled < 0.0) {
      request.scheduled = now_;
    }
  }
}

void Simulation::finish(std::size_t index) {
  Request& request = requests_[index];
  request.finish = now_;
  free_blocks_ += request.blocks;
  request.blocks = 0;
  ++finished_;
  if (serving_.arrivals.concurrency > 0 && released_ < requests_.size()) {
    // The client sends its next request now (a closed loop with no think time).
    requests_[released_++].arrival = now_;
  }
}

ServingResult Simulation::run() {
  const double emitted_per_step =
      serving_.speculative ? serving_.speculative->tokens_per_step() : 1.0;
  while (finished_ < requests_.size()) {
    release_arrivals();
    if (running_.empty() && waiting_.empty()) {
      RSIM_CHECK(arrived_ < released_, "unfinished requests are queued, running or yet to come");
      now_ = requests_[arrived_].arrival;
      continue;
    }
    Iteration iteration;
    iteration.tokens_per_sequence = step_tokens();
    decoding_.clear();
    chunked_.clear();
    std::int64_t budget = scheduler_.max_batch_tokens;
    if (scheduler_.chunked_prefill) {
      schedule_decodes(iteration, budget);
      schedule_prefills(iteration, budget, false);
    } else {
      // vLLM V0: prompts first, whole, in an iteration of their own; else every decode.
      schedule_prefills(iteration, budget, true);
      if (iteration.chunks.empty()) {
        schedule_decodes(iteration, budget);
      }
    }
    if (decoding_.empty() && chunked_.empty()) {
      // Partial prompts hold the KV cache and none can go on: give back the latest's.
      RSIM_CHECK(!running_.empty(), "a request that fits the KV cache alone is scheduled");
      preempt(running_.size() - 1);
      continue;
    }
    IterationTimes times = cost_.cost(iteration);
    if (draft_ != nullptr && iteration.decode_sequences > 0) {
      // The draft proposes k tokens: k decode steps of the draft model at the same contexts.
      const double mean_context = static_cast<double>(iteration.decode_context) /
                                  static_cast<double>(iteration.decode_sequences);
      times += draft_->decode_step(iteration.decode_sequences, mean_context)
                   .scaled(static_cast<double>(serving_.speculative->tokens));
    }
    const double step = clock_ == ServingClock::expected ? times.expected : times.lower;
    RSIM_CHECK(step > 0.0 && std::isfinite(step), "an iteration takes a positive time");
    ++iterations_;
    batch_tokens_ += static_cast<double>(scheduler_.max_batch_tokens - budget);
    running_time_ += static_cast<double>(running_.size()) * step;
    const double occupancy =
        static_cast<double>(total_blocks_ - free_blocks_) / static_cast<double>(total_blocks_);
    occupancy_time_ += occupancy * step;
    occupancy_peak_ = std::max(occupancy_peak_, occupancy);
    now_ += step;
    std::vector<std::size_t> done;
    for (const std::size_t index : decoding_) {
      Request& request = requests_[index];
      request.generated =
          std::min(static_cast<double>(request.output), request.generated + emitted_per_step);
      request.cached =
          request.input + static_cast<std::int64_t>(std::ceil(request.generated - 1e-9)) - 1;
      if (request.generated >= static_cast<double>(request.output) - 1e-9) {
        done.push_back(index);
      }
    }
    for (const auto& [index, chunk] : chunked_) {
      Request& request = requests_[index];
      request.computed += chunk;
      request.cached = request.computed;
      if (request.computed < request.prompt) {
        continue;
      }
      request.decoding = true;
      if (request.first_token < 0.0) {
        request.first_token = now_;  // the prompt's last logits give the first output token
        request.generated = 1.0;
        if (request.output == 1) {
          done.push_back(index);
        }
      }
    }
    for (const std::size_t index : done) {
      finish(index);
    }
    if (!done.empty()) {
      std::erase_if(running_, [&](std::size_t index) { return requests_[index].finish >= 0.0; });
    }
  }
  return summarize_run();
}

ServingResult Simulation::summarize_run() const {
  const ServingSlo& slo = serving_.slo;
  ServingResult result;
  result.clock = clock_;
  result.requests = static_cast<std::int64_t>(requests_.size());
  result.devices = cost_.devices();
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  std::vector<double> queueing;
  double first_arrival = requests_.front().arrival;
  double last_finish = 0.0;
  double output_tokens = 0.0;
  double input_tokens = 0.0;
  std::int64_t good = 0;
  for (const Request& request : requests_) {
    first_arrival = std::min(first_arrival, request.arrival);
    last_finish = std::max(last_finish, request.finish);
    output_tokens += static_cast<double>(request.output);
    input_tokens += static_cast<double>(request.input);
    ttft.push_back(request.first_token - request.arrival);
    e2e.push_back(request.finish - request.arrival);
    queueing.push_back(request.scheduled - request.arrival);
    double per_token = 0.0;
    if (request.output > 1) {
      per_token = (request.finish - request.first_token) / static_cast<double>(request.output - 1);
      tpot.push_back(per_token);
    }
    const bool ttft_ok = slo.ttft_s <= 0.0 || ttft.back() <= slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0.0 || per_token <= slo.tpot_s;
    good += ttft_ok && tpot_ok ? 1 : 0;
  }
  result.makespan_s = last_finish - first_arrival;
  result.ttft = summarize(std::move(ttft));
  result.tpot = summarize(std::move(tpot));
  result.e2e = summarize(std::move(e2e));
  result.queueing = summarize(std::move(queueing));
  result.requests_per_s = static_cast<double>(result.requests) / result.makespan_s;
  result.output_tokens_per_s = output_tokens / result.makespan_s;
  result.input_tokens_per_s = input_tokens / result.makespan_s;
  result.iterations = iterations_;
  result.preemptions = preemptions_;
  result.mean_batch_tokens =
      batch_tokens_ / static_cast<double>(std::max<std::int64_t>(iterations_, 1));
  result.mean_running = running_time_ / result.makespan_s;
  result.kv_occupancy_mean = occupancy_time_ / result.makespan_s;
  result.kv_occupancy_peak = occupancy_peak_;
  result.kv_capacity_tokens = total_blocks_ * scheduler_.block_tokens;
  if (serving_.speculative) {
    result.tokens_per_step = serving_.speculative->tokens_per_step();
  }
  if (slo.any()) {
    result.goodput_requests_per_s = static_cast<double>(good) / result.makespan_s;
  }
  if (serving_.arrivals.rate_per_s > 0.0) {
    result.offered_requests_per_s = serving_.arrivals.rate_per_s;
    // Saturation: the queue (arrived, not yet scheduled) holds ≥ 5 % of the requests at the
    // last arrival and grew by half since the arrivals' midpoint: it grows as long as requests
    // arrive, so the latencies would measure the run's length. (A stable engine's queue stays
    // near empty; completions lag arrivals by a request's latency either way, so they are not
    // compared.) The capacity: requests admitted per second over the second half.
    const double last_arrival = requests_.back().arrival;
    const double half = last_arrival / 2.0;
    const auto queued_at = [&](double time) {
      return std::count_if(requests_.begin(), requests_.end(), [&](const Request& request) {
        return request.arrival <= time && request.scheduled > time;
      });
    };
    const auto queued = static_cast<double>(queued_at(last_arrival));
    result.saturated = queued >= 0.05 * static_cast<double>(result.requests) &&
                       queued >= 1.5 * static_cast<double>(queued_at(half));
    if (result.saturated) {
      const auto admitted =
          std::count_if(requests_.begin(), requests_.end(), [&](const Request& request) {
            return request.scheduled > half && request.scheduled <= last_arrival;
          });
      result.capacity_requests_per_s = static_cast<double>(admitted) / (last_arrival - half);
    }
  }
  return result;
}

}  // namespace

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) {
    return 0.0;
  }
  const double rank = (static_cast<double>(sorted.size()) - 1.0) * p / 100.0;
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - static_cast<double>(below));
}

LatencySummary summarize(std::vector<double> values) {
  LatencySummary summary;
  summary.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) {
    return summary;
  }
  std::sort(values.begin(), values.end());
  summary.mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  summary.p50 = percentile(values, 50.0);
  summary.p90 = percentile(values, 90.0);
  summary.p99 = percentile(values, 99.0);
  return summary;
}

std::unique_ptr<IterationCost> serving_cost(const Scenario& scenario, const Roofs& roofs) {
  RSIM_CHECK(scenario.serving.has_value(), "a serving scenario");
  const ServingSpec& serving = *scenario.serving;
  std::vector<std::int64_t> exact;
  if (serving.input_tokens.kind == TokenCount::Kind::fixed) {
    exact.push_back(serving.input_tokens.fixed);
  }
  const std::int64_t least = serving.input_tokens.kind == TokenCount::Kind::fixed
                                 ? serving.input_tokens.fixed
                                 : serving.input_tokens.minimum;
  return std::make_unique<IterationCost>(scenario, roofs, least,
                                         serving.input_tokens.most() + serving.output_tokens.most(),
                                         std::move(exact));
}

std::unique_ptr<IterationCost> draft_cost(const Scenario& scenario, const Roofs& roofs) {
  if (!scenario.serving || !scenario.serving->speculative) {
    return nullptr;
  }
  Scenario draft = scenario;
  draft.model = scenario.serving->speculative->draft;
  draft.serving.reset();
  pad_vocabulary(draft);
  const ServingSpec& serving = *scenario.serving;
  return std::make_unique<IterationCost>(
      draft, roofs,
      serving.input_tokens.kind == TokenCount::Kind::fixed ? serving.input_tokens.fixed
                                                           : serving.input_tokens.minimum,
      serving.input_tokens.most() + serving.output_tokens.most(), std::vector<std::int64_t>{});
}

ServingResult simulate_serving(const ServingSpec& serving, IterationCost& cost,
                               IterationCost* draft, ServingClock clock) {
  Simulation simulation(serving, cost, draft, clock);
  return simulation.run();
}

ServingResult simulate_serving(const Scenario& scenario, const Roofs& roofs, ServingClock clock) {
  const std::unique_ptr<IterationCost> cost = serving_cost(scenario, roofs);
  const std::unique_ptr<IterationCost> draft = draft_cost(scenario, roofs);
  return simulate_serving(*scenario.serving, *cost, draft.get(), clock);
}

}  // namespace rsim
