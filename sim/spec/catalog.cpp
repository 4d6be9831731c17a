// SPDX-License-Identifier: MIT
#include "sim/spec/catalog.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/model.hpp"
#include "sim/spec/model_files.hpp"
#include "sim/spec/plan.hpp"
#include "sim/spec/precision.hpp"
#include "sim/spec/presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

namespace rsim {
namespace {

constexpr std::array kCatalogKinds{
    Named<CatalogKind>{CatalogKind::hardware, "hardware"},
    Named<CatalogKind>{CatalogKind::models, "models"},
    Named<CatalogKind>{CatalogKind::plans, "plans"},
    Named<CatalogKind>{CatalogKind::precisions, "precisions"},
};

// A model preset: its name, its size and what sets it apart ("Qwen3 30B-A3B: 30.53B
// parameters, 3.353B active; 48 layers, 128 experts top-8").
std::string model_description(const std::filesystem::path& file, const std::string& name) {
  const ModelSpec model = load_model(file, find_preset);
  const ParameterCount count = count_parameters(model);
  std::string text =
      fmt::format("{}: {} parameters", name, format_parameters(static_cast<double>(count.total())));
  if (count.inactive_experts > 0) {
    text += fmt::format(", {} active", format_parameters(static_cast<double>(count.active())));
  }
  if (model.stages.size() != 1) {
    return text + fmt::format("; {} stages", model.stages.size());
  }
  const TransformerSpec& spec = model.stages.front().component;
  text += fmt::format("; {} layers", spec.num_layers);
  if (spec.moe()) {
    text += fmt::format(", {} experts top-{}", spec.num_experts, spec.experts_per_token);
  }
  if (spec.latent_attention) {
    text += ", latent attention";
  }
  if (spec.sliding_window > 0) {
    text += fmt::format(", {}-token window{}", spec.sliding_window,
                        spec.full_attention_layers() > 0 ? " on some layers" : "");
  }
  return text;
}

// The YAML presets of KIND, each described by its `name:`.
std::vector<CatalogEntry> files_of(std::string_view kind) {
  std::vector<CatalogEntry> result;
  for (const std::filesystem::path& file : preset_files(kind)) {
    std::string description;
    try {
      const ConfigNode document = load_config_file(file);
      const ConfigNode* name = document.find("name");
      description = name != nullptr ? name->as_string() : std::string("(no name)");
      if (kind == "models") {
        description = model_description(file, description);
      }
    } catch (const InputError& failure) {
      description = std::string("(does not load: ") + failure.what() + ")";
    }
    result.push_back({file.stem().string(), description, file.string()});
  }
  return result;
}

std::size_t edit_distance(std::string_view left, std::string_view right) {
  std::vector<std::size_t> row(right.size() + 1);
  for (std::size_t j = 0; j <= right.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= left.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= right.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(left[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(right[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[right.size()];
}

}  // namespace

std::optional<CatalogKind> parse_catalog_kind(std::string_view name) {
  return find_named(name, kCatalogKinds);
}

std::vector<CatalogEntry> catalog(CatalogKind kind) {
  switch (kind) {
    case CatalogKind::hardware:
      return files_of("hardware");
    case CatalogKind::models:
      return files_of("models");
    case CatalogKind::plans: {
      std::vector<CatalogEntry> result;
      for (const PlanPreset& preset : plan_presets()) {
        result.push_back({std::string(preset.name), std::string(preset.description), {}});
      }
      return result;
    }
    case CatalogKind::precisions:
      break;
  }
  std::vector<CatalogEntry> result;
  for (const PrecisionPolicy& policy : precision_policies()) {
    result.push_back({std::string(policy.name), std::string(policy.description), {}});
  }
  return result;
}

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = name.size() / 2 + 1;
  for (const std::string& candidate : candidates) {
    // A prefix ("h100" of "h100_sxm") is as close as a name gets.
    const bool prefix = candidate.size() > name.size() && !name.empty() &&
                        edit_distance(name, candidate.substr(0, name.size())) == 0;
    const std::size_t distance = prefix ? 0 : edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace rsim
