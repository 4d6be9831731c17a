// SPDX-License-Identifier: MIT
#include "sim/graph/graph.hpp"

#include "run_fixture.hpp"
#include "sim/cost/op_cost.hpp"

#include <catch2/catch.hpp>

namespace {

// Σ over the ops of `stage` matching `predicate` of `measure(op) × count`.
template <class Predicate, class Measure>
double stage_sum(const rsim::OpGraph& graph, const std::string& stage, Predicate predicate,
                 Measure measure) {
  double total = 0.0;
  for (auto vertex : graph.topological_order()) {
    const rsim::Op& op = graph.op(vertex);
    if (op.stage == stage && predicate(op)) {
      total += measure(op) * static_cast<double>(op.count);
    }
  }
  return total;
}

double role_bytes(const rsim::Op& op, rsim::TensorRole role) {
  double bytes = 0.0;
  for (const auto& tensor : op.inputs) {
    bytes += tensor.role == role ? tensor.bytes().si() : 0.0;
  }
  return bytes;
}

const auto kAnyOp = [](const rsim::Op&) { return true; };

}  // namespace

TEST_CASE("π0.5 graph: stages, counts and the prefix → action cache edge", "[graph][pi05]") {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/pi05_thor.yaml"));
  const auto graph = rsim::build_graph(scenario);
  REQUIRE(graph.stages.size() == 3);
  CHECK(graph.stages[0].name == "vision");
  CHECK(graph.stages[2].steps == 10);
  CHECK(graph.topological_order().size() == graph.size());  // a DAG
  bool cache_edge = false;
  for (auto vertex : graph.topological_order()) {
    const rsim::Op& op = graph.op(vertex);
    if (op.block == rsim::Block::layer) {
      // prefix: 18 layers; action: 18 layers × 10 steps; vision: 27 layers
      const std::int64_t expected = op.stage == "vision" ? 27 : op.stage == "prefix" ? 18 : 180;
      CHECK(op.count == expected);
    }
    if (op.stage == "action" && op.kind == rsim::OpKind::attention) {
      for (auto edge : boost::make_iterator_range(boost::in_edges(vertex, graph.graph()))) {
        cache_edge = cache_edge || graph.op(boost::source(edge, graph.graph())).kind ==
                                       rsim::OpKind::kv_cache_write;
      }
      CHECK(op.attention.cached_tokens == 968);
      CHECK(op.attention.kv_tokens() == 1018);  // 968 cached + 50 own
    }
  }
  CHECK(cache_edge);
}

TEST_CASE("Gemma-2B prefill FLOPs at 968 tokens", "[graph][pi05]") {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/pi05_thor.yaml"));
  const auto graph = rsim::build_graph(scenario);
  const double flops = stage_sum(
      graph, "prefix",
      [](const rsim::Op& op) {
        return op.kind == rsim::OpKind::matmul || op.kind == rsim::OpKind::attention;
      },
      [](const rsim::Op& op) { return rsim::op_flops(op).si(); });
  // Matmuls: 2 × tokens × matmul params per layer × layers = 2 · 968 · (9,437,184 attention +
  // 100,663,296 GeGLU) · 18 = 3,836,781,527,040. Bidirectional attention: 4 · T² · N · H · L =
  // 4 · 968² · 8 · 256 · 18 = 138,169,810,944. Sum: 3,974,951,337,984 (≈ 3.97 TFLOP).
  CHECK(flops == Approx(3'974'951'337'984.0));
}

TEST_CASE("each weight is read once per run of its stage", "[graph][pi05]") {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/pi05_thor.yaml"));
  const auto graph = rsim::build_graph(scenario);
  const auto weight_bytes = [](const rsim::Op& op) {
    return role_bytes(op, rsim::TensorRole::weight);
  };
  // FP8 weights, 1 byte each. Vision: all 414,803,696 parameters (SigLIP + projector), once for
  // the 3 images (they share the batch).
  CHECK(stage_sum(graph, "vision", kAnyOp, weight_bytes) == Approx(414'803'696.0));
  // Prefix: 18 layers · 110,104,576 + final norm 2,048 + the 200 gathered embedding rows
  // 200 · 2048 = 409,600 (not the whole 257,152-row table) → 1,982,294,016.
  CHECK(stage_sum(graph, "prefix", kAnyOp, weight_bytes) == Approx(1'982'294'016.0));
  // Action: its 430,098,464 parameters every one of 10 steps → 4,300,984,640.
  CHECK(stage_sum(graph, "action", kAnyOp, weight_bytes) == Approx(4'300'984'640.0));
}

TEST_CASE("the action expert re-reads the prefix KV cache every layer and step", "[graph][pi05]") {
  const auto scenario = rsim::load_scenario(rsim::test::source_path("scenarios/pi05_thor.yaml"));
  const auto graph = rsim::build_graph(scenario);
  const double cache_bytes = stage_sum(
      graph, "action", [](const rsim::Op& op) { return op.kind == rsim::OpKind::attention; },
      [](const rsim::Op& op) { return role_bytes(op, rsim::TensorRole::kv_cache); });
  // K and V: 2 · 968 tokens · 1 KV head · 256 head_dim · 1 B (fp8) = 495,616 B per layer and
  // step; × 18 layers × 10 steps = 89,210,880 B.
  CHECK(cache_bytes == Approx(89'210'880.0));
}

TEST_CASE("a plain decoder gets embedding, layers and a last-token LM head", "[graph]") {
  const auto scenario =
      rsim::load_scenario(rsim::test::source_path("scenarios/llama3_8b_h100.yaml"));
  const auto graph = rsim::build_graph(scenario);
  bool lm_head = false;
  for (auto vertex : graph.topological_order()) {
    const rsim::Op& op = graph.op(vertex);
    if (op.name == "lm_head") {
      lm_head = true;
      // X[batch=4, seq=1, embed=4096] · W[4096, 128256]: FLOPs 2 · 4 · 4096 · 128256
      CHECK(rsim::op_flops(op).si() == Approx(2.0 * 4 * 4096 * 128256));
    }
    if (op.name == "attention") {
      CHECK(op.attention.mask == rsim::AttentionMask::causal);
    }
  }
  CHECK(lm_head);
}

TEST_CASE("unfused attention is QKᵀ, softmax and AV with the scores through DRAM", "[graph]") {
  const auto path = rsim::test::source_path("scenarios/llama3_8b_h100.yaml");
  const auto unfused =
      rsim::build_graph(rsim::load_scenario(path, {{{"fusion.attention", "unfused"}}, ""}));
  const auto fused = rsim::build_graph(rsim::load_scenario(path));
  double scores_flops = 0.0;
  double score_bytes = 0.0;
  for (auto vertex : unfused.topological_order()) {
    const rsim::Op& op = unfused.op(vertex);
    if (op.name == "attention_scores") {
      // batch 4 · heads 32 (8 KV heads × group 4) · 2048 queries · 2048 keys · head_dim 128 · 2
      // = 8.796e12 FLOPs: the masked half is computed too.
      scores_flops = rsim::op_flops(op).si();
      score_bytes = op.outputs.front().bytes().si();
    }
  }
  CHECK(scores_flops == Approx(2.0 * 4 * 32 * 2048 * 2048 * 128));
  // S = [batch 4, kv_heads 8, group 4, 2048, 2048] in bf16: 4 · 32 · 2048² · 2 B = 1,073,741,824
  CHECK(score_bytes == Approx(1'073'741'824.0));
  // Three ops replace one per layer: the graph grows by 2.
  CHECK(unfused.size() == fused.size() + 2);
}

TEST_CASE("a graph copies deeply and moves without copying its ops", "[graph]") {
  // Boost 1.74's adjacency_list has no move (its swap copies too): an OpGraph holds it by
  // pointer so that returning or storing a graph hands its ops over. A move keeps every op where
  // it was (the same address) with its edges; a copy is independent of the original.
  rsim::OpGraph graph;
  rsim::Op first;
  first.name = "first";
  rsim::Op second;
  second.name = "second";
  const auto from = graph.add_op(first);
  const auto to = graph.add_op(second);
  graph.add_edge(from, to, "x");
  rsim::OpGraph::Stage stage;
  stage.name = "stage";
  graph.stages.push_back(stage);
  const rsim::Op* first_address = &graph.op(from);

  rsim::OpGraph copy = graph;
  copy.mutable_op(from).name = "renamed";
  CHECK(graph.op(from).name == "first");
  CHECK(&copy.op(from) != first_address);

  rsim::OpGraph moved = std::move(graph);
  CHECK(&moved.op(from) == first_address);
  CHECK(moved.op(to).name == "second");
  CHECK(moved.edge_count() == 1);
  CHECK(moved.stages.size() == 1);
  const rsim::OpGraph copy_of_moved_from = graph;  // NOLINT(bugprone-use-after-move): an empty one
  CHECK(copy_of_moved_from.size() == 0);
  graph = copy;  // a moved-from graph takes an assignment
  CHECK(graph.op(from).name == "renamed");
  CHECK(graph.edge_count() == 1);
}
