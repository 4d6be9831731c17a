// SPDX-License-Identifier: MIT
#include "sim/report/text_run_phases.hpp"

#include "sim/report/format.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

namespace rsim {
namespace {

using Align = TextTable::Align;

std::string tokens_per_second(double tokens, PhaseTimes time) {
  return fmt::format("{} … {}", format_plain(tokens / time.upper.si()),
                     format_plain(tokens / time.lower.si()));
}

}  // namespace

void write_training(std::ostream& out, const RunResult& result) {
  const Scenario& scenario = result.scenario;
  if (scenario.workload.phase != Phase::train) {
    return;
  }
  write_wrapped(out, "Training step by pass (per device, all microbatches)");
  TextTable table({{"pass", Align::left},
                   {"FLOPs"},
                   {"ΣT_math"},
                   {"ΣT_mem"},
                   {"ΣT_net"},
                   {"lower"},
                   {"upper"}});
  Flops model_flops;
  for (const PassTotals& pass : pass_totals(result.graph, result.table)) {
    table.add_row({std::string(to_string(pass.pass)), format_count(pass.flops.si()),
                   seconds(pass.t_math), seconds(pass.t_mem), seconds(pass.t_net),
                   seconds(pass.t_lower), seconds(pass.t_upper)});
    if (pass.pass == Pass::forward || pass.pass == Pass::backward) {
      model_flops += pass.flops;
    }
  }
  table.print(out, "  ");
  const Totals& total = result.bounds.total;
  const Workload& workload = scenario.workload;
  const double tokens = static_cast<double>(workload.batch) * static_cast<double>(workload.seq_len);
  const double devices = static_cast<double>(scenario.plan.devices());
  const double peak = result.roofs.find_path(scenario.precision.compute)->peak.si();
  // MFU: the forward and backward FLOPs (not recomputation's) over the peak for the step time;
  // the expected step's first, as a run reports it.
  write_wrapped(
      out,
      fmt::format(
          "step {} … {}, expected {} (critical path {}); {} tokens/s expected in all, {} per "
          "device ({} … {} between the bounds); MFU {} expected ({} … {} between the bounds)",
          seconds(total.t_lower), seconds(total.t_upper), seconds(total.t_expected),
          seconds(total.t_critical), format_count(tokens / total.t_expected.si()),
          format_count(tokens / devices / total.t_expected.si()),
          format_count(tokens / total.t_upper.si()), format_count(tokens / total.t_lower.si()),
          percent(model_flops.si() / (peak * total.t_expected.si())),
          percent(model_flops.si() / (peak * total.t_upper.si())),
          percent(model_flops.si() / (peak * total.t_lower.si()))),
      "  ", "    ");
  if (result.pipeline) {
    const PipelineSchedule& pipeline = *result.pipeline;
    write_wrapped(
        out,
        fmt::format(
            "pipeline: {} stages × {} microbatches{} (1F1B): bubble (p − 1)/(v·m + p − 1) = {} of "
            "the step, {} … {} added to the bounds",
            pipeline.stages, pipeline.microbatches,
            pipeline.chunks > 1 ? fmt::format(" × {} chunks", pipeline.chunks) : std::string(),
            percent(pipeline.bubble_fraction), seconds(pipeline.bubble_lower),
            seconds(pipeline.bubble_upper)),
        "  ", "    ");
  }
  for (const AxisThreshold& threshold : result.training_thresholds) {
    if (threshold.data) {
      write_wrapped(
          out,
          fmt::format(
              "data axis '{}' ({} over {}): the {} pass is compute-bound above {} tokens per data "
              "shard (B/X > C/W; T_net {} vs T_math {}); this step has {}{}",
              threshold.mesh_axis, threshold.size, threshold.network, to_string(threshold.pass),
              format_count(threshold.critical_tokens_per_shard), seconds(threshold.t_net),
              seconds(threshold.t_math), format_count(threshold.tokens_per_shard),
              threshold.tokens_per_shard >= threshold.critical_tokens_per_shard
                  ? " (compute-bound)"
                  : " (network-bound)"),
          "  ", "    ");
    } else {
      write_wrapped(
          out,
          fmt::format(
              "tensor axis '{}' ({} over {}): the {} pass stays compute-bound up to {}-way (Y < "
              "F·W/C; T_net {} vs T_math {} at {}-way){}",
              threshold.mesh_axis, threshold.size, threshold.network, to_string(threshold.pass),
              threshold.largest_degree, seconds(threshold.t_net), seconds(threshold.t_math),
              threshold.size,
              threshold.beyond_domain ? fmt::format(", beyond the {} domain", threshold.network)
                                      : std::string()),
          "  ", "    ");
    }
  }
  if (result.fsdp_tp) {
    const FsdpTpSplit& split = *result.fsdp_tp;
    write_wrapped(
        out,
        fmt::format(
            "FSDP + TP over {} devices: best split {} data × {} tensor (forward T_FSDP {}, T_TP {} "
            "vs T_math {}); compute-bound above {} tokens per device with {} × {} (this step: {})",
            split.data * split.tensor, split.data, split.tensor, seconds(split.t_fsdp),
            seconds(split.t_tensor), seconds(split.t_math),
            split.min_tokens_per_device > 0.0 ? format_count(split.min_tokens_per_device)
                                              : std::string("never"),
            split.min_tokens_data, split.data * split.tensor / split.min_tokens_data,
            format_count(split.tokens_per_device)),
        "  ", "    ");
  }
  out << '\n';
}

void write_decode(std::ostream& out, const RunResult& result) {
  if (result.scenario.workload.phase != Phase::decode) {
    return;
  }
  const Totals& total = result.bounds.total;
  const double batch = static_cast<double>(result.scenario.workload.batch);
  const double devices = static_cast<double>(result.scenario.plan.devices());
  const PhaseTimes step{total.t_lower, total.t_upper, total.t_expected};
  // One step emits one token per sequence: tokens/s = batch / step time.
  write_wrapped(
      out, fmt::format(
               "Decode step ({} cached tokens): {} … {} (expected {}); {} tokens/s in all, {} per "
               "device ({} device{}).",
               result.scenario.workload.context, seconds(step.lower), seconds(step.upper),
               seconds(step.expected), tokens_per_second(batch, step),
               tokens_per_second(batch / devices, step), devices, devices > 1.0 ? "s" : ""));
  if (result.decode_critical) {
    const DecodeCritical& critical = *result.decode_critical;
    std::string matmuls = "no matmul with a batch axis";
    if (critical.matmuls) {
      matmuls = describe_critical(critical.matmuls);
      if (critical.matmuls->kind == CriticalBatch::Kind::at) {
        matmuls = fmt::format("{} sequences per device", format_count(critical.matmuls->tokens));
        if (critical.replicas > 1.0) {
          matmuls += fmt::format(" ({} in all over {} data replicas)",
                                 format_count(critical.matmuls->tokens * critical.replicas),
                                 format_plain(critical.replicas));
        }
      }
    }
    write_wrapped(
        out,
        fmt::format(
            "Critical decode batch: the step's matmuls (weights read once, shared by the batch) "
            "reach the ridge ({} FLOP/B) at {}; attention stays on the memory roof at {} "
            "FLOP/B (G = {} query heads per KV head) whatever the batch.",
            format_plain(critical.ridge), matmuls, format_plain(critical.attention_intensity, 3),
            critical.group_size));
  }
  if (result.request) {
    const DecodeRequest& request = *result.request;
    const PhaseTimes whole = request.total();
    const PhaseTimes per_token = request.per_output_token();
    const double outputs = batch * static_cast<double>(request.steps + 1);
    write_wrapped(
        out,
        fmt::format(
            "Request: prefill of {} prompt tokens (time to first token) {} … {}; {} decode steps "
            "({} … {} cached tokens: {} … {} per step at the first, {} … {} at the last) {} … {}; "
            "total {} … {}; {} … {} per output token after the first; {} output tokens per "
            "sequence: {} tokens/s in all, {} per device. Σ steps {}.",
            request.prompt_tokens, seconds(request.prefill.lower), seconds(request.prefill.upper),
            request.steps, request.prompt_tokens, request.prompt_tokens + request.steps - 1,
            seconds(request.first_step.lower), seconds(request.first_step.upper),
            seconds(request.last_step.lower), seconds(request.last_step.upper),
            seconds(request.decode.lower), seconds(request.decode.upper), seconds(whole.lower),
            seconds(whole.upper), seconds(per_token.lower), seconds(per_token.upper),
            request.steps + 1, tokens_per_second(outputs, whole),
            tokens_per_second(outputs / devices, whole),
            request.affine ? "exact from the two ends: the step time is affine in the context"
                           : fmt::format("over every step ({} cost-model runs): the step time is "
                                         "not affine in the context",
                                         request.evaluations)));
  }
}

}  // namespace rsim
