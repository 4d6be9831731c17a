// SPDX-License-Identifier: MIT
#include "sim/analysis/schedule.hpp"

#include <algorithm>

namespace rsim {

void RowSums::add(const CostTable& table, std::size_t row, double row_time, double network_time) {
  const auto index = static_cast<Eigen::Index>(row);
  const double count = table.counts(index);
  lower += row_time * count;
  upper += table.times.row(index).sum() * count;
  math += table.times(index, CostTable::kMathColumn) * count;
  memory += table.times(index, CostTable::kMemoryColumn) * count;
  network += network_time * count;
}

namespace {

// The largest share of compute a collective on `network` ("nvlink+ib") takes while it overlaps.
double usage_of(const Roofs& roofs, std::string_view network) {
  double usage = 0.0;
  for (const NetworkTier* tier : roofs.find_networks(network)) {
    usage = std::max(usage, tier->processor_usage);
  }
  return usage;
}

// Whether a collective on `network` ("nvlink", "nvlink+ib") runs on the innermost tier alone.
bool innermost_only(const Roofs& roofs, std::string_view network) {
  const std::vector<const NetworkTier*> tiers = roofs.find_networks(network);
  return tiers.size() == 1 && !roofs.network.empty() && tiers.front() == &roofs.network.front();
}

// Which time of each row a view of the schedule's sums takes.
enum class RowTime { max, expected, device };

// schedule_inputs with each row's time taken as its max, its expected time or its device time.
ScheduleInputs view_inputs(const Scenario& scenario, const OpGraph& graph, const CostTable& table,
                           const Bounds& bounds, const Footprint& footprint,
                           const std::optional<TrainingMemory>& memory,
                           const ParameterCount& parameters, const Roofs& roofs, RowTime view) {
  const bool expected = view == RowTime::expected;
  // The stage-boundary sends run once per microbatch and chunk; the pipelined work is every
  // row but the optimizer's. The weight gradients' reductions over the data axis (all-reduce,
  // or reduce-scatter under ZeRO) and the backward pass's device work decide what overlapping
  // them can hide; the tensor axis's all-gathers and reduce-scatters and the matmuls they feed,
  // what a collective matmul can.
  ScheduleInputs inputs;
  const Plan& plan = scenario.plan;
  const std::optional<std::string> tensor_axis = plan.mesh_axis_for(logical_axis::mlp, false);
  const std::optional<std::string> data_axis = plan.data_axis();
  for (std::size_t row = 0; row < table.order.size(); ++row) {
    const Op& op = graph.op(table.order[row]);
    const auto index = static_cast<Eigen::Index>(row);
    const double row_time = expected                  ? table.expected(index)
                            : view == RowTime::device ? device_time(table, index)
                                                      : table.times.row(index).maxCoeff();
    const double row_lower = row_time * table.counts(index);
    const bool collective = op.kind == OpKind::collective;
    // What the overlaps hide is the collectives' time in this view: T_net, or expected.
    const double network_time =
        expected ? (collective ? row_time : 0.0) : table.times(index, CostTable::kNetworkColumn);
    const bool send = op.role == CollectiveRole::pipeline_send;
    if (send) {
      inputs.sends.add(table, row, row_time, network_time);
    }
    if (op.pass == Pass::optimizer) {
      inputs.optimizer_lower += row_lower;
      if (collective && op.role == CollectiveRole::weight_gather) {
        inputs.optimizer_gathers += row_lower;
        inputs.weights_usage = std::max(inputs.weights_usage, usage_of(roofs, op.network));
      }
      continue;
    }
    inputs.work.add(table, row, row_time, network_time);
    PassSums& group = op.pass == Pass::forward ? inputs.forward : inputs.backward;
    group.lower += row_lower;
    if (send) {
      group.sends += row_lower;
    }
    // Only inside the innermost network domain: the collective matmuls run on peer memory
    // (Transformer Engine's Userbuffers need CUDA multicast or IPC handles, NVLink only:
    // TransformerEngine issue 1071; XLA's over one ICI slice), so an axis whose collectives run
    // over another tier (ib, nvlink+ib, dcn) keeps them after their matmuls.
    if (collective && op.mesh_axis == tensor_axis &&
        (op.collective.kind == CollectiveKind::all_gather ||
         op.collective.kind == CollectiveKind::reduce_scatter) &&
        innermost_only(roofs, op.network)) {
      group.tensor_collectives += row_lower;
      inputs.tensor_usage = std::max(inputs.tensor_usage, usage_of(roofs, op.network));
    }
    if (op.kind == OpKind::matmul) {
      group.matmuls += row_lower;
    }
    if (collective && op.role == CollectiveRole::weight_gather) {
      group.weight_gathers += row_lower;
      inputs.weights_usage = std::max(inputs.weights_usage, usage_of(roofs, op.network));
    }
    if (!collective) {
      group.device += row_lower;
    }
    if (op.role == CollectiveRole::gradient_reduction && op.pass == Pass::backward &&
        op.mesh_axis == data_axis &&
        (op.collective.kind == CollectiveKind::all_reduce ||
         op.collective.kind == CollectiveKind::reduce_scatter)) {
      inputs.gradients.add(table, row, row_time, network_time);
      inputs.gradient_usage = std::max(inputs.gradient_usage, usage_of(roofs, op.network));
    }
    if (!collective && op.pass == Pass::backward) {
      inputs.backward_device +=
          (expected ? row_time : device_time(table, index)) * table.counts(index);
    }
  }
  inputs.ops = bounds.total;
  if (expected) {
    inputs.ops.t_lower = bounds.total.t_expected;
  }
  if (view == RowTime::device) {
    inputs.ops.t_lower = Seconds(inputs.work.lower + inputs.optimizer_lower);
  }
  inputs.footprint = footprint;
  inputs.stages = pipeline_stages(plan);
  inputs.microbatches = scenario.workload.training.microbatches;
  if (tensor_axis) {
    inputs.tensor = plan.find_axis(*tensor_axis)->size;
  }
  const double layers = static_cast<double>(scenario.model.stages.front().component.num_layers);
  inputs.layers_held = layers / static_cast<double>(inputs.stages);
  // Without host memory only the no-offload choice exists and moves 0 bytes (over any rate).
  inputs.host_bandwidth = roofs.host_memory ? roofs.host_memory->bandwidth.si() : 1.0;
  inputs.host_capacity = roofs.host_memory ? roofs.host_memory->capacity.si() : 0.0;
  if (memory) {
    // What offloading moves and keeps: the layers' share of the weights and optimizer state,
    // and the saved activations by layer.
    const double layer_share = static_cast<double>(parameters.layers) /
                               static_cast<double>(std::max<std::int64_t>(parameters.total(), 1));
    OffloadBytes& offload = inputs.offload;
    offload.weights = footprint.weights.si() * layer_share;
    offload.optimizer = footprint.optimizer_state.si() * layer_share;
    offload.activations = memory->layer_saved.si() * memory->layers * memory->in_flight;
    offload.per_microbatch = memory->layer_saved.si() * memory->layers;
    offload.resident_share = std::min(1.0, 2.0 / std::max(memory->layers, 1.0));
    // Offloaded, HBM keeps the head's, one layer's being written or read and the next one's in
    // flight over the link, and full recomputation's working set.
    offload.hbm_activations =
        (memory->layer_saved * 2.0 + memory->recompute_working + memory->head).si();
  }
  return inputs;
}

}  // namespace

ScheduleInputs schedule_inputs(const Scenario& scenario, const OpGraph& graph,
                               const CostTable& table, const Bounds& bounds,
                               const Footprint& footprint,
                               const std::optional<TrainingMemory>& memory,
                               const ParameterCount& parameters, const Roofs& roofs) {
  ScheduleInputs inputs = view_inputs(scenario, graph, table, bounds, footprint, memory, parameters,
                                      roofs, RowTime::max);
  inputs.expected = std::make_shared<const ScheduleInputs>(view_inputs(
      scenario, graph, table, bounds, footprint, memory, parameters, roofs, RowTime::expected));
  inputs.device = std::make_shared<const ScheduleInputs>(view_inputs(
      scenario, graph, table, bounds, footprint, memory, parameters, roofs, RowTime::device));
  return inputs;
}

StepTimes schedule_step(const ScheduleInputs& in, const Training& choice) {
  StepTimes out;
  const double microbatches = static_cast<double>(in.microbatches);
  const TrainingOffload& offload = choice.offload;
  // Overlapped (PyTorch DDP's bucketed all-reduce, Megatron's overlap_grad_reduce): the
  // reductions start layer by layer during the last microbatch's backward, after which the
  // step's gradients are complete; what that backward cannot cover stays exposed, and never
  // less than the last layer's share (its gradient is ready only at the end):
  // exposed = max(G/ℓ, G − B/m), G the reductions' time, B the step's backward device time,
  // ℓ the layers one device holds.
  const double exposed_overlapped =
      std::max(in.gradients.network / in.layers_held,
               in.gradients.network - in.backward_device / microbatches);
  const double gradients_hidden = in.gradients.network - exposed_overlapped;
  // Collective matmul (scaling book sharding.md; Wang et al. 2023): a ring all-gather or
  // reduce-scatter over t devices split into t − 1 steps, each under one of the t chunks of its
  // matmul; one chunk has no transfer to hide, so a pair takes G/t + max((t−1)·G/t, C) and
  // exposes max(0, C − (t−1)/t·G) of its C. Summed over a pass's collectives and matmuls.
  const double ring = static_cast<double>(in.tensor - 1) / static_cast<double>(in.tensor);
  const auto tensor_hidden = [&](const PassSums& sums) {
    return sums.tensor_collectives - std::max(0.0, sums.tensor_collectives - ring * sums.matmuls);
  };
  const double ops_lower = in.ops.t_lower.si();
  const double ops_upper = in.ops.t_upper.si();
  // v chunks per stage: v times the sends; each device idles (p − 1)/(v·m) of its work
  // (Narayanan et al. 2021, §2.2.2).
  const double extra = static_cast<double>(choice.pipeline_interleave - 1);
  const double idle = in.stages > 1
                          ? static_cast<double>(in.stages - 1) /
                                static_cast<double>(choice.pipeline_interleave * in.microbatches)
                          : 0.0;
  // A pass's ops with its v − 1 extra chunks' sends.
  const double forward_ops = in.forward.lower + extra * in.forward.sends;
  const double backward_ops = in.backward.lower + extra * in.backward.sends;
  // The HBM footprint and host bytes of the offloading choice: all but two of the held layers'
  // weights and optimizer state stream from the host; offloaded activations leave HBM their
  // in-flight share.
  Footprint resident = in.footprint;
  const double streamed = 1.0 - in.offload.resident_share;
  if (offload.weights) {
    resident.weights = resident.weights - Bytes(in.offload.weights * streamed);
  }
  if (offload.optimizer) {
    resident.optimizer_state = resident.optimizer_state - Bytes(in.offload.optimizer * streamed);
  }
  if (offload.activations) {
    resident.activations = Bytes(std::min(resident.activations.si(), in.offload.hbm_activations));
  }
  out.footprint = resident;
  out.host_bytes = (offload.weights ? in.offload.weights : 0.0) +
                   (offload.optimizer ? in.offload.optimizer : 0.0) +
                   (offload.activations ? in.offload.activations : 0.0);
  // The host link, busiest direction per pass (it is full duplex): the forward pass reads each
  // held layer's weights in and writes its saved activations out, per microbatch; the backward
  // pass reads both back; the optimizer step reads and writes the offloaded weights and
  // optimizer state once.
  const double weights_in = offload.weights ? microbatches * in.offload.weights : 0.0;
  const double activations_moved =
      offload.activations ? microbatches * in.offload.per_microbatch : 0.0;
  const double host_forward = std::max(weights_in, activations_moved) / in.host_bandwidth;
  const double host_backward = (weights_in + activations_moved) / in.host_bandwidth;
  const double host_optimizer = ((offload.weights ? in.offload.weights : 0.0) +
                                 (offload.optimizer ? in.offload.optimizer : 0.0)) /
                                in.host_bandwidth;
  const double hidden_f = choice.overlap_tensor ? tensor_hidden(in.forward) : 0.0;
  const double hidden_b = choice.overlap_tensor ? tensor_hidden(in.backward) : 0.0;
  // Prefetched weight gathers (FSDP's prefetch, XLA's async all-gathers): layer i + 1's gather
  // runs under layer i's compute, so a pass exposes its first layer's gather, G/ℓ, or what its
  // device work D (less what the other overlaps already hide under it) cannot cover:
  // exposed = max(G/ℓ, G − D_free).
  const auto weights_hidden = [&](const PassSums& sums, double taken) {
    if (!choice.overlap_weights || sums.weight_gathers <= 0.0) {
      return 0.0;
    }
    const double gathers = sums.weight_gathers;
    const double free = std::max(0.0, sums.device - taken);
    return gathers - std::max(gathers / in.layers_held, gathers - free);
  };
  const double gathers_f = weights_hidden(in.forward, hidden_f);
  // ZeRO-1/2's all-gathers of the updated weights, prefetched layer by layer under the next
  // step's forward pass (Megatron's --overlap-param-gather: the first layer's gather waits, the
  // rest run under earlier layers): what the forward's device work left over from its own
  // overlaps covers.
  PassSums updated = in.forward;
  updated.weight_gathers = in.optimizer_gathers;
  const double gathers_updated = weights_hidden(updated, hidden_f + gathers_f);
  const double gathers_b =
      weights_hidden(in.backward, hidden_b + (choice.overlap_gradients ? gradients_hidden : 0.0));
  // Each pass takes the longer of its ops and its host transfers (the lower bound overlaps
  // them; the upper bound adds them). The tensor and the gradient overlaps each hide network
  // time under device work; where both axes share a link their traffic is not summed against it
  // (a lower bound may take both).
  // A hidden collective still takes its tier's share of the compute while it runs (its kernels
  // occupy SMs: Calculon's processor_usage, Isaev et al. 2023), so a pass saves
  // hidden × (1 − usage), not all of it.
  const double saved_forward =
      hidden_f * (1.0 - in.tensor_usage) + gathers_f * (1.0 - in.weights_usage);
  const double saved_backward =
      hidden_b * (1.0 - in.tensor_usage) + gathers_b * (1.0 - in.weights_usage);
  const double forward_time = std::max(forward_ops - saved_forward, host_forward);
  const double backward_time = std::max(backward_ops - saved_backward, host_backward);
  const double optimizer_time =
      std::max(in.optimizer_lower - gathers_updated * (1.0 - in.weights_usage), host_optimizer);
  const double pipelined_change = (forward_time - forward_ops) + (backward_time - backward_ops);
  const double bubble = (in.work.lower + pipelined_change + extra * in.sends.lower) * idle;
  // What the tensor overlap takes off the forward pass (none where its host link holds it
  // anyway), and off the backward pass past the gradient reductions it also hides.
  const double tensor_saved_forward = std::max(0.0, std::min(hidden_f, forward_ops - host_forward));
  const double backward_left = backward_ops - (choice.overlap_gradients ? gradients_hidden : 0.0);
  out.tensor_hidden =
      tensor_saved_forward + std::max(0.0, std::min(hidden_b, backward_left - host_backward));
  out.weights_hidden = gathers_f + gathers_b + gathers_updated;
  // The hidden reductions shorten the backward pass, down to its host transfers.
  const double gradient_change =
      choice.overlap_gradients
          ? std::max(backward_ops - saved_backward - gradients_hidden * (1.0 - in.gradient_usage),
                     host_backward) -
                backward_time
          : 0.0;
  out.step_lower = ops_lower + pipelined_change + gradient_change +
                   (optimizer_time - in.optimizer_lower) + extra * in.sends.lower + bubble;
  out.step_upper = ops_upper + extra * in.sends.upper +
                   (in.work.upper + extra * in.sends.upper) * idle +
                   (host_forward + host_backward) * (1.0 + idle) + host_optimizer;
  out.bubble = bubble;
  out.bubble_upper = (in.work.upper + extra * in.sends.upper) * idle;
  out.bubble_fraction = idle / (1.0 + idle);
  out.work_lower = in.work.lower + pipelined_change + extra * in.sends.lower;
  out.idle = idle;
  out.t_math = in.ops.t_math.si() + extra * in.sends.math;
  out.t_mem = in.ops.t_mem.si() + extra * in.sends.memory;
  out.t_net = in.ops.t_net.si() + extra * in.sends.network;
  out.t_host = host_forward + host_backward + host_optimizer;
  out.extra_sends_lower = extra * in.sends.lower;
  out.extra_sends_upper = extra * in.sends.upper;
  if (in.expected) {
    // The schedule of the choice over the expected times (collectives exposed but for what the
    // choice's overlaps hide), never below the schedule over each op's max.
    out.step_expected = std::max(out.step_lower, schedule_step(*in.expected, choice).step_lower);
  }
  if (in.device) {
    // The bound: the device's schedule (no network time in it) or the network's Σ T_net, the
    // longer; every collective may be hidden under device work, none made shorter.
    // (Nothing of the network is left in that view for an overlap to hide.)
    Training device_choice = choice;
    device_choice.overlap_gradients = false;
    device_choice.overlap_tensor = false;
    device_choice.overlap_weights = false;
    out.step_lower = std::max(schedule_step(*in.device, device_choice).step_lower, out.t_net);
  }
  return out;
}

std::optional<PipelineSchedule> apply_schedule(const ScheduleInputs& inputs,
                                               const Scenario& scenario, Bounds& bounds,
                                               Footprint& footprint, StepTimes& times) {
  const Training& choice = scenario.workload.training;
  times = schedule_step(inputs, choice);
  const Totals before = bounds.total;
  // The critical path's share of forward and backward work, taken as the lower bound's.
  const double ops_lower = before.t_lower.si() + times.extra_sends_lower;
  const double work_share = ops_lower > 0.0 ? times.work_lower / ops_lower : 0.0;
  const double critical =
      (before.t_critical.si() + times.extra_sends_lower) * (1.0 + work_share * times.idle);
  for (Totals* totals : {&bounds.total, &bounds.stages.front().totals}) {
    const bool whole = totals == &bounds.total;
    totals->t_lower = whole ? Seconds(times.step_lower)
                            : totals->t_lower + Seconds(times.step_lower - before.t_lower.si());
    totals->t_upper = whole ? Seconds(times.step_upper)
                            : totals->t_upper + Seconds(times.step_upper - before.t_upper.si());
    totals->t_critical =
        whole ? Seconds(critical) : totals->t_critical + Seconds(critical - before.t_critical.si());
    totals->t_math =
        whole ? Seconds(times.t_math) : totals->t_math + Seconds(times.t_math - before.t_math.si());
    totals->t_mem =
        whole ? Seconds(times.t_mem) : totals->t_mem + Seconds(times.t_mem - before.t_mem.si());
    totals->t_net =
        whole ? Seconds(times.t_net) : totals->t_net + Seconds(times.t_net - before.t_net.si());
    totals->t_expected =
        whole ? Seconds(times.step_expected)
              : totals->t_expected + Seconds(times.step_expected - before.t_expected.si());
  }
  footprint = times.footprint;
  if (inputs.stages == 1) {
    return std::nullopt;
  }
  PipelineSchedule schedule;
  schedule.stages = inputs.stages;
  schedule.microbatches = inputs.microbatches;
  schedule.chunks = choice.pipeline_interleave;
  schedule.bubble_fraction = times.bubble_fraction;
  schedule.work_lower = Seconds(times.work_lower);
  schedule.bubble_lower = Seconds(times.bubble);
  schedule.bubble_upper = Seconds(times.bubble_upper);
  schedule.bubble_critical =
      Seconds((before.t_critical.si() + times.extra_sends_lower) * work_share * times.idle);
  return schedule;
}

}  // namespace rsim
