// SPDX-License-Identifier: MIT
// Mixture of experts (Mixtral 8x7B): parameter counts total and active, the MoE op graph
// (router, dispatch, experts, combine), the experts a decode step reads, expert parallelism's
// two all-to-alls per block, and the Hugging Face import. Mixtral's sizes: the official
// config.json (huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1) and
// tests/data/hf/Mixtral-8x7B-v0.1/config.json.
#include "cli_fixture.hpp"
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/graph/shard/shard.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/hf_config.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/model_yaml.hpp"
#include "sim/spec/presets.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using rsim::test::source_path;

namespace {

// Mixtral 8x7B: D, F, E, k, L.
constexpr double kWidth = 4096;
constexpr double kExpertWidth = 14336;
constexpr double kExperts = 8;
constexpr double kTopK = 2;
constexpr double kLayers = 32;

rsim::TransformerSpec mixtral_preset() {
  return rsim::load_model(source_path("models/mixtral_8x7b.yaml"), rsim::find_preset)
      .stages.front()
      .component;
}

std::string mixtral_config() {
  return source_path("tests/data/hf/Mixtral-8x7B-v0.1/config.json").string();
}

// Σ over the ops of `run` matching `predicate` of `measure(op, row) × count`.
template <class Predicate, class Measure>
double run_sum(const rsim::RunResult& run, Predicate predicate, Measure measure) {
  double total = 0.0;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const rsim::Op& op = run.graph.op(run.table.order[row]);
    if (predicate(op)) {
      total += measure(op, row) * static_cast<double>(op.count);
    }
  }
  return total;
}

std::vector<const rsim::Op*> collectives(const rsim::RunResult& run) {
  std::vector<const rsim::Op*> found;
  for (const auto vertex : run.table.order) {
    const rsim::Op& op = run.graph.op(vertex);
    if (op.kind == rsim::OpKind::collective) {
      found.push_back(&op);
    }
  }
  return found;
}

double weight_bytes(const rsim::Op& op) {
  double bytes = 0.0;
  for (const auto& tensor : op.inputs) {
    bytes += tensor.role == rsim::TensorRole::weight ? tensor.bytes().si() : 0.0;
  }
  return bytes;
}

// A small model YAML with the MoE keys given in `experts`.
std::string small_model(const std::string& experts) {
  return "name: tiny\nsource: test\narchitecture: decoder\nhidden_size: 64\n"
         "num_hidden_layers: 2\nnum_attention_heads: 8\nnum_key_value_heads: 8\nhead_dim: 8\n"
         "intermediate_size: 128\nhidden_act: silu\ngated_mlp: true\nnorm: rmsnorm\n"
         "vocab_size: 10\ntie_word_embeddings: false\nattention_bias: false\nmlp_bias: false\n"
         "position_embedding: rope\n" +
         experts;
}

std::string small_config(const std::string& model_type, const std::string& extra) {
  return R"({"model_type": ")" + model_type +
         R"(", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
             "intermediate_size": 128, "hidden_act": "silu", "vocab_size": 100)" +
         extra + "}";
}

}  // namespace

TEST_CASE("Mixtral 8x7B: 46.7B parameters, 12.9B active per token", "[moe][model]") {
  const auto count = rsim::count_parameters(mixtral_preset());
  // Per layer: attention Q and O 2·4096² = 33,554,432, K and V 2·4096·(8·128) = 8,388,608 →
  // 41,943,040; one SwiGLU expert 3·4096·14336 = 176,160,768, × 8 experts = 1,409,286,144;
  // router 4096·8 = 32,768; norms 2·4096 = 8,192 → 1,451,270,144; × 32 = 46,440,644,608.
  // Embedding and untied head 2·32000·4096 = 262,144,000; final norm 4,096 →
  // 46,702,792,704 (Mistral AI: "46.7B total parameters").
  CHECK(count.layers == 46'440'644'608);
  CHECK(count.total() == 46'702'792'704);
  // A token runs k = 2 of the 8 experts: (8 − 2) · 176,160,768 · 32 = 33,822,867,456 unused, so
  // 46,702,792,704 − 33,822,867,456 = 12,879,925,248 active (Mistral AI: "12.9B active").
  CHECK(count.inactive_experts == 33'822'867'456);
  CHECK(count.active() == 12'879'925'248);
  // A dense model is all active.
  const auto llama = rsim::count_parameters(
      rsim::load_model(source_path("models/llama3_8b.yaml"), rsim::find_preset));
  CHECK(llama.active() == llama.total());
}

TEST_CASE("the imported Mixtral config.json equals the preset", "[moe][hf_config]") {
  const auto imported = rsim::import_hf_config(mixtral_config());
  const auto preset = mixtral_preset();
  CHECK(imported.num_experts == 8);        // num_local_experts
  CHECK(imported.experts_per_token == 2);  // num_experts_per_tok
  CHECK(imported.num_experts == preset.num_experts);
  CHECK(imported.experts_per_token == preset.experts_per_token);
  CHECK(imported.hidden_size == preset.hidden_size);
  CHECK(imported.num_layers == preset.num_layers);
  CHECK(imported.num_heads == preset.num_heads);
  CHECK(imported.num_kv_heads == preset.num_kv_heads);
  CHECK(imported.head_dim == preset.head_dim);
  CHECK(imported.intermediate_size == preset.intermediate_size);
  CHECK(imported.activation == preset.activation);
  CHECK(imported.gated_mlp == preset.gated_mlp);
  CHECK(imported.norm == preset.norm);
  CHECK(imported.vocab_size == preset.vocab_size);
  CHECK(imported.tied_embeddings == preset.tied_embeddings);
  CHECK(imported.position == preset.position);
  CHECK(rsim::count_parameters(imported).total() == 46'702'792'704);  // derived above
  CHECK(rsim::count_parameters(imported).active() == 12'879'925'248);

  // import-hf's YAML keeps the experts.
  const auto reloaded =
      rsim::parse_transformer(rsim::parse_config(rsim::model_yaml(imported), "mixtral.yaml"));
  CHECK(reloaded.num_experts == 8);
  CHECK(reloaded.experts_per_token == 2);
  const auto outcome = rsim::test::rsim_cli({"import-hf", mixtral_config()});
  CHECK(outcome.code == 0);
  CHECK_THAT(outcome.out, Catch::Contains("num_local_experts: 8\nnum_experts_per_tok: 2\n"));
}

TEST_CASE("MoE configs rsim cannot represent are still refused, with the reason",
          "[moe][hf_config]") {
  // Mixtral with a sliding window on every layer (the Mixtral file with "sliding_window": 4096)
  // is imported with its experts and its window.
  const auto windowed = rsim::import_hf_config(
      source_path("tests/data/hf/invalid/mixtral_sliding_window.json").string());
  CHECK(windowed.num_experts == 8);
  CHECK(windowed.sliding_window == 4096);
  const std::string experts = R"(, "num_local_experts": 4, "num_experts_per_tok": 2)";
  // Shared experts (DeepSeek's n_shared_experts) and other routers' expert keys.
  CHECK_THROWS_WITH(rsim::parse_hf_config(
                        small_config("mixtral", experts + R"(, "n_shared_experts": 1)"), "m.json"),
                    Catch::Contains("'n_shared_experts': DeepSeekMoE shared experts "
                                    "(n_shared_experts: 1) on model_type mixtral, whose modelling "
                                    "code has none"));
  CHECK_THROWS_WITH(rsim::parse_hf_config(
                        small_config("mixtral", experts + R"(, "n_routed_experts": 64)"), "m.json"),
                    Catch::Contains("DeepSeekMoE routed experts (n_routed_experts: 64)"));
  // Experts on a model_type whose modelling code has a dense MLP.
  CHECK_THROWS_WITH(
      rsim::parse_hf_config(small_config("llama", experts), "l.json"),
      Catch::Contains("'num_local_experts': num_local_experts MoE (num_local_experts: "
                      "4) on model_type llama, whose modelling code has none"));
  // k must be within 1..E, and Mixtral needs both keys.
  CHECK_THROWS_WITH(
      rsim::parse_hf_config(
          small_config("mixtral", R"(, "num_local_experts": 4, "num_experts_per_tok": 5)"),
          "m.json"),
      Catch::EndsWith("error: 'num_experts_per_tok': expected 1 ≤ num_experts_per_tok ≤ "
                      "num_local_experts (4), got 5"));
  CHECK_THROWS_WITH(
      rsim::parse_hf_config(small_config("mixtral", R"(, "num_experts_per_tok": 2)"), "m.json"),
      "m.json: error: missing key 'num_local_experts' (model_type mixtral routes tokens to "
      "experts)");
}

TEST_CASE("model YAML: num_local_experts and num_experts_per_tok are validated", "[moe][model]") {
  const auto dense = rsim::parse_transformer(rsim::parse_config(small_model(""), "d.yaml"));
  CHECK_FALSE(dense.moe());
  const auto zero =
      rsim::parse_transformer(rsim::parse_config(small_model("num_local_experts: 0\n"), "z.yaml"));
  CHECK_FALSE(zero.moe());  // 0 = dense
  // Lines 18 and 19 follow the 17 lines of the dense model.
  CHECK_THROWS_WITH(
      rsim::parse_transformer(rsim::parse_config(
          small_model("num_local_experts: 4\nnum_experts_per_tok: 5\n"), "moe.yaml")),
      "moe.yaml:19:22: error: 'num_experts_per_tok': expected 1 ≤ num_experts_per_tok ≤ "
      "num_local_experts (4), got 5");
  CHECK_THROWS_WITH(rsim::parse_transformer(
                        rsim::parse_config(small_model("num_local_experts: 4\n"), "moe.yaml")),
                    "moe.yaml:18:20: error: 'num_local_experts': 4 experts need "
                    "'num_experts_per_tok' (k, the experts each token runs)");
  CHECK_THROWS_WITH(rsim::parse_transformer(
                        rsim::parse_config(small_model("num_experts_per_tok: 2\n"), "moe.yaml")),
                    "moe.yaml:18:22: error: 'num_experts_per_tok': needs 'num_local_experts' ≥ "
                    "1 (a dense MLP has no experts to pick)");
  CHECK_THROWS_AS(rsim::parse_transformer(rsim::parse_config(
                      small_model("num_local_experts: 4\nnum_experts_per_tok: 0\n"), "moe.yaml")),
                  rsim::ConfigError);
}

TEST_CASE("MoE forward FLOPs per token: 2 × the active matmul parameters", "[moe][graph]") {
  // One device, prefill of 8 × 2048 = 16,384 tokens; T·k = 32,768 rows, 4,096 per expert.
  const auto run = rsim::test::run_scenario("mixtral_8x7b_h100", {{"plan", "single"}});
  const auto layer_matmuls = [](const rsim::Op& op) {
    return op.kind == rsim::OpKind::matmul && op.block == rsim::Block::layer;
  };
  const double per_token =
      run_sum(run, layer_matmuls,
              [&](const rsim::Op&, std::size_t row) { return run.table.costs[row].flops.si(); }) /
      (8.0 * 2048.0);
  // Per token and layer: Q 2·4096·4096 = 33,554,432; K/V 2·4096·2048 = 16,777,216; O
  // 33,554,432; router 2·4096·8 = 65,536; k = 2 experts × (gate/up 2·4096·28672 = 234,881,024
  // + down 2·14336·4096 = 117,440,512) = 704,643,072 → 788,594,688 = 2 × the 394,297,344
  // active matmul parameters of a layer; × 32 layers = 25,235,030,016.
  CHECK(per_token == Approx(25'235'030'016.0));
  CHECK(per_token == Approx(2.0 * kLayers *
                            (2 * kWidth * kWidth + 2 * kWidth * 1024 + kWidth * kExperts +
                             kTopK * 3 * kWidth * kExpertWidth)));

  // The graph: router [batch, seq, embed]·[embed, router] and experts batched over `experts`,
  // 4,096 rows each (T·k / E = 16,384 · 2 / 8).
  bool saw_dispatch = false;
  for (const auto vertex : run.graph.topological_order()) {
    const rsim::Op& op = run.graph.op(vertex);
    if (op.name == "router") {
      CHECK(op.group == "router");
      CHECK(op.inputs[1].shape() == "[embed=4096, router=8]");
    }
    if (op.name == "expert_gate_up_proj") {
      CHECK(op.group == "experts");
      CHECK(op.inputs[0].shape() == "[experts=8, expert_tokens=4096, embed=4096]");
      CHECK(op.inputs[1].shape() == "[experts=8, embed=4096, gate_up=2, mlp=14336]");
    }
    if (op.name == "dispatch") {
      saw_dispatch = true;
      CHECK(op.outputs[0].shape() == "[experts=8, expert_tokens=4096, embed=4096]");
    }
    if (op.name == "combine") {
      CHECK(op.outputs[0].shape() == "[batch=8, seq=2048, embed=4096]");
      CHECK(op.flops_per_element == 3.0);  // k products + (k − 1) sums
    }
  }
  CHECK(saw_dispatch);
  CHECK(collectives(run).empty());
}

TEST_CASE("a decode step reads the weights of the experts it routes to", "[moe][graph][decode]") {
  const auto path = source_path("scenarios/mixtral_8x7b_decode_h100.yaml");
  const auto expert_weights = [&](const std::string& batch) {
    const auto scenario =
        rsim::load_scenario(path, {{{"workload.batch", batch}, {"plan", "single"}}, ""});
    const auto graph = rsim::build_graph(scenario);
    double bytes = 0.0;
    for (const auto vertex : graph.topological_order()) {
      const rsim::Op& op = graph.op(vertex);
      bytes += op.group == "experts" ? weight_bytes(op) * static_cast<double>(op.count) : 0.0;
    }
    return bytes;
  };
  // One expert's weights: 3·4096·14336 · 2 B (bf16) = 352,321,536 B; a step of one sequence
  // routes its token to k = 2 experts: × 2 × 32 layers = 22,548,578,304 B.
  CHECK(expert_weights("1") == Approx(2.0 * kLayers * 3 * kWidth * kExpertWidth * 2));
  CHECK(expert_weights("1") == Approx(22'548'578'304.0));
  // 3 sequences: 6 rows, at most 6 of the 8 experts; 4 or more: all 8 (T·k ≥ E).
  CHECK(expert_weights("3") == Approx(6.0 * kLayers * 3 * kWidth * kExpertWidth * 2));
  CHECK(expert_weights("64") == Approx(8.0 * kLayers * 3 * kWidth * kExpertWidth * 2));
}

TEST_CASE("expert parallelism: two all-to-alls per MoE block", "[moe][plan]") {
  const auto ep = rsim::test::run_scenario("mixtral_8x7b_h100");
  CHECK(ep.scenario.plan.name == "expert_parallel");
  std::vector<std::string> names;
  for (const rsim::Op* op : collectives(ep)) {
    names.push_back(op->name);
    CHECK(op->count == 32);  // once per layer
    CHECK(op->collective.kind == rsim::CollectiveKind::all_to_all);
    CHECK(op->collective.axes == std::vector<std::int64_t>{8});
    // V = every device's rows together = T·k·D·2 B = 16,384 tokens · 2 · 4096 · 2 B.
    CHECK(op->collective.bytes.si() == Approx(268'435'456.0));
  }
  // Attention is data parallel (one sequence per GPU): nothing else crosses NVLink.
  CHECK(names == std::vector<std::string>{"dispatch.all_to_all", "combine.all_to_all"});
  for (std::size_t row = 0; row < ep.table.order.size(); ++row) {
    const rsim::Op& op = ep.graph.op(ep.table.order[row]);
    if (op.kind == rsim::OpKind::collective) {
      // Through the NVSwitch: V·(N − 1)/(W·N²) = 268,435,456 · 7 / (450e9 · 64) = 65.24 µs.
      CHECK(ep.table.costs[row].t_net.si() == Approx(268'435'456.0 * 7 / (450e9 * 64)));
    }
    if (op.name == "expert_gate_up_proj") {
      // One expert per GPU, all 4,096 rows routed to it.
      CHECK(op.inputs[0].shape() == "[experts=1, expert_tokens=4096, embed=4096]");
      CHECK(op.inputs[1].shape() == "[experts=1, embed=4096, gate_up=2, mlp=14336]");
    }
    if (op.name == "q_proj") {
      CHECK(op.inputs[0].shape() == "[batch=1, seq=2048, embed=4096]");
    }
  }
  // Tensor parallel: the o_proj all-reduce of T·D·2 B = 134,217,728 B, and the experts' down
  // projection's partial sums, reduced after the (linear) combine over the T token rows: again
  // T·D·2 B = 134,217,728 B (not its T·k rows, 268,435,456 B).
  const auto tp = rsim::test::run_scenario("mixtral_8x7b_h100", {{"plan.preset", "megatron_tp"}});
  std::vector<std::pair<std::string, double>> reduced;
  for (const rsim::Op* op : collectives(tp)) {
    reduced.emplace_back(op->name, op->collective.bytes.si());
  }
  CHECK(reduced ==
        std::vector<std::pair<std::string, double>>{{"o_proj.all_reduce", 134'217'728.0},
                                                    {"combine.all_reduce", 134'217'728.0}});
}

TEST_CASE("a decode step under expert parallelism exchanges its T·k rows", "[moe][plan][decode]") {
  const auto path = source_path("scenarios/mixtral_8x7b_decode_h100.yaml");
  auto scenario = rsim::load_scenario(path);
  const auto sharded = rsim::shard_graph(rsim::build_graph(scenario), scenario.plan);
  int exchanges = 0;
  for (const auto vertex : sharded.graph.topological_order()) {
    const rsim::Op& op = sharded.graph.op(vertex);
    if (op.kind == rsim::OpKind::collective) {
      ++exchanges;
      // 64 sequences · 1 token · k = 2 rows of 4096 · 2 B = 1,048,576 B.
      CHECK(op.collective.bytes.si() == Approx(1'048'576.0));
    }
    if (op.name == "expert_down_proj") {
      // 128 rows over 8 experts: 16 per expert, one expert per GPU.
      CHECK(op.inputs[0].shape() == "[experts=1, expert_tokens=16, mlp=14336]");
    }
  }
  CHECK(exchanges == 2);
}

TEST_CASE("an expert axis that does not divide E is an error naming it", "[moe][plan]") {
  const auto path = source_path("scenarios/mixtral_8x7b_h100.yaml");
  CHECK_THROWS_WITH(
      rsim::load_scenario(path, {{{"plan.mesh.expert", "6 over nvlink"}}, ""}),
      "--set plan.mesh.expert: error: 'plan.mesh.expert': plan 'expert_parallel' shards the "
      "experts over mesh axis 'expert' (6 devices), which does not divide the 8 experts "
      "(num_local_experts) of 'Mixtral 8x7B'; expected a size that divides 8");
  // A plan built in code (rsim search does) meets the same check in the sharder.
  auto scenario = rsim::load_scenario(path);
  scenario.plan.mesh.front().size = 3;
  CHECK_THROWS_WITH(rsim::shard_graph(rsim::build_graph(scenario), scenario.plan),
                    Catch::Contains("its 8 experts (num_local_experts) do not divide over it"));
}

TEST_CASE("the run report shows the active parameters", "[moe][report]") {
  const auto outcome =
      rsim::test::rsim_cli({"run", source_path("scenarios/mixtral_8x7b_h100.yaml").string()});
  REQUIRE(outcome.code == 0);
  // Mistral AI's announcement: 46.7B parameters in all, 12.9B used per token (B: billions).
  CHECK_THAT(outcome.out, Catch::Contains("Mixtral 8x7B: 46.7B parameters (12.88B active per "
                                          "token: top-k experts)"));
}
