// SPDX-License-Identifier: MIT
// Hugging Face config.json → TransformerSpec (sim/hf_config), `rsim import-hf`, and the presets
// it is checked against. Fixtures: tests/data/hf/README.md says where each file comes from.
#include "sim/spec/hf_config.hpp"

#include "cli_fixture.hpp"
#include "run_fixture.hpp"
#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/model_yaml.hpp"
#include "sim/spec/presets.hpp"
#include "test_paths.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using rsim::test::source_path;

namespace {

std::string hf(const std::string& folder) {
  return source_path("tests/data/hf/" + folder + "/config.json").string();
}

std::string invalid(const std::string& file) {
  return source_path("tests/data/hf/invalid/" + file).string();
}

rsim::TransformerSpec preset(const std::string& name) {
  return rsim::load_model(source_path("models/" + name + ".yaml"), rsim::find_preset)
      .stages.front()
      .component;
}

// Every field that shapes the op graph or the parameter count (not name, source or file).
void check_same_architecture(const rsim::TransformerSpec& imported,
                             const rsim::TransformerSpec& expected) {
  CHECK(imported.decoder == expected.decoder);
  CHECK(imported.hidden_size == expected.hidden_size);
  CHECK(imported.num_layers == expected.num_layers);
  CHECK(imported.num_heads == expected.num_heads);
  CHECK(imported.num_kv_heads == expected.num_kv_heads);
  CHECK(imported.head_dim == expected.head_dim);
  CHECK(imported.intermediate_size == expected.intermediate_size);
  CHECK(imported.activation == expected.activation);
  CHECK(imported.gated_mlp == expected.gated_mlp);
  CHECK(imported.norm == expected.norm);
  CHECK(imported.vocab_size == expected.vocab_size);
  CHECK(imported.tied_embeddings == expected.tied_embeddings);
  CHECK(imported.attention_bias == expected.attention_bias);
  CHECK(imported.mlp_bias == expected.mlp_bias);
  CHECK(imported.position == expected.position);
  CHECK(imported.max_position_embeddings == expected.max_position_embeddings);
  CHECK(imported.vision.has_value() == expected.vision.has_value());
  CHECK(imported.num_experts == expected.num_experts);
  CHECK(imported.experts_per_token == expected.experts_per_token);
  CHECK(rsim::count_parameters(imported).total() == rsim::count_parameters(expected).total());
}

using rsim::test::Outcome;
using rsim::test::rsim_cli;

// A minimal config around `model_type` and extra keys, for the table-driven defaults.
std::string small_config(const std::string& model_type, const std::string& extra = "") {
  return R"({"model_type": ")" + model_type +
         R"(", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
             "intermediate_size": 128, "hidden_act": "silu", "vocab_size": 100)" +
         extra + "}";
}

}  // namespace

TEST_CASE("imported Llama configs equal the shipped presets", "[hf_config]") {
  const auto llama2_7b = rsim::import_hf_config(hf("Llama-2-7b-hf"));
  check_same_architecture(llama2_7b, preset("llama2_7b"));
  // 6,738,415,616: derived in model_test.cpp ("Llama parameter counts match the published totals").
  CHECK(rsim::count_parameters(llama2_7b).total() == 6'738'415'616);
  CHECK(llama2_7b.name == "meta-llama/Llama-2-7b-hf");  // _name_or_path
  CHECK(llama2_7b.head_dim == 128);                     // no head_dim key: 4096 / 32 heads

  const auto llama3_8b = rsim::import_hf_config(hf("Meta-Llama-3-8B-Instruct"));
  check_same_architecture(llama3_8b, preset("llama3_8b"));
  CHECK(rsim::count_parameters(llama3_8b).total() == 8'030'261'248);  // model_test.cpp
  CHECK(llama3_8b.name == "Meta-Llama-3-8B-Instruct");  // no _name_or_path: the folder

  const auto llama2_13b = rsim::import_hf_config(hf("Llama-2-13b-hf"), "Llama 2 13B");
  check_same_architecture(llama2_13b, preset("llama2_13b"));
  CHECK(llama2_13b.name == "Llama 2 13B");
}

TEST_CASE("new presets match their published parameter totals", "[hf_config][model]") {
  // Llama-2-13B (HF config): per layer 4·5120² = 104,857,600 (MHA) + 3·5120·13824 =
  // 212,336,640 (SwiGLU) + 2·5120 (norms) = 317,204,480; × 40 = 12,688,179,200; embedding and
  // untied head 2·32000·5120 = 327,680,000; final norm 5120 → 13,015,864,320, the count Hugging
  // Face reports for meta-llama/Llama-2-13b-hf.
  CHECK(rsim::count_parameters(preset("llama2_13b")).total() == 13'015'864'320);
  // Llama-3.1-405B: per layer Q and O 2·16384² = 536,870,912; K and V 2·16384·(8·128) =
  // 33,554,432; SwiGLU 3·16384·53248 = 2,617,245,696; norms 2·16384 = 32,768 → 3,187,703,808;
  // × 126 = 401,650,679,808; 2·128256·16384 = 4,202,692,608; final norm 16384 →
  // 405,853,388,800 (Meta's "405B"; 405.85 B).
  CHECK(rsim::count_parameters(preset("llama3_405b")).total() == 405'853'388'800);
  // GPT-3 175B: per layer attention 4·12288² + 4·12288 (biases) = 604,028,928; MLP
  // 2·12288·49152 + 49152 + 12288 = 1,208,020,992; two LayerNorms 4·12288 = 49,152 →
  // 1,812,099,072; × 96 = 173,961,510,912; tied embedding 50257·12288 = 617,558,016; positions
  // 2048·12288 = 25,165,824; final LayerNorm 24,576 → 174,604,259,328 (the paper's "175B" is
  // 174.6 B rounded).
  CHECK(rsim::count_parameters(preset("gpt3_175b")).total() == 174'604'259'328);
}

TEST_CASE("GPT-2 style configs: n_embd, n_layer, n_head, n_positions, n_inner", "[hf_config]") {
  const auto gpt2 = rsim::import_hf_config(hf("gpt2"));
  CHECK(gpt2.hidden_size == 768);
  CHECK(gpt2.num_layers == 12);
  CHECK(gpt2.num_heads == 12);
  CHECK(gpt2.num_kv_heads == 12);                         // no num_key_value_heads: MHA
  CHECK(gpt2.head_dim == 64);                             // 768 / 12
  CHECK(gpt2.intermediate_size == 3072);                  // no n_inner: 4 · 768
  CHECK(gpt2.activation == rsim::Activation::gelu_tanh);  // "gelu_new"
  CHECK_FALSE(gpt2.gated_mlp);
  CHECK(gpt2.norm == rsim::NormKind::layernorm);
  CHECK(gpt2.position == rsim::PositionEmbedding::learned);
  CHECK(gpt2.max_position_embeddings == 1024);
  CHECK(gpt2.tied_embeddings);  // absent: GPT2Config inherits PretrainedConfig's True
  CHECK(gpt2.attention_bias);
  CHECK(gpt2.mlp_bias);
  // GPT-2 small: wte 50257·768 = 38,597,376 + wpe 1024·768 = 786,432; per layer c_attn
  // 768·2304 + 2304, c_proj 768² + 768 → 2,362,368; c_fc 768·3072 + 3072, c_proj 3072·768 + 768
  // → 4,722,432; ln_1, ln_2 4·768 = 3,072 → 7,087,872; × 12 = 85,054,464; ln_f 1,536 →
  // 124,439,808 (the "124M" of GPT-2 small).
  CHECK(rsim::count_parameters(gpt2).total() == 124'439'808);

  // GPT-3 175B written in GPT-2's format (n_inner: null → 4·d) is the gpt3_175b preset.
  check_same_architecture(rsim::import_hf_config(hf("gpt3-175b-gpt2-style")), preset("gpt3_175b"));
}

TEST_CASE("model_type fills in what config.json does not say", "[hf_config]") {
  // tie_word_embeddings when absent: LlamaConfig's default False, GemmaConfig's True.
  CHECK_FALSE(rsim::parse_hf_config(small_config("llama"), "llama.json").tied_embeddings);
  CHECK(rsim::parse_hf_config(small_config("gemma"), "gemma.json").tied_embeddings);
  // GPT-NeoX: LayerNorm, plain MLP, biases by default, rope.
  const auto neox = rsim::parse_hf_config(small_config("gpt_neox"), "neox.json");
  CHECK(neox.norm == rsim::NormKind::layernorm);
  CHECK_FALSE(neox.gated_mlp);
  CHECK(neox.attention_bias);
  CHECK(neox.position == rsim::PositionEmbedding::rope);
  // Keys in the file win over the table.
  CHECK_FALSE(
      rsim::parse_hf_config(small_config("gpt_neox", R"(, "attention_bias": false)"), "neox.json")
          .attention_bias);
  // Gemma's hidden_activation wins over its legacy hidden_act "gelu" (google/gemma-2b's
  // config.json on Hugging Face gives both).
  CHECK(rsim::parse_hf_config(
            small_config("gemma",
                         R"(, "hidden_act": "gelu", "hidden_activation": "gelu_pytorch_tanh")"),
            "gemma.json")
            .activation == rsim::Activation::gelu_tanh);
  // head_dim given explicitly (Gemma 7B: 16 heads × 256 ≠ 3072) is kept.
  CHECK(
      rsim::parse_hf_config(small_config("gemma", R"(, "head_dim": 32)"), "gemma.json").head_dim ==
      32);
  // A sliding window switched off (Qwen-style use_sliding_window: false) or null is not refused.
  CHECK_NOTHROW(rsim::parse_hf_config(
      small_config("mistral", R"(, "sliding_window": 4096, "use_sliding_window": false)"),
      "m.json"));
  CHECK_NOTHROW(
      rsim::parse_hf_config(small_config("mistral", R"(, "sliding_window": null)"), "m.json"));
}

TEST_CASE("the model YAML that import-hf prints loads back as the same model", "[hf_config]") {
  for (const char* folder :
       {"Llama-2-7b-hf", "Meta-Llama-3-8B-Instruct", "gpt2", "Mixtral-8x7B-v0.1"}) {
    INFO(folder);
    const auto imported = rsim::import_hf_config(hf(folder));
    const auto reloaded =
        rsim::parse_transformer(rsim::parse_config(rsim::model_yaml(imported), "imported.yaml"));
    check_same_architecture(reloaded, imported);
    CHECK(reloaded.name == imported.name);
    CHECK(reloaded.source == imported.source);
  }
}

TEST_CASE("a config.json loads directly as a model, in a scenario too", "[hf_config][scenario]") {
  const auto model = rsim::load_model(hf("Llama-2-7b-hf"), rsim::find_preset);
  REQUIRE(model.stages.size() == 1);
  CHECK(model.stages.front().name == "decoder");
  CHECK(rsim::count_parameters(model).total() == 6'738'415'616);

  // The Llama-3-8B scenario with the config.json in place of the preset costs the same.
  const auto with_preset = rsim::test::run_scenario("llama3_8b_h100");
  const auto with_config =
      rsim::test::run_scenario("llama3_8b_h100", {{"model", hf("Meta-Llama-3-8B-Instruct")}});
  CHECK(with_config.parameters.total() == with_preset.parameters.total());
  CHECK(with_config.footprint.weights.si() == with_preset.footprint.weights.si());
  CHECK(with_config.bounds.total.t_lower.si() == Approx(with_preset.bounds.total.t_lower.si()));
}

TEST_CASE("config.json errors name the file, the line and the key", "[hf_config]") {
  CHECK_THROWS_WITH(
      rsim::import_hf_config(invalid("missing_hidden_size.json")),
      invalid("missing_hidden_size.json") + ": error: missing key 'hidden_size' (or 'n_embd')");
  // "num_attention_heads" is on line 14 of the Llama-2-7B file, its quote in column 3.
  CHECK_THROWS_WITH(rsim::import_hf_config(invalid("heads_as_string.json")),
                    invalid("heads_as_string.json") +
                        ":14:3: error: 'num_attention_heads': expected a whole number ≥ 1, got "
                        "string \"32\"");
  CHECK_THROWS_WITH(
      rsim::import_hf_config(invalid("unknown_model_type.json")),
      invalid("unknown_model_type.json") +
          ":13:3: error: 'model_type': unknown model_type \"mamba\" (rsim knows "
          "llama, mistral, mixtral, gemma, gpt2, gpt_neox, gemma2, gemma3_text, qwen2, "
          "qwen2_moe, qwen3, qwen3_moe, phi3, deepseek_v3, gpt_oss, opt, gptj); write the "
          "model YAML by "
          "hand (docs/yaml.md \"Model\")");
  // Qwen2 with use_sliding_window: true windows only the layers from max_window_layers on, a
  // pattern rsim does not model: "sliding_window" is on line 20.
  CHECK_THROWS_WITH(rsim::import_hf_config(invalid("qwen2_sliding_window.json")),
                    invalid("qwen2_sliding_window.json") +
                        ":20:3: error: 'sliding_window': sliding-window attention "
                        "(sliding_window: 131072) is not modelled yet; rsim will not import it as "
                        "a different model");
  // Mixtral's window (line 23) is on every layer (MixtralAttention): kept.
  CHECK(rsim::import_hf_config(invalid("mixtral_sliding_window.json")).sliding_window == 4096);
  // The comma after "intermediate_size": 11008 (line 11) is missing; the parser notices at the
  // next key's string token, line 12, whose closing quote is column 27 (2 spaces, the quote,
  // 23 letters of max_position_embeddings, the quote).
  CHECK_THROWS_WITH(rsim::import_hf_config(invalid("malformed.json")),
                    Catch::StartsWith(invalid("malformed.json") +
                                      ":12:27: error: invalid JSON: syntax error while parsing "
                                      "object - unexpected string literal"));
  CHECK_THROWS_WITH(rsim::parse_hf_config("[1, 2]", "list.json"),
                    "list.json:1:1: error: expected a JSON object of config keys, got an array");
  // OPT names its MLP width ffn_dim.
  CHECK_THROWS_WITH(rsim::parse_hf_config(small_config("opt"), "opt.json"),
                    "opt.json: error: missing key 'ffn_dim'");
  CHECK_THROWS_WITH(
      rsim::parse_hf_config(
          small_config("qwen2", R"(, "sliding_window": 4096, "use_sliding_window": true)"),
          "q.json"),
      Catch::Contains("sliding-window attention (sliding_window: 4096) is not modelled yet"));
  CHECK_THROWS_WITH(
      rsim::parse_hf_config(small_config("llama", R"(, "tie_word_embeddings": "no")"), "l.json"),
      Catch::Contains("'tie_word_embeddings': expected true or false, got string \"no\""));
  CHECK_THROWS_WITH(rsim::parse_hf_config(R"({"model_type": "llama"})", "l.json"),
                    "l.json: error: missing key 'hidden_size' (or 'n_embd')");
  CHECK_THROWS_AS(rsim::import_hf_config(invalid("no_such_file.json")), rsim::ConfigError);
}

TEST_CASE("rsim import-hf prints the model YAML and bad input exits 2", "[hf_config][cli]") {
  const auto imported = rsim_cli({"import-hf", hf("Llama-2-7b-hf"), "--name", "Llama 2 7B"});
  REQUIRE(imported.code == 0);
  CHECK(imported.err.empty());
  CHECK_THAT(imported.out, Catch::StartsWith("name: \"Llama 2 7B\"\n"));
  const auto spec = rsim::parse_transformer(rsim::parse_config(imported.out, "stdout.yaml"));
  check_same_architecture(spec, preset("llama2_7b"));

  for (const std::string& bad :
       {invalid("missing_hidden_size.json"), invalid("heads_as_string.json"),
        invalid("unknown_model_type.json"), invalid("malformed.json"),
        invalid("qwen2_sliding_window.json")}) {
    INFO(bad);
    const auto outcome = rsim_cli({"import-hf", bad});
    CHECK(outcome.code == 2);
    CHECK(outcome.out.empty());
    CHECK_THAT(outcome.err, Catch::StartsWith("rsim: " + bad));
  }
  CHECK(rsim_cli({"import-hf"}).code == 2);  // CONFIG is required
}
