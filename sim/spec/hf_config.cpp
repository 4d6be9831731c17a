// SPDX-License-Identifier: MIT
#include "sim/spec/hf_config.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

namespace rsim {
namespace {

using Json = nlohmann::json;

/// What a config.json leaves to the modelling code of its model_type (transformers
/// models/<type>/modeling_<type>.py and configuration_<type>.py), or why rsim cannot model it.
struct Architecture {
  std::string_view model_type;
  bool gated_mlp = false;
  NormKind norm = NormKind::rmsnorm;
  PositionEmbedding position = PositionEmbedding::rope;
  bool tied_by_default = false;  ///< the config class's tie_word_embeddings default
  bool attention_bias = false;   ///< used when the config has no attention_bias key
  bool mlp_bias = false;         ///< used when the config has no mlp_bias key
  /// MLP width as a multiple of hidden_size when intermediate_size is absent or null (0: required).
  std::int64_t default_ffn_multiple = 0;
  std::string_view not_modelled;  ///< non-empty: what rsim cannot represent (import refuses)
  /// Its modelling code routes tokens to num_local_experts MLPs (MixtralSparseMoeBlock).
  bool local_experts = false;
  /// Q, K and V carry biases whatever attention_bias says (Qwen2Attention: bias=True on
  /// q_proj/k_proj/v_proj, bias=False on o_proj).
  bool qkv_bias = false;
  bool qk_norm = false;  ///< q_norm / k_norm RMSNorms over head_dim (Qwen3Attention)
  /// A sliding_window, where the config sets one, applies to every layer (MistralAttention,
  /// Phi3Attention); elsewhere it is refused (Qwen2's max_window_layers, Gemma 2's alternation).
  bool window_on_every_layer = false;
};

// LlamaConfig, MistralConfig, MixtralConfig: tie_word_embeddings=False; GemmaConfig: True;
// GPT2Config inherits PretrainedConfig's True and hard-codes biases on c_attn/c_proj/c_fc with
// n_inner=None → 4·n_embd; GPTNeoXConfig: attention_bias=True, MLP biases always, untied.
constexpr std::array kArchitectures{
    Architecture{"llama", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false, 0,
                 ""},
    Architecture{"mistral", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false,
                 0, "", false, false, false, true},
    Architecture{"mixtral", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false,
                 0, "", true, false, false, true},
    Architecture{"gemma", true, NormKind::rmsnorm, PositionEmbedding::rope, true, false, false, 0,
                 ""},
    Architecture{"gpt2", false, NormKind::layernorm, PositionEmbedding::learned, true, true, true,
                 4, ""},
    Architecture{"gpt_neox", false, NormKind::layernorm, PositionEmbedding::rope, false, true, true,
                 0, ""},
    Architecture{"gemma2", true, NormKind::rmsnorm, PositionEmbedding::rope, true, false, false, 0,
                 "four RMSNorms per block and alternating sliding-window layers"},
    Architecture{"qwen2", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false, 0,
                 "", false, true},
    Architecture{"qwen3", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false, 0,
                 "", false, false, true},
    // Phi3Attention fuses Q, K, V into qkv_proj and Phi3MLP gate and up into gate_up_proj: the
    // same weights as Llama's separate projections, no biases.
    Architecture{"phi3", true, NormKind::rmsnorm, PositionEmbedding::rope, false, false, false, 0,
                 "", false, false, false, true},
    Architecture{"opt", false, NormKind::layernorm, PositionEmbedding::learned, true, true, true, 0,
                 "a learned position table of max_position_embeddings + 2 rows and an optional "
                 "word_embed_proj_dim projection"},
};

// Hugging Face activation names (transformers activations.py ACT2FN) → rsim's. gelu_new,
// gelu_fast and gelu_pytorch_tanh are all the tanh approximation of GELU.
constexpr std::array kActivationNames{
    Named<Activation>{Activation::silu, "silu"},
    Named<Activation>{Activation::silu, "swish"},
    Named<Activation>{Activation::gelu, "gelu"},
    Named<Activation>{Activation::gelu_tanh, "gelu_new"},
    Named<Activation>{Activation::gelu_tanh, "gelu_fast"},
    Named<Activation>{Activation::gelu_tanh, "gelu_pytorch_tanh"},
    Named<Activation>{Activation::relu, "relu"},
};

/// A size key and the GPT-2 name Hugging Face maps onto it (GPT2Config.attribute_map).
struct SizeKey {
  std::string_view key;
  std::string_view gpt2_key;
};
constexpr SizeKey kHiddenSize{"hidden_size", "n_embd"};
constexpr SizeKey kLayers{"num_hidden_layers", "n_layer"};
constexpr SizeKey kHeads{"num_attention_heads", "n_head"};
constexpr SizeKey kPositions{"max_position_embeddings", "n_positions"};
constexpr SizeKey kIntermediate{"intermediate_size", "n_inner"};

// The activation key, in the order transformers reads them: Gemma's hidden_activation wins over
// its legacy hidden_act (specs.md §6.14); GPT-2 style configs say activation_function.
constexpr std::array<std::string_view, 3> kActivationKeys{"hidden_activation", "hidden_act",
                                                          "activation_function"};

/// A feature a config may switch on that rsim's op graph does not have yet.
struct Unmodelled {
  std::string_view key;
  std::string_view feature;
  std::int64_t above = 0;  ///< refused when the key is an integer greater than this
};
// Mixtral's num_local_experts is modelled (see parse_experts); these MoE keys belong to routers
// with shared experts, expert groups or per-layer dense/MoE patterns that rsim does not have.
constexpr std::array kUnmodelled{
    Unmodelled{"num_experts", "MoE with Qwen2-MoE/OLMoE routing (shared experts, sparse steps)", 1},
    Unmodelled{"n_routed_experts", "MoE with DeepSeek routing (shared experts, expert groups)", 1},
    Unmodelled{"n_shared_experts", "shared experts beside the routed ones", 0},
    Unmodelled{"sliding_window", "sliding-window attention", 0},
};

// Converts nlohmann's byte offset (the number of bytes read, so the failing byte is its last)
// to a 1-based line and column.
SourceMark mark_at(const std::string& file, const std::string& text, std::size_t bytes_read) {
  const std::size_t offset = std::min(bytes_read > 0 ? bytes_read - 1 : 0, text.size());
  const auto begin = text.begin();
  const auto end = begin + static_cast<std::ptrdiff_t>(offset);
  const int line = 1 + static_cast<int>(std::count(begin, end, '\n'));
  const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const std::size_t column =
      (line_start == std::string::npos || offset == 0) ? offset + 1 : offset - line_start;
  return {file, line, static_cast<int>(column)};
}

// An input iterator over the JSON text that remembers how far the parser has read, so that a
// SAX event can be given a line and column (nlohmann 3.11 keeps no positions in its DOM).
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* begin, const char* current, std::size_t* bytes_read)
      : begin_(begin), current_(current), bytes_read_(bytes_read) {}
  reference operator*() const {
    *bytes_read_ = static_cast<std::size_t>(current_ - begin_) + 1;
    return *current_;
  }
  TrackingIterator& operator++() {
    ++current_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++current_;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return current_ == other.current_; }

 private:
  const char* begin_;
  const char* current_;
  std::size_t* bytes_read_;
};

// Records where each top-level key is written (its opening quote). The lexer has read up to the
// key's closing quote when the parser reports the key.
class KeyPositions {
 public:
  KeyPositions(const std::string& text, const std::string& file, const std::size_t* bytes_read)
      : text_(text), file_(file), bytes_read_(bytes_read) {}

  bool null() { return true; }
  bool boolean(bool /*value*/) { return true; }
  bool number_integer(Json::number_integer_t /*value*/) { return true; }
  bool number_unsigned(Json::number_unsigned_t /*value*/) { return true; }
  bool number_float(Json::number_float_t /*value*/, const Json::string_t& /*text*/) { return true; }
  bool string(Json::string_t& /*value*/) { return true; }
  bool binary(Json::binary_t& /*value*/) { return true; }
  bool start_object(std::size_t /*size*/) {
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*size*/) {
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(Json::string_t& key) {
    if (depth_ == 1) {
      std::size_t quote = *bytes_read_ >= 2 ? *bytes_read_ - 2 : 0;  // before the closing quote
      while (quote > 0 && !(text_[quote] == '"' && text_[quote - 1] != '\\')) {
        --quote;
      }
      marks_.emplace(key, mark_at(file_, text_, quote + 1));
    }
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return false;
  }

  [[nodiscard]] std::map<std::string, SourceMark> take() { return std::move(marks_); }

 private:
  const std::string& text_;
  const std::string& file_;
  const std::size_t* bytes_read_;
  int depth_ = 0;
  std::map<std::string, SourceMark> marks_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." → the part
// after the position, which the diagnostic prefix already gives.
std::string parse_error_reason(const std::string& what) {
  const std::size_t at = what.find("parse error");
  const std::size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

std::string json_type(const Json& value) {
  if (value.is_number_integer()) {
    return fmt::format("the integer {}", value.dump());
  }
  if (value.is_number_float()) {
    return fmt::format("the number {}", value.dump());
  }
  if (value.is_string() || value.is_boolean()) {
    return fmt::format("{} {}", value.type_name(), value.dump());
  }
  return fmt::format("an {}", value.type_name());
}

/// A parsed config.json: its top-level keys, where each is written, typed accessors whose errors
/// name the file, line and key.
class HfConfig {
 public:
  HfConfig(Json root, std::map<std::string, SourceMark> marks, std::string file)
      : root_(std::move(root)), marks_(std::move(marks)), file_(std::move(file)) {}

  [[nodiscard]] const std::string& file() const { return file_; }

  /// The value of `key`; nullptr when absent or null (Hugging Face writes null for "default").
  [[nodiscard]] const Json* find(std::string_view key) const {
    const auto found = root_.find(std::string(key));
    return found == root_.end() || found->is_null() ? nullptr : &*found;
  }
  /// The key of `size` that the config uses (the HF name first), or nullopt.
  [[nodiscard]] std::optional<std::string_view> used_key(const SizeKey& size) const {
    for (const std::string_view key : {size.key, size.gpt2_key}) {
      if (find(key) != nullptr) {
        return key;
      }
    }
    return std::nullopt;
  }

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    const auto mark = marks_.find(std::string(key));
    throw ConfigError(mark != marks_.end() ? mark->second : SourceMark{file_, 0, 0},
                      fmt::format("'{}': {}", key, message));
  }
  [[noreturn]] void fail_missing(std::string_view expected) const {
    throw ConfigError(SourceMark{file_, 0, 0}, fmt::format("missing key {}", expected));
  }

  [[nodiscard]] std::int64_t positive_int(std::string_view key) const {
    const Json& value = *find(key);
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1) {
      fail(key, fmt::format("expected a whole number ≥ 1, got {}", json_type(value)));
    }
    return value.get<std::int64_t>();
  }
  [[nodiscard]] std::int64_t required_size(const SizeKey& size) const {
    const auto key = used_key(size);
    if (!key) {
      fail_missing(fmt::format("'{}' (or '{}')", size.key, size.gpt2_key));
    }
    return positive_int(*key);
  }
  [[nodiscard]] std::optional<std::int64_t> optional_size(const SizeKey& size) const {
    const auto key = used_key(size);
    return key ? std::optional(positive_int(*key)) : std::nullopt;
  }
  [[nodiscard]] std::optional<std::int64_t> optional_int(std::string_view key) const {
    return find(key) != nullptr ? std::optional(positive_int(key)) : std::nullopt;
  }
  [[nodiscard]] bool boolean(std::string_view key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr) {
      return fallback;
    }
    if (!value->is_boolean()) {
      fail(key, fmt::format("expected true or false, got {}", json_type(*value)));
    }
    return value->get<bool>();
  }
  [[nodiscard]] std::string text(std::string_view key) const {
    const Json& value = *find(key);
    if (!value.is_string()) {
      fail(key, fmt::format("expected a string, got {}", json_type(value)));
    }
    return value.get<std::string>();
  }

 private:
  Json root_;
  std::map<std::string, SourceMark> marks_;
  std::string file_;
};

HfConfig parse_json(const std::string& text, const std::string& file) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& error) {
    throw ConfigError(mark_at(file, text, error.byte),
                      "invalid JSON: " + parse_error_reason(error.what()));
  } catch (const Json::out_of_range& error) {
    // "number overflow parsing '1e999'" (out_of_range.406) carries no position: find the number.
    const std::string what = error.what();
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    const std::string number =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const std::size_t at = number.empty() ? std::string::npos : text.find(number);
    throw ConfigError(mark_at(file, text, at == std::string::npos ? 0 : at + 1),
                      fmt::format("invalid JSON: the number {} is beyond a double's range",
                                  number.empty() ? "here" : number));
  }
  if (!root.is_object()) {
    throw ConfigError(
        SourceMark{file, 1, 1},
        fmt::format("expected a JSON object of config keys, got {}", json_type(root)));
  }
  std::size_t bytes_read = 0;
  KeyPositions positions(text, file, &bytes_read);
  const char* const begin = text.data();
  Json::sax_parse(TrackingIterator(begin, begin, &bytes_read),
                  TrackingIterator(begin, begin + text.size(), &bytes_read), &positions);
  return {std::move(root), positions.take(), file};
}

const Architecture& find_architecture(const HfConfig& config) {
  if (config.find("model_type") == nullptr) {
    config.fail_missing(
        "'model_type' (rsim takes the MLP, norm and position embedding from it; write the model "
        "YAML by hand for a config without one)");
  }
  const std::string model_type = config.text("model_type");
  for (const Architecture& architecture : kArchitectures) {
    if (architecture.model_type == model_type) {
      if (!architecture.not_modelled.empty()) {
        config.fail("model_type", fmt::format("{} has {}, which rsim does not model yet; write the "
                                              "model YAML by hand (docs/yaml.md) if an "
                                              "approximation will do",
                                              model_type, architecture.not_modelled));
      }
      return architecture;
    }
  }
  std::vector<std::string_view> known;
  for (const Architecture& architecture : kArchitectures) {
    if (architecture.not_modelled.empty()) {
      known.push_back(architecture.model_type);
    }
  }
  config.fail("model_type",
              fmt::format("unknown model_type \"{}\" (rsim knows {}); write the model YAML by hand "
                          "(docs/yaml.md \"Model\")",
                          model_type, fmt::join(known, ", ")));
}

void refuse_unmodelled(const HfConfig& config, const Architecture& architecture) {
  for (const Unmodelled& rule : kUnmodelled) {
    const Json* value = config.find(rule.key);
    if (value == nullptr || !value->is_number_integer() ||
        value->get<std::int64_t>() <= rule.above) {
      continue;
    }
    // Qwen2 and others carry a sliding_window they switch off with use_sliding_window: false.
    if (rule.key == "sliding_window" &&
        (!config.boolean("use_sliding_window", true) || architecture.window_on_every_layer)) {
      continue;
    }
    config.fail(rule.key, fmt::format("{} ({}: {}) is not modelled yet; rsim will not import it "
                                      "as a different model",
                                      rule.feature, rule.key, value->dump()));
  }
}

// Mixtral: num_local_experts E and num_experts_per_tok k (MixtralConfig defaults 8 and 2 are
// not assumed: a config without them is refused). Other model_types have no experts.
void parse_experts(const HfConfig& config, const Architecture& architecture,
                   TransformerSpec& spec) {
  const Json* experts = config.find("num_local_experts");
  if (!architecture.local_experts) {
    if (experts != nullptr && experts->is_number_integer() && experts->get<std::int64_t>() > 1) {
      config.fail("num_local_experts",
                  fmt::format("MoE (num_local_experts: {}) on model_type {}, whose modelling code "
                              "has a dense MLP; rsim will not import it as a different model",
                              experts->dump(), architecture.model_type));
    }
    return;
  }
  if (experts == nullptr) {
    config.fail_missing("'num_local_experts' (model_type mixtral routes tokens to experts)");
  }
  spec.num_experts = config.positive_int("num_local_experts");
  if (config.find("num_experts_per_tok") == nullptr) {
    config.fail_missing("'num_experts_per_tok' (k, the experts each token runs)");
  }
  spec.experts_per_token = config.positive_int("num_experts_per_tok");
  if (spec.experts_per_token > spec.num_experts) {
    config.fail("num_experts_per_tok",
                fmt::format("expected 1 ≤ num_experts_per_tok ≤ num_local_experts ({}), got {}",
                            spec.num_experts, spec.experts_per_token));
  }
}

Activation parse_activation(const HfConfig& config) {
  for (const std::string_view key : kActivationKeys) {
    if (config.find(key) == nullptr) {
      continue;
    }
    const std::string name = config.text(key);
    if (const auto activation = find_named(name, kActivationNames)) {
      return *activation;
    }
    config.fail(key, fmt::format("unknown activation \"{}\" (rsim knows {})", name,
                                 names_of(kActivationNames)));
  }
  config.fail_missing("'hidden_act' (or 'hidden_activation', 'activation_function')");
}

std::string default_name(const Json* name_or_path, const std::filesystem::path& file) {
  if (name_or_path != nullptr && name_or_path->is_string() &&
      !name_or_path->get<std::string>().empty()) {
    return name_or_path->get<std::string>();
  }
  if (file.filename() == "config.json" && file.has_parent_path() &&
      !file.parent_path().filename().empty()) {
    return file.parent_path().filename().string();
  }
  return file.stem().string();
}

std::string quoted(const std::string& text) {
  // A JSON string literal is a valid YAML double-quoted scalar.
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

bool is_hf_config(const std::filesystem::path& path) { return path.extension() == ".json"; }

TransformerSpec parse_hf_config(const std::string& text, const std::string& file_label,
                                std::string_view name) {
  const HfConfig config = parse_json(text, file_label);
  const Architecture& architecture = find_architecture(config);
  refuse_unmodelled(config, architecture);

  TransformerSpec spec;
  spec.file = file_label;
  spec.name =
      name.empty() ? default_name(config.find("_name_or_path"), file_label) : std::string(name);
  spec.source = fmt::format(
      "Hugging Face config.json {} (model_type {}; MLP, norm and positions from "
      "rsim's model_type table)",
      file_label, architecture.model_type);
  spec.decoder = true;
  spec.hidden_size = config.required_size(kHiddenSize);
  spec.num_layers = config.required_size(kLayers);
  spec.num_heads = config.required_size(kHeads);
  spec.num_kv_heads = config.optional_int("num_key_value_heads").value_or(spec.num_heads);
  if (spec.num_heads % spec.num_kv_heads != 0) {
    config.fail("num_key_value_heads",
                fmt::format("num_attention_heads {} is not divisible by num_key_value_heads {}",
                            spec.num_heads, spec.num_kv_heads));
  }
  if (const auto head_dim = config.optional_int("head_dim")) {
    spec.head_dim = *head_dim;
  } else if (spec.hidden_size % spec.num_heads != 0) {
    config.fail(*config.used_key(kHeads),
                fmt::format("no head_dim, and hidden_size {} is not divisible by {} heads",
                            spec.hidden_size, spec.num_heads));
  } else {
    spec.head_dim = spec.hidden_size / spec.num_heads;
  }
  if (const auto intermediate = config.optional_size(kIntermediate)) {
    spec.intermediate_size = *intermediate;
  } else if (architecture.default_ffn_multiple > 0) {
    // 4 × hidden_size past 2^63 wrapped to 0 and was written as intermediate_size: 0 (issue 23).
    if (__builtin_mul_overflow(architecture.default_ffn_multiple, spec.hidden_size,
                               &spec.intermediate_size)) {
      config.fail(*config.used_key(kHiddenSize),
                  fmt::format("{} × hidden_size {} (the MLP width of {}) overflows 2^63",
                              architecture.default_ffn_multiple, spec.hidden_size,
                              architecture.model_type));
    }
  } else {
    config.fail_missing("'intermediate_size'");
  }
  spec.activation = parse_activation(config);
  spec.gated_mlp = architecture.gated_mlp;
  spec.norm = architecture.norm;
  if (config.find("vocab_size") == nullptr) {
    config.fail_missing("'vocab_size'");
  }
  spec.vocab_size = config.positive_int("vocab_size");
  spec.tied_embeddings = config.boolean("tie_word_embeddings", architecture.tied_by_default);
  spec.attention_bias = config.boolean("attention_bias", architecture.attention_bias);
  spec.qkv_bias = architecture.qkv_bias || spec.attention_bias;
  spec.qk_norm = architecture.qk_norm;
  spec.mlp_bias = config.boolean("mlp_bias", architecture.mlp_bias);
  spec.position = architecture.position;
  // The position table only counts (and only is a parameter) for learned positions.
  if (spec.position == PositionEmbedding::learned) {
    const auto positions = config.optional_size(kPositions);
    if (!positions) {
      config.fail_missing("'max_position_embeddings' (or 'n_positions') for learned positions");
    }
    spec.max_position_embeddings = *positions;
  }
  if (architecture.window_on_every_layer && config.find("sliding_window") != nullptr &&
      config.boolean("use_sliding_window", true)) {
    spec.sliding_window = config.positive_int("sliding_window");
  }
  parse_experts(config, architecture, spec);
  return spec;
}

TransformerSpec import_hf_config(const std::filesystem::path& path, std::string_view name) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    throw ConfigError(SourceMark{path.string(), 0, 0}, "cannot open the file");
  }
  std::ostringstream text;
  text << stream.rdbuf();
  return parse_hf_config(text.str(), path.string(), name);
}

std::string model_yaml(const TransformerSpec& spec) {
  std::string yaml;
  auto out = std::back_inserter(yaml);
  fmt::format_to(out, "name: {}\nsource: {}\n", quoted(spec.name), quoted(spec.source));
  fmt::format_to(out, "architecture: {}\n", spec.decoder ? "decoder" : "encoder");
  fmt::format_to(out, "hidden_size: {}\n", spec.hidden_size);
  fmt::format_to(out, "num_hidden_layers: {}\n", spec.num_layers);
  fmt::format_to(out, "num_attention_heads: {}\n", spec.num_heads);
  fmt::format_to(out, "num_key_value_heads: {}\n", spec.num_kv_heads);
  fmt::format_to(out, "head_dim: {}\n", spec.head_dim);
  fmt::format_to(out, "intermediate_size: {}\n", spec.intermediate_size);
  fmt::format_to(out, "hidden_act: {}\n", to_string(spec.activation));
  fmt::format_to(out, "gated_mlp: {}\n", spec.gated_mlp);
  fmt::format_to(out, "norm: {}\n", to_string(spec.norm));
  fmt::format_to(out, "vocab_size: {}\n", spec.vocab_size);
  fmt::format_to(out, "tie_word_embeddings: {}\n", spec.tied_embeddings);
  fmt::format_to(out, "attention_bias: {}\n", spec.attention_bias);
  if (spec.qkv_bias != spec.attention_bias) {
    fmt::format_to(out, "qkv_bias: {}\n", spec.qkv_bias);
  }
  if (spec.qk_norm) {
    fmt::format_to(out, "qk_norm: true\n");
  }
  fmt::format_to(out, "mlp_bias: {}\n", spec.mlp_bias);
  fmt::format_to(out, "position_embedding: {}\n", to_string(spec.position));
  if (spec.max_position_embeddings > 0) {
    fmt::format_to(out, "max_position_embeddings: {}\n", spec.max_position_embeddings);
  }
  if (spec.sliding_window > 0) {
    fmt::format_to(out, "sliding_window: {}\n", spec.sliding_window);
  }
  if (spec.vision) {
    fmt::format_to(out, "vision: {{image_size: {}, patch_size: {}, num_channels: {}}}\n",
                   spec.vision->image_size, spec.vision->patch_size, spec.vision->num_channels);
  }
  if (spec.moe()) {
    fmt::format_to(out, "num_local_experts: {}\nnum_experts_per_tok: {}\n", spec.num_experts,
                   spec.experts_per_token);
  }
  return yaml;
}

}  // namespace rsim
