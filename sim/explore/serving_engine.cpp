// SPDX-License-Identifier: MIT
#include "sim/explore/serving_engine.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace rsim {
namespace {

// A uniform double in [0, 1) from the top 53 bits of a std::mt19937_64 draw (the engine's output
// is fixed by the standard; the library's distributions are not, so none is used).
double uniform01(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11U) * 0x1.0p-53;
}

std::int64_t draw_tokens(const TokenCount& count, std::mt19937_64& engine, std::size_t index) {
  switch (count.kind) {
    case TokenCount::Kind::trace:
      return count.trace[index % count.trace.size()];
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

std::int64_t ceil_divide(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<ServingRequest> make_requests(const ServingSpec& serving) {
  std::mt19937_64 engine(serving.seed);
  std::vector<ServingRequest> requests(static_cast<std::size_t>(serving.requests));
  double clock = 0.0;
  for (ServingRequest& request : requests) {
    if (serving.arrivals.rate_per_s > 0.0) {
      // Poisson arrivals: exponential gaps, −ln(1 − u) / λ.
      clock += -std::log(1.0 - uniform01(engine)) / serving.arrivals.rate_per_s;
      request.arrival = clock;
      request.submitted = clock;
    }
    const auto index = static_cast<std::size_t>(&request - requests.data());
    request.input = draw_tokens(serving.input_tokens, engine, index);
    request.output = draw_tokens(serving.output_tokens, engine, index);
    request.prompt = request.input;
  }
  return requests;
}

ServingEngine::ServingEngine(const ServingSpec& serving, IterationCost& cost, IterationCost* draft,
                             ServingClock clock, std::vector<ServingRequest> requests)
    : serving_(serving),
      scheduler_(serving.scheduler),
      cost_(cost),
      draft_(draft),
      clock_(clock),
      requests_(std::move(requests)) {
  released_ =
      serving_.arrivals.concurrency > 0
          ? std::min(requests_.size(), static_cast<std::size_t>(serving_.arrivals.concurrency))
          : requests_.size();
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
  if (ceil_divide(longest, scheduler_.block_tokens) > total_blocks_) {
    throw InputError(fmt::format(
        "serving: a request of {} tokens needs more KV cache than the {} tokens a device "
        "holds beside the weights",
        longest, total_blocks_ * scheduler_.block_tokens));
  }
  stats_.kv_capacity_tokens = total_blocks_ * scheduler_.block_tokens;
}

void ServingEngine::release_arrivals() {
  while (arrived_ < released_ && requests_[arrived_].arrival <= now_) {
    waiting_.push_back(arrived_++);
  }
}

// Blocks for `tokens` cached tokens of the request; false (nothing taken) where too few are free.
bool ServingEngine::reserve(ServingRequest& request, std::int64_t tokens) {
  const std::int64_t more = ceil_divide(tokens, scheduler_.block_tokens) - request.blocks;
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
void ServingEngine::preempt(std::size_t position) {
  const std::size_t index = running_[position];
  ServingRequest& request = requests_[index];
  free_blocks_ += request.blocks;
  request.blocks = 0;
  request.cached = 0;
  request.computed = 0;
  request.decoding = false;
  request.prefilled = false;  // its cache is gone: it prefills again here
  const auto emitted = static_cast<std::int64_t>(std::ceil(request.generated - 1e-9));
  request.prompt = request.input + std::max<std::int64_t>(emitted - 1, 0);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(position));
  waiting_.push_front(index);
  ++stats_.preemptions;
}

// Every decoding sequence's next token(s), preempting the latest admitted where the KV cache is
// full.
void ServingEngine::schedule_decodes(Iteration& iteration, std::int64_t& budget) {
  const std::int64_t tokens = step_tokens();
  for (std::size_t position = 0; position < running_.size(); ++position) {
    ServingRequest& request = requests_[running_[position]];
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
}

// Prompts: the running ones' next chunks, then new ones while the sequences, the token budget
// and the KV cache allow (`whole_prompts`: a prompt only whole, as without chunked prefill).
std::int64_t ServingEngine::schedule_prefills(Iteration& iteration, std::int64_t& budget,
                                              bool whole_prompts) {
  std::int64_t admitted_prefilled = 0;
  const auto add_chunk = [&](std::size_t index) {
    ServingRequest& request = requests_[index];
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
      return admitted_prefilled;
    }
  }
  while (!waiting_.empty() && budget > 0 &&
         static_cast<std::int64_t>(running_.size()) < scheduler_.max_sequences) {
    const std::size_t index = waiting_.front();
    ServingRequest& arriving = requests_[index];
    if (arriving.prefilled && arriving.computed == 0) {
      // Its prompt's KV cache arrives from the prefill pool: blocks for it, no compute.
      if (!reserve(arriving, arriving.prompt)) {
        return admitted_prefilled;
      }
      arriving.computed = arriving.prompt;
      arriving.cached = arriving.prompt;
      arriving.decoding = true;
      ++admitted_prefilled;
    } else if (!add_chunk(index)) {
      return admitted_prefilled;
    }
    waiting_.pop_front();
    running_.push_back(index);
    if (arriving.scheduled < 0.0) {
      arriving.scheduled = now_;
    }
  }
  return admitted_prefilled;
}

void ServingEngine::finish(std::size_t index) {
  ServingRequest& request = requests_[index];
  request.finish = now_;
  free_blocks_ += request.blocks;
  request.blocks = 0;
  ++finished_;
  if (serving_.arrivals.concurrency > 0 && released_ < requests_.size()) {
    // The client sends its next request now (a closed loop with no think time).
    requests_[released_].arrival = now_;
    requests_[released_++].submitted = now_;
  }
}

void ServingEngine::run() {
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
    std::int64_t admitted = 0;
    if (scheduler_.chunked_prefill) {
      schedule_decodes(iteration, budget);
      admitted = schedule_prefills(iteration, budget, false);
    } else {
      // vLLM V0: prompts first, whole, in an iteration of their own; else every decode.
      admitted = schedule_prefills(iteration, budget, true);
      if (iteration.chunks.empty()) {
        schedule_decodes(iteration, budget);
      }
    }
    if (decoding_.empty() && chunked_.empty() && admitted > 0) {
      continue;  // only prefilled arrivals joined: they decode from the next iteration
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
    ++stats_.iterations;
    stats_.batch_tokens += static_cast<double>(scheduler_.max_batch_tokens - budget);
    stats_.running_time += static_cast<double>(running_.size()) * step;
    const double occupancy =
        static_cast<double>(total_blocks_ - free_blocks_) / static_cast<double>(total_blocks_);
    stats_.occupancy_time += occupancy * step;
    stats_.occupancy_peak = std::max(stats_.occupancy_peak, occupancy);
    now_ += step;
    std::vector<std::size_t> done;
    for (const std::size_t index : decoding_) {
      ServingRequest& request = requests_[index];
      request.generated =
          std::min(static_cast<double>(request.output), request.generated + emitted_per_step);
      request.cached =
          request.input + static_cast<std::int64_t>(std::ceil(request.generated - 1e-9)) - 1;
      if (request.generated >= static_cast<double>(request.output) - 1e-9) {
        done.push_back(index);
      }
    }
    for (const auto& [index, chunk] : chunked_) {
      ServingRequest& request = requests_[index];
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
}

}  // namespace rsim
