// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/dtype.hpp"
#include "sim/base/units.hpp"
#include "sim/spec/hardware.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/plan.hpp"
#include "sim/spec/precision.hpp"
#include "sim/spec/serving.hpp"
#include "sim/spec/tile.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rsim {

/// Elementwise op families; a scenario may declare some fused into a neighbouring matmul.
/// `optimizer` is a training step's parameter update (never fused); `routing` an MoE block's
/// router top-k, dispatch to the experts and weighted combine.
enum class ElementwiseKind {
  norm,
  activation,
  residual,
  rope,
  embedding,
  softmax,
  routing,
  optimizer,
  quantize,  ///< an FP8 / INT8 GEMM operand cast from the wider activations (training)
  dropout,   ///< training's dropout on unfused attention probabilities, with its 1-byte mask
  loss,      ///< training's cross-entropy over the LM head's logits (its softmax kept in fp32)
  layout     ///< eager attention's copies of Q, K, V and O to and from the batched GEMMs' layout
};
std::string_view to_string(ElementwiseKind kind);

/// The kernels a training engine runs for the cross-entropy over the logits (unless the loss is
/// fused into the LM head): what they read and write is sim/graph/loss.hpp's.
enum class LossKernels {
  single_pass,  ///< one kernel each way: the logits read, the fp32 softmax written and read back
  torch,        ///< eager PyTorch's cross_entropy(logits.float()): cast, log_softmax, fill, …
  megatron      ///< Megatron-LM's unfused vocab-parallel cross-entropy on logits.float()
};
std::string_view to_string(LossKernels kernels);

/// How an engine runs attention (`fusion.attention`).
enum class AttentionKernels {
  fused,    ///< one FMHA kernel: the scores stay on chip
  unfused,  ///< QKᵀ, softmax and PV each a kernel on strided views (Megatron-LM's [s, b, h])
  /// unfused, as eager PyTorch runs it on [b, s, h, d] tensors: Q, K and V copied into the
  /// batched GEMMs' [b·h, s, d] layout and O copied back (reshape of a transposed view)
  eager
};
std::string_view to_string(AttentionKernels kernels);

/// What the kernels keep on chip (the fusion assumption behind every byte count).
struct Fusion {
  AttentionKernels attention = AttentionKernels::fused;
  std::vector<ElementwiseKind> into_matmul;     ///< kinds with no DRAM traffic of their own
  LossKernels loss = LossKernels::single_pass;  ///< the loss's kernels when not in the matmul
  [[nodiscard]] bool is_fused(ElementwiseKind kind) const;
  /// FMHA keeps the scores on chip; unfused (and eager) attention writes and reads them.
  [[nodiscard]] bool attention_fused() const { return attention == AttentionKernels::fused; }
};

/// Activation recomputation in training (Korthikanti et al. 2022, "Reducing Activation
/// Recomputation in Large Transformer Models"): none keeps every op's saved input for the
/// backward pass; selective drops attention's internals and recomputes the attention op; full
/// keeps only each layer's input and re-runs the whole layer's forward before its backward.
enum class Recompute { none, selective, full };
std::string_view to_string(Recompute recompute);

/// The optimizer a training step ends with; it sets the state kept per parameter.
enum class Optimizer { adam, sgd };
std::string_view to_string(Optimizer optimizer);

/// A training step (`phase: train`): the global batch is split into microbatches (gradient
/// accumulation, or the microbatches a pipeline keeps in flight); each runs forward and backward,
/// gradients are summed locally and reduced once, then the optimizer updates every parameter.
/// What a training step keeps in host memory instead of HBM (ZeRO-Offload, Ren et al. 2021):
/// all but two of a device's layers' weights / optimizer state stream in as they are needed;
/// saved activations go out after each layer's forward and come back for its backward.
struct TrainingOffload {
  bool weights = false;
  bool activations = false;
  bool optimizer = false;
  [[nodiscard]] bool any() const { return weights || activations || optimizer; }
  /// "weights+activations", or "none".
  [[nodiscard]] std::string label() const;
};

struct Training {
  std::int64_t microbatches = 1;  ///< per step, per data-parallel replica
  Recompute recompute = Recompute::none;
  Optimizer optimizer = Optimizer::adam;
  std::int64_t pipeline_interleave = 1;  ///< layer chunks per pipeline stage (Megatron v)
  /// Data-parallel gradient reductions start during the last microbatch's backward (PyTorch
  /// DDP buckets, Megatron's overlap_grad_reduce) instead of after it.
  bool overlap_gradients = false;
  /// Tensor-axis all-gathers / reduce-scatters overlapped with their matmuls (collective matmul,
  /// Megatron's tp_comm_overlap): needs sequence parallelism.
  bool overlap_tensor = false;
  /// Weight all-gathers (FSDP, ZeRO-3) prefetched under the previous layer's compute (PyTorch
  /// FSDP's backward/forward prefetch, XLA's async collectives) instead of before their use.
  bool overlap_weights = false;
  TrainingOffload offload;
};

/// prefill: every token of every stage at once; decode: one new token per sequence against a
/// KV cache; train: forward, backward and the optimizer step.
enum class Phase { prefill, decode, train };
std::string_view to_string(Phase phase);

/// What is run: the phase, the batch and (for single-stage models) the sequence length.
/// prefill: every token of every stage at once; decode: one new token per sequence attending to
/// `context` cached tokens (one step of autoregressive generation); train: forward, backward and
/// the optimizer step over `batch` sequences of `seq_len` tokens.
struct Workload {
  /// Where the scenario file wrote `workload:`: tensor sizes found too large when the graph is
  /// built are reported there.
  std::optional<SourceMark> written_at;
  Phase phase = Phase::prefill;
  std::int64_t batch = 1;    ///< sequences (train: the global batch of one step)
  std::int64_t seq_len = 0;  ///< prefill of a single-stage model; composites fix their lengths
  std::int64_t context = 0;  ///< decode: tokens already in the KV cache (a request's prompt)
  /// decode: 0 costs one step; N > 0 costs a whole request: the prefill of the `context`-token
  /// prompt (which emits the first output token), then N decode steps with `context` …
  /// `context + N − 1` cached tokens (N + 1 output tokens per sequence).
  std::int64_t decode_steps = 0;
  Training training;  ///< phase train only
  /// Sequences one microbatch holds before any data-parallel split: batch / microbatches.
  [[nodiscard]] std::int64_t microbatch() const { return batch / training.microbatches; }
};

/// Makes a single-stage decoder's stage one decode step: one new token per sequence against
/// `context` cached tokens, its K and V joining the cache, the next token's logits computed.
void set_decode_step(StageSpec& stage, std::int64_t context);

/// A measured time to set beside the bound ("63 ms for π0.5's FP8 engine on Thor, trtexec").
struct Reference {
  std::string stage;  ///< a stage name, or "" for the whole run
  Seconds time;
  std::string source;
};

/// Matmul groups: the unit of per-batch weights and of the critical batch per group.
/// attention (qkv_proj, o_proj), mlp (gate_up/up, down), modulation (adaRMSNorm), dense (a
/// stage's pre/post layers), patch_embed, lm_head, attention_scores (unfused QKᵀ and AV), router
/// (an MoE block's [D, E] router), experts (its expert gate_up/up and down, batched over experts).
const std::vector<std::string_view>& matmul_groups();

/// A validated scenario: hardware + mode, model, workload, precision, fusion, references.
struct Scenario {
  std::string name;
  std::string variant;  ///< "" for the baseline, else the variant's name
  std::string file;
  HardwareSpec hardware;
  std::string mode;
  ModelSpec model;
  Workload workload;
  Precision precision;
  Fusion fusion;
  std::vector<std::string> per_batch_weights;  ///< matmul groups whose weights have a batch axis
  Plan plan;                                   ///< the parallelism plan (default: one device)
  /// `phase: serve`: the request stream and scheduler; the workload is then a decode step.
  std::optional<ServingSpec> serving;
  RoofOverrides roof_overrides;  ///< a variant's peaks and bandwidths
  Bytes host_share;   ///< unified memory kept for the CPU side (Thor): not available to the model
  TileChoices tiles;  ///< matmul tiles fixed per on-chip tier (`tiles:`); the rest are chosen
  /// `sweep:` — the grid `rsim sweep` evaluates without --over: ("KEY=VALUES", "file:line:col").
  std::vector<std::pair<std::string, std::string>> sweep;
  std::vector<Reference> references;
  std::vector<std::string> variant_names;  ///< the variants the file declares
  /// The command line's changes to the file ("hardware=h100_sxm", in the order given): the
  /// file's `name:` no longer says all of what runs, and titles say so.
  std::vector<std::string> changes;
};

/// Overrides given on the command line: `--set key.path=value` entries and `--precision`,
/// applied to the YAML tree before validation so they are checked like the file's own values;
/// `variant` applies one of the file's variants first.
struct ScenarioOverrides {
  std::vector<std::pair<std::string, std::string>> sets;
  std::string variant;
};

/// Loads and validates a scenario file, resolving hardware and model presets; its YAML files
/// are parsed through `files` where given (many scenarios of the same files: each parsed once).
/// Pads every stage's vocabulary as the scenario's plan asks (Plan::vocab_padding); load_scenario
/// does, and a search that sets a plan does again.
void pad_vocabulary(Scenario& scenario);

Scenario load_scenario(const std::filesystem::path& path, const ScenarioOverrides& overrides = {},
                       ConfigFiles* files = nullptr);

/// The baseline and every variant the file declares, each fully validated.
std::vector<Scenario> load_scenario_variants(const std::filesystem::path& path,
                                             const ScenarioOverrides& overrides = {});

}  // namespace rsim
