// SPDX-License-Identifier: MIT
#include "sim/spec/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace rsim {
namespace {

std::string join(std::initializer_list<std::string_view> words) {
  std::string joined;
  for (std::string_view word : words) {
    if (!joined.empty()) {
      joined += ", ";
    }
    joined += word;
  }
  return joined;
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

SourceMark to_mark(const YAML::Mark& mark, const std::string& file, const SourceMark& fallback) {
  if (mark.line < 0) {
    return fallback;
  }
  return SourceMark{file, mark.line + 1, mark.column + 1};
}

// What one document may expand to: yaml-cpp shares an aliased node, and converting it copies it,
// so "billion laughs" aliases grew to gigabytes (issue 23 #4); nesting recurses.
constexpr std::size_t kMaxConfigValues = 1'000'000;
constexpr int kMaxConfigDepth = 64;

struct ConvertBudget {
  std::size_t values = 0;
  int depth = 0;
};

ConfigNode convert(const YAML::Node& node, const std::string& file, const std::string& path,
                   const SourceMark& fallback, ConvertBudget& budget);

ConfigNode convert(const YAML::Node& node, const std::string& file, const std::string& path,
                   const SourceMark& fallback) {
  ConvertBudget budget;
  return convert(node, file, path, fallback, budget);
}

ConfigNode convert(const YAML::Node& node, const std::string& file, const std::string& path,
                   const SourceMark& fallback, ConvertBudget& budget) {
  const SourceMark mark = to_mark(node.Mark(), file, fallback);
  if (++budget.values > kMaxConfigValues) {
    throw ConfigError(mark, fmt::format("more than {} values once aliases are expanded: not a "
                                        "configuration rsim reads",
                                        kMaxConfigValues));
  }
  if (budget.depth > kMaxConfigDepth) {
    throw ConfigError(mark, fmt::format("nested more than {} levels deep", kMaxConfigDepth));
  }
  struct Deeper {
    explicit Deeper(int& depth) : depth_(depth) { ++depth_; }
    ~Deeper() { --depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    int& depth_;
  } deeper(budget.depth);
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      ConfigNode scalar(ConfigNode::Kind::scalar, mark, path);
      scalar.set_scalar(node.Scalar());
      return scalar;
    }
    case YAML::NodeType::Sequence: {
      ConfigNode sequence(ConfigNode::Kind::sequence, mark, path);
      for (std::size_t index = 0; index < node.size(); ++index) {
        sequence.add_item(
            convert(node[index], file, fmt::format("{}[{}]", path, index), mark, budget));
      }
      return sequence;
    }
    case YAML::NodeType::Map: {
      ConfigNode map(ConfigNode::Kind::map, mark, path);
      for (const auto& pair : node) {
        const SourceMark key_mark = to_mark(pair.first.Mark(), file, mark);
        if (!pair.first.IsScalar()) {
          throw ConfigError(key_mark, "map keys must be plain strings");
        }
        const std::string key = pair.first.Scalar();
        if (map.find(key) != nullptr) {
          throw ConfigError(key_mark, fmt::format("duplicate key '{}'", child_path(path, key)));
        }
        map.add_entry(
            {key, key_mark, convert(pair.second, file, child_path(path, key), key_mark, budget)});
      }
      return map;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return ConfigNode(ConfigNode::Kind::null, mark, path);
}

}  // namespace

ConfigNode::ConfigNode(Kind kind, SourceMark mark, std::string path)
    : kind_(kind), mark_(std::move(mark)), path_(std::move(path)) {}

std::string ConfigNode::quoted_path() const {
  return path_.empty() ? "the document" : "'" + path_ + "'";
}

void ConfigNode::fail(const std::string& message) const {
  throw ConfigError(mark_, path_.empty() ? message : fmt::format("'{}': {}", path_, message));
}

void ConfigNode::require(Kind kind, std::string_view expected) const {
  if (kind_ != kind) {
    fail(fmt::format("expected {}", expected));
  }
}

const std::vector<ConfigNode::Entry>& ConfigNode::entries() const {
  require(Kind::map, "a map of keys");
  return entries_;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) {
      return &entry.value;
    }
  }
  return nullptr;
}

const ConfigNode& ConfigNode::at(std::string_view key) const {
  require(Kind::map, "a map of keys");
  const ConfigNode* child = find(key);
  if (child == nullptr) {
    throw ConfigError(mark_, fmt::format("missing required key '{}'", child_path(path_, key)));
  }
  return *child;
}

void ConfigNode::allow_only(std::initializer_list<std::string_view> allowed) const {
  require(Kind::map, "a map of keys");
  for (const Entry& entry : entries_) {
    bool known = false;
    for (std::string_view key : allowed) {
      known = known || key == entry.key;
    }
    if (!known) {
      throw ConfigError(entry.key_mark, fmt::format("unknown key '{}' (expected one of: {})",
                                                    child_path(path_, entry.key), join(allowed)));
    }
  }
}

const std::vector<ConfigNode>& ConfigNode::items() const {
  require(Kind::sequence, "a list");
  return items_;
}

std::string ConfigNode::as_string() const {
  require(Kind::scalar, "a string");
  return scalar_;
}

double ConfigNode::as_number() const {
  require(Kind::scalar, "a number");
  double value = 0.0;
  const char* const end = scalar_.data() + scalar_.size();
  const auto [rest, error] = std::from_chars(scalar_.data(), end, value);
  if (error != std::errc{} || rest != end || !std::isfinite(value)) {
    fail(fmt::format("expected a number, got \"{}\"", scalar_));
  }
  return value;
}

std::int64_t ConfigNode::as_integer_at_least(std::int64_t minimum) const {
  require(Kind::scalar, fmt::format("a whole number ≥ {}", minimum));
  std::int64_t value = 0;
  const char* const end = scalar_.data() + scalar_.size();
  const auto [rest, error] = std::from_chars(scalar_.data(), end, value);
  if (error != std::errc{} || rest != end || value < minimum) {
    fail(fmt::format("expected a whole number ≥ {}, got \"{}\"", minimum, scalar_));
  }
  return value;
}

std::int64_t ConfigNode::as_count() const { return as_integer_at_least(0); }

std::int64_t ConfigNode::as_positive_int() const { return as_integer_at_least(1); }

bool ConfigNode::as_bool() const {
  const std::string text = as_string();
  if (text == "true") {
    return true;
  }
  if (text == "false") {
    return false;
  }
  fail(fmt::format("expected true or false, got \"{}\"", text));
}

double ConfigNode::as_quantity(Dimension dimension) const {
  require(Kind::scalar, describe(dimension));
  const auto value = parse_quantity(scalar_, dimension);
  if (!value) {
    fail(fmt::format("expected {} (positive, with a unit), got \"{}\"", describe(dimension),
                     scalar_));
  }
  return *value;
}

std::string ConfigNode::as_choice(std::initializer_list<std::string_view> choices) const {
  std::string text = as_string();
  for (std::string_view choice : choices) {
    if (choice == text) {
      return text;
    }
  }
  fail(fmt::format("expected one of: {}; got \"{}\"", join(choices), text));
}

void ConfigNode::add_entry(Entry entry) { entries_.push_back(std::move(entry)); }
void ConfigNode::add_item(ConfigNode item) { items_.push_back(std::move(item)); }
void ConfigNode::set_scalar(std::string text) { scalar_ = std::move(text); }

void ConfigNode::set_entry(const std::string& key, const SourceMark& key_mark, ConfigNode value) {
  require(Kind::map, "a map of keys");
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      entry.value = std::move(value);
      return;
    }
  }
  entries_.push_back({key, key_mark, std::move(value)});
}

void ConfigNode::set_path(std::string_view dotted_path, std::string text, const SourceMark& mark) {
  require(Kind::map, "a map of keys");
  const std::size_t dot = dotted_path.find('.');
  const std::string_view key = dotted_path.substr(0, dot);
  const std::string full = child_path(path_, key);
  Entry* target = nullptr;
  for (Entry& entry : entries_) {
    if (entry.key == key) {
      target = &entry;
    }
  }
  if (target == nullptr) {
    const Kind kind = dot == std::string_view::npos ? Kind::scalar : Kind::map;
    entries_.push_back({std::string(key), mark, ConfigNode(kind, mark, full)});
    target = &entries_.back();
  }
  if (dot == std::string_view::npos) {
    // A YAML flow map or list ("{preset: fsdp, mesh: {data: 8 over nvlink}}", "[weights]")
    // replaces the whole value; anything else is one scalar.
    if (text.starts_with('{') || text.starts_with('[')) {
      try {
        target->value = convert(YAML::Load(text), mark.file, full, mark);
      } catch (const YAML::Exception& error) {
        throw ConfigError(mark, fmt::format("{}: {}", full, error.msg));
      }
      return;
    }
    target->value = ConfigNode(Kind::scalar, mark, full);
    target->value.set_scalar(std::move(text));
    return;
  }
  target->value.set_path(dotted_path.substr(dot + 1), std::move(text), mark);
}

ConfigNode parse_config(const std::string& text, const std::string& file_label) {
  const SourceMark file_mark{file_label, 0, 0};
  try {
    const YAML::Node root = YAML::Load(text);
    ConfigNode tree = convert(root, file_label, "", SourceMark{file_label, 1, 1});
    if (tree.kind() != ConfigNode::Kind::map) {
      throw ConfigError(tree.mark(), "expected a map of keys at the top level");
    }
    return tree;
  } catch (const YAML::Exception& error) {
    throw ConfigError(to_mark(error.mark, file_label, file_mark), error.msg);
  }
}

ConfigNode load_config_file(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    throw ConfigError(SourceMark{path.string(), 0, 0}, "cannot open file");
  }
  // At most 16 MiB: `rsim run /dev/zero` read for ever (issue 23 #4); shipped files are kB.
  constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;
  std::string contents;
  std::array<char, 1 << 16> chunk{};
  while (stream.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) ||
         stream.gcount() > 0) {
    contents.append(chunk.data(), static_cast<std::size_t>(stream.gcount()));
    if (contents.size() > kMaxConfigBytes) {
      throw ConfigError(SourceMark{path.string(), 0, 0},
                        "larger than 16 MiB: not a configuration file rsim reads");
    }
  }
  // The documents of the files read lately, by path and by their whole text: a process that
  // loads the same files again (the Python module, calling rsim.run in a loop) reads them but
  // parses each only once. Compared by content, not by modification time, so a file rewritten
  // within the clock's tick is parsed again.
  struct Parsed {
    std::string contents;
    ConfigNode document;
  };
  static std::mutex parsed_mutex;
  static std::map<std::string, Parsed> parsed;
  constexpr std::size_t kMaxParsedFiles = 256;
  const std::string label = path.string();
  {
    const std::lock_guard lock(parsed_mutex);
    if (const auto found = parsed.find(label);
        found != parsed.end() && found->second.contents == contents) {
      return found->second.document;
    }
  }
  ConfigNode document = parse_config(contents, label);
  const std::lock_guard lock(parsed_mutex);
  if (parsed.size() >= kMaxParsedFiles) {
    parsed.clear();
  }
  parsed.insert_or_assign(label, Parsed{std::move(contents), document});
  return document;
}

ConfigNode ConfigFiles::load(const std::filesystem::path& path) {
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = parsed_.find(path.native()); found != parsed_.end()) {
      return found->second;
    }
  }
  // Parsed outside the lock: threads load different files at once (two that parse the same
  // file keep the first copy, which is the same document).
  ConfigNode document = load_config_file(path);
  const std::lock_guard lock(mutex_);
  return parsed_.emplace(path.native(), std::move(document)).first->second;
}

ConfigNode load_config_file(const std::filesystem::path& path, ConfigFiles* files) {
  return files != nullptr ? files->load(path) : load_config_file(path);
}

}  // namespace rsim
