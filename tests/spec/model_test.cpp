// SPDX-License-Identifier: MIT
#include "sim/spec/model.hpp"

#include "sim/spec/config.hpp"
#include "sim/spec/hf_config.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/presets.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using rsim::test::source_path;

namespace {

rsim::ModelSpec model(const std::string& name) {
  return rsim::load_model(source_path("models/" + name + ".yaml"), rsim::find_preset);
}

}  // namespace

TEST_CASE("every shipped model loads", "[model]") {
  for (const auto& entry : std::filesystem::directory_iterator(source_path("models"))) {
    INFO(entry.path());
    CHECK_NOTHROW(rsim::load_model(entry.path(), rsim::find_preset));
  }
}

TEST_CASE("Llama parameter counts match the published totals", "[model]") {
  // Llama-2-7B, HF config: per layer 4·4096² (attention) + 3·4096·11008 (SwiGLU) + 2·4096 (norms)
  // = 202,383,360; × 32 = 6,476,267,520; + embedding and untied head 2·32000·4096 = 262,144,000;
  // + final norm 4096 → 6,738,415,616 (the parameter count Hugging Face reports for the model).
  CHECK(rsim::count_parameters(model("llama2_7b")).total() == 6'738'415'616);
  // Llama-3-8B: per layer 2·4096² + 2·4096·1024 (GQA, 8 KV heads × 128) + 3·4096·14336 + 8192
  // = 218,112,000; × 32 = 6,979,584,000; + 2·128256·4096 = 1,050,673,152; + 4096
  // → 8,030,261,248 (Meta's published 8.03B).
  CHECK(rsim::count_parameters(model("llama3_8b")).total() == 8'030'261'248);
}

TEST_CASE("π0.5 parameter counts per component", "[model][pi05]") {
  const auto pi05 = model("pi05");
  REQUIRE(pi05.stages.size() == 3);
  const auto& vision = pi05.stages[0];
  const auto& prefix = pi05.stages[1];
  const auto& action = pi05.stages[2];

  // SigLIP So400m/14 (no MAP head), per layer: QKVO 4·1152² + 4·1152 (biases) = 5,313,024;
  // MLP 2·1152·4304 + 4304 + 1152 = 9,921,872; two LayerNorms 4·1152 = 4,608 → 15,239,504;
  // × 27 = 411,466,608. Patch embedding 3·14²·1152 + 1152 = 678,528; positions 256·1152 =
  // 294,912; final LayerNorm 2,304 → 412,442,352 (≈ 400M, "So400m").
  CHECK(rsim::count_parameters(vision.component).total() == 412'442'352);
  // + PaliGemma's projector 1152·2048 + 2048 = 2,361,344 → 414,803,696.
  CHECK(rsim::count_parameters(vision).total() == 414'803'696);
  CHECK(vision.tokens == 256);  // (224 / 14)²

  // Gemma 2B, per layer: Q 2048·2048 + KV 2·2048·256 + O 2048·2048 = 9,437,184; GeGLU
  // 3·2048·16384 = 100,663,296; norms 2·2048 → 110,104,576; × 18 = 1,981,882,368; tied
  // embedding 257152·2048 = 526,647,296; final norm 2048 → 2,508,531,712 (PaliGemma's 2.5B LM).
  CHECK(rsim::count_parameters(prefix).total() == 2'508'531'712);

  // Gemma 300M as openpi defines it: per layer Q 1024·2048 + KV 2·1024·256 + O 2048·1024 =
  // 4,718,592; GeGLU 3·1024·4096 = 12,582,912; norms 2·1024 → 17,303,552; × 18 = 311,463,936;
  // + final norm 1024 = 311,464,960 (openpi's comment: "311M params").
  CHECK(rsim::count_parameters(action.component).total() == 311'464'960);
  // π0.5 replaces each RMSNorm scale by adaRMS Dense(1024 → 3072) + bias = 3,148,800:
  // per layer 4,718,592 + 12,582,912 + 2·3,148,800 = 23,599,104; × 18 = 424,783,872; final
  // 3,148,800; plus action_in 32·1024 + 1024 = 33,792, time MLP 2·(1024² + 1024) = 2,099,200,
  // action_out 1024·32 + 32 = 32,800 → 430,098,464 (≈ 428M without the extras; openpi gemma.py
  // and pi0.py @ 15a9616).
  CHECK(rsim::count_parameters(action).total() == 430'098'464);

  // Whole model: 414,803,696 + 2,508,531,712 + 430,098,464 = 3,353,433,872 (π0's "3.3B").
  CHECK(rsim::count_parameters(pi05).total() == 3'353'433'872);
}

TEST_CASE("π0.5 stage structure follows openpi", "[model][pi05]") {
  const auto pi05 = model("pi05");
  CHECK(pi05.composite);
  CHECK(pi05.stages[0].images == 3);
  CHECK(pi05.stages[1].tokens == 968);  // 3 × 256 + 200
  CHECK(pi05.stages[1].embedded_tokens == 200);
  CHECK(pi05.stages[1].attention == rsim::AttentionMask::bidirectional);
  CHECK(pi05.stages[1].writes_kv_cache);
  CHECK(pi05.stages[2].steps == 10);
  CHECK(pi05.stages[2].attends_to == "prefix");
  CHECK(pi05.stages[2].adaptive_norm);
}

TEST_CASE("heads not divisible by KV heads is an error at the key", "[model]") {
  const auto document = rsim::parse_config(
      "name: bad\nsource: test\narchitecture: decoder\nhidden_size: 64\nnum_hidden_layers: 2\n"
      "num_attention_heads: 8\nnum_key_value_heads: 3\nhead_dim: 8\nintermediate_size: 128\n"
      "hidden_act: silu\ngated_mlp: true\nnorm: rmsnorm\nvocab_size: 10\n"
      "tie_word_embeddings: false\nattention_bias: false\nmlp_bias: false\n"
      "position_embedding: rope\n",
      "bad.yaml");
  CHECK_THROWS_WITH(rsim::parse_transformer(document),
                    "bad.yaml:7:22: error: 'num_key_value_heads': num_attention_heads 8 is not "
                    "divisible by num_key_value_heads 3");
}

TEST_CASE("attention dropout is a probability, imported from Hugging Face", "[model]") {
  const std::string base =
      "name: d\nsource: test\narchitecture: decoder\nhidden_size: 64\nnum_hidden_layers: 2\n"
      "num_attention_heads: 8\nnum_key_value_heads: 8\nhead_dim: 8\nintermediate_size: 128\n"
      "hidden_act: gelu\ngated_mlp: false\nnorm: layernorm\nvocab_size: 10\n"
      "tie_word_embeddings: false\nattention_bias: false\nmlp_bias: false\n"
      "position_embedding: rope\n";
  CHECK(rsim::parse_transformer(rsim::parse_config(base, "d.yaml")).attention_dropout == 0.0);
  CHECK(rsim::parse_transformer(rsim::parse_config(base + "attention_dropout: 0.1\n", "d.yaml"))
            .attention_dropout == 0.1);
  // Line 18 after the 17 of `base`; the value starts at column 20 ("attention_dropout: ").
  CHECK_THROWS_WITH(
      rsim::parse_transformer(rsim::parse_config(base + "attention_dropout: 1.5\n", "d.yaml")),
      Catch::Contains("d.yaml:18:20: error: 'attention_dropout': a dropout probability in [0, 1)"));
  // GPT-2's config.json: "attn_pdrop": 0.1.
  CHECK(rsim::import_hf_config(source_path("tests/data/hf/gpt2/config.json")).attention_dropout ==
        0.1);
}

TEST_CASE("a model whose parameters overflow 2^63 is refused at its file", "[model]") {
  // Issue 23 #2: 10^15 layers of Llama 3 8B (218,112,000 parameters each) printed
  // "-2.302E parameters". 10^15 × 2.18e8 = 2.2e23 > 2^63 ≈ 9.2e18. The first product to
  // overflow is the layers' attention and two norms: 4096·(4096 + 2·1024) + 4096·4096 + 2·4096
  // = 41,951,232 per layer.
  const auto path = std::filesystem::temp_directory_path() / "rsim_overflowing_model.yaml";
  {
    std::ifstream in(source_path("models/llama3_8b.yaml"));
    std::ofstream out(path);
    std::string line;
    while (std::getline(in, line)) {
      out << (line.starts_with("num_hidden_layers:") ? "num_hidden_layers: 1000000000000000" : line)
          << '\n';
    }
  }
  CHECK_THROWS_WITH(rsim::load_model(path, rsim::find_preset),
                    Catch::Contains(path.string() + ": error: the model has more than 2^63 "
                                                    "parameters (1000000000000000 × 41951232"));
  std::filesystem::remove(path);
}
