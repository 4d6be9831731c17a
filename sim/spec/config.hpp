// SPDX-License-Identifier: MIT
#pragma once

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/base/units.hpp"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rsim {

struct ConfigEntry;

/// A parsed YAML document as rsim's own tree: every node knows its file:line:col and its key
/// path, so every loader can report errors precisely without touching yaml-cpp (which only
/// config.cpp includes). Maps keep their key order; duplicate keys are rejected at load time.
class ConfigNode {
 public:
  enum class Kind { null, scalar, sequence, map };

  using Entry = ConfigEntry;

  ConfigNode() = default;
  ConfigNode(Kind kind, SourceMark mark, std::string path);

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] const SourceMark& mark() const { return mark_; }
  /// Dotted key path from the document root, e.g. "compute.fp8.peak" ("" for the root).
  [[nodiscard]] const std::string& path() const { return path_; }
  /// The key path quoted for messages: 'compute.fp8.peak' (or "the document" for the root).
  [[nodiscard]] std::string quoted_path() const;

  // --- maps ---
  [[nodiscard]] const std::vector<Entry>& entries() const;           ///< requires a map
  [[nodiscard]] const ConfigNode* find(std::string_view key) const;  ///< nullptr if absent
  [[nodiscard]] const ConfigNode& at(std::string_view key) const;    ///< error if absent
  /// Rejects any key not in `allowed`, naming the unknown key and listing the allowed ones.
  void allow_only(std::initializer_list<std::string_view> allowed) const;

  // --- sequences ---
  [[nodiscard]] const std::vector<ConfigNode>& items() const;  ///< requires a sequence

  // --- scalars ---
  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] double as_number() const;              ///< any finite number
  [[nodiscard]] std::int64_t as_positive_int() const;  ///< an integer ≥ 1
  [[nodiscard]] std::int64_t as_count() const;         ///< an integer ≥ 0
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] double as_quantity(Dimension dimension) const;  ///< a unit string, in SI
  /// One of `choices`; the error lists them.
  [[nodiscard]] std::string as_choice(std::initializer_list<std::string_view> choices) const;

  /// Throws a ConfigError at this node's position, prefixed with its key path.
  [[noreturn]] void fail(const std::string& message) const;

  // Building (used by the loader and by command-line overrides).
  void add_entry(Entry entry);
  void add_item(ConfigNode item);
  void set_scalar(std::string text);
  /// Sets (or replaces) the value of a key of this map.
  void set_entry(const std::string& key, const SourceMark& key_mark, ConfigNode value);
  /// Sets (or replaces) the value at a dotted path below this map, creating maps as needed: a
  /// scalar, or a YAML flow map / list when `text` starts with '{' / '['.
  void set_path(std::string_view dotted_path, std::string text, const SourceMark& mark);

 private:
  void require(Kind kind, std::string_view expected) const;
  [[nodiscard]] std::int64_t as_integer_at_least(std::int64_t minimum) const;

  Kind kind_ = Kind::null;
  SourceMark mark_;
  std::string path_;
  std::string scalar_;
  std::vector<Entry> entries_;
  std::vector<ConfigNode> items_;
};

/// One key of a map node: the key, where the key is written, and its value.
struct ConfigEntry {
  std::string key;
  SourceMark key_mark;
  ConfigNode value;
};

/// The enum value a scalar names in `table`; the error lists every name.
template <class Enum, std::size_t N>
Enum parse_named(const ConfigNode& node, const std::array<Named<Enum>, N>& table) {
  const std::string text = node.as_string();
  if (const auto value = find_named(text, table)) {
    return *value;
  }
  node.fail("expected one of: " + names_of(table) + "; got \"" + text + "\"");
}

/// Reads and parses a YAML file. Missing files, unreadable files and YAML syntax errors are
/// ConfigErrors naming the file (and line:col for syntax errors).
ConfigNode load_config_file(const std::filesystem::path& path);

/// YAML files parsed once each, for loading many scenarios from the same files (a sweep's
/// bases: YAML parsing is most of loading a scenario). Thread-safe; a file that fails to load
/// is not kept, so each load reports its error.
class ConfigFiles {
 public:
  /// load_config_file(path), parsed on first use: a copy of the parsed document.
  [[nodiscard]] ConfigNode load(const std::filesystem::path& path);

 private:
  std::mutex mutex_;
  /// By the path as spelled (not as std::filesystem::path compares): a document's positions name
  /// the file as it was given.
  std::map<std::filesystem::path::string_type, ConfigNode> parsed_;
};

/// load_config_file(path) through `files` where given (nullptr: read and parse it now).
ConfigNode load_config_file(const std::filesystem::path& path, ConfigFiles* files);

/// Parses YAML text; `file_label` names it in error messages.
ConfigNode parse_config(const std::string& text, const std::string& file_label);

}  // namespace rsim
