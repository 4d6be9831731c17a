// SPDX-License-Identifier: MIT
#include "sim/spec/json_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace rsim {
namespace {

using Json = nlohmann::json;

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

}  // namespace

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

const nlohmann::json* JsonDocument::find(std::string_view key) const {
  const auto found = root_.find(std::string(key));
  return found == root_.end() || found->is_null() ? nullptr : &*found;
}

std::optional<std::string_view> JsonDocument::used_key(const SizeKey& size) const {
  for (const std::string_view key : {size.key, size.gpt2_key}) {
    if (!key.empty() && find(key) != nullptr) {
      return key;
    }
  }
  return std::nullopt;
}

const nlohmann::json& JsonDocument::present(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) {
    fail_missing(fmt::format("'{}'", key));
  }
  return *value;
}

void JsonDocument::fail(std::string_view key, const std::string& message) const {
  const auto mark = marks_.find(std::string(key));
  throw ConfigError(mark != marks_.end() ? mark->second : SourceMark{file_, 0, 0},
                    fmt::format("'{}': {}", key, message));
}

void JsonDocument::fail_missing(std::string_view expected) const {
  throw ConfigError(SourceMark{file_, 0, 0}, fmt::format("missing key {}", expected));
}

std::int64_t JsonDocument::integer_at_least(std::string_view key, std::int64_t minimum) const {
  const Json& value = present(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() < minimum) {
    fail(key, fmt::format("expected a whole number ≥ {}, got {}", minimum, json_type(value)));
  }
  return value.get<std::int64_t>();
}

std::int64_t JsonDocument::positive_int(std::string_view key) const {
  return integer_at_least(key, 1);
}

std::int64_t JsonDocument::count(std::string_view key) const { return integer_at_least(key, 0); }

std::int64_t JsonDocument::required_size(const SizeKey& size) const {
  const auto key = used_key(size);
  if (!key) {
    fail_missing(size.gpt2_key.empty() ? fmt::format("'{}'", size.key)
                                       : fmt::format("'{}' (or '{}')", size.key, size.gpt2_key));
  }
  return positive_int(*key);
}

std::optional<std::int64_t> JsonDocument::optional_size(const SizeKey& size) const {
  const auto key = used_key(size);
  return key ? std::optional(positive_int(*key)) : std::nullopt;
}

std::optional<std::int64_t> JsonDocument::optional_int(std::string_view key) const {
  return find(key) != nullptr ? std::optional(positive_int(key)) : std::nullopt;
}

bool JsonDocument::boolean(std::string_view key, bool fallback) const {
  const Json* value = find(key);
  if (value == nullptr) {
    return fallback;
  }
  if (!value->is_boolean()) {
    fail(key, fmt::format("expected true or false, got {}", json_type(*value)));
  }
  return value->get<bool>();
}

std::string JsonDocument::text(std::string_view key) const {
  const Json& value = present(key);
  if (!value.is_string()) {
    fail(key, fmt::format("expected a string, got {}", json_type(value)));
  }
  return value.get<std::string>();
}

JsonDocument parse_json_document(const std::string& text, const std::string& file) {
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

}  // namespace rsim
