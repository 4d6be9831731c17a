// SPDX-License-Identifier: MIT
#pragma once
// A JSON document of top-level keys (a Hugging Face config.json) that remembers where each key
// is written, with typed accessors whose errors name the file, the line and the key.

#include "sim/base/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rsim {

/// A size key and the GPT-2 name Hugging Face maps onto it (GPT2Config.attribute_map).
struct SizeKey {
  std::string_view key;
  std::string_view gpt2_key;
};
/// A config.json's keys, where each is written, typed accessors whose errors name the file, line
/// and key.
class JsonDocument {
 public:
  using Json = nlohmann::json;
  JsonDocument(Json root, std::map<std::string, SourceMark> marks, std::string file)
      : root_(std::move(root)), marks_(std::move(marks)), file_(std::move(file)) {}

  [[nodiscard]] const std::string& file() const { return file_; }

  /// The value of `key`; nullptr when absent or null (Hugging Face writes null for "default").
  [[nodiscard]] const Json* find(std::string_view key) const;
  /// The key of `size` that the config uses (the HF name first), or nullopt.
  [[nodiscard]] std::optional<std::string_view> used_key(const SizeKey& size) const;

  /// The value of `key`, or a "missing key" ConfigError.
  [[nodiscard]] const Json& present(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_missing(std::string_view expected) const;

  [[nodiscard]] std::int64_t positive_int(std::string_view key) const;
  [[nodiscard]] std::int64_t count(std::string_view key) const;  ///< an integer ≥ 0
  [[nodiscard]] std::int64_t required_size(const SizeKey& size) const;
  [[nodiscard]] std::optional<std::int64_t> optional_size(const SizeKey& size) const;
  [[nodiscard]] std::optional<std::int64_t> optional_int(std::string_view key) const;
  [[nodiscard]] bool boolean(std::string_view key, bool fallback) const;
  [[nodiscard]] std::string text(std::string_view key) const;

 private:
  [[nodiscard]] std::int64_t integer_at_least(std::string_view key, std::int64_t minimum) const;

  Json root_;
  std::map<std::string, SourceMark> marks_;
  std::string file_;
};

/// Parses JSON text whose root is an object; syntax errors are ConfigErrors at file:line:col.
JsonDocument parse_json_document(const std::string& text, const std::string& file);

/// "the integer 3", "string \"x\"", "an array": a JSON value's kind for messages.
std::string json_type(const nlohmann::json& value);

}  // namespace rsim
