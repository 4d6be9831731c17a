// SPDX-License-Identifier: MIT
#include "sim/spec/efficiency.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace rsim {
namespace {

double parse_fraction(const ConfigNode& node) {
  const double fraction = node.as_number();
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    node.fail(fmt::format("a fraction of the roof in (0, 1], got {}", fraction));
  }
  return fraction;
}

// The element of `items` named by the entry's key, or a ConfigError listing the names there are.
template <typename Item>
Item& named(std::vector<Item>& items, const ConfigNode::Entry& entry, std::string_view what) {
  std::vector<std::string> names;
  for (Item& item : items) {
    if (item.name == entry.key) {
      return item;
    }
    names.push_back(item.name);
  }
  throw ConfigError(entry.key_mark,
                    fmt::format("'{}': the hardware has no {} '{}' (it has: {})",
                                entry.value.path(), what, entry.key, fmt::join(names, ", ")));
}

// Each `{NAME: {fraction, source}}` entry of a compute or memory map into its item's efficiency.
template <typename Item>
void parse_fractions(const ConfigNode& map, std::vector<Item>& items, std::string_view what) {
  for (const ConfigNode::Entry& entry : map.entries()) {
    entry.value.allow_only({"fraction", "source", "derived"});
    named(items, entry, what).efficiency = parse_fraction(entry.value.at("fraction"));
    parse_provenance(entry.value);
  }
}

}  // namespace

void parse_efficiency(const ConfigNode& node, HardwareSpec& spec) {
  node.allow_only({"kernel_overhead", "compute", "attention", "memory", "network"});
  if (const ConfigNode* overhead = node.find("kernel_overhead")) {
    overhead->allow_only({"time", "source", "derived"});
    spec.kernel_overhead = Seconds(overhead->at("time").as_quantity(Dimension::seconds));
    parse_provenance(*overhead);
  }
  if (const ConfigNode* compute = node.find("compute")) {
    parse_fractions(*compute, spec.compute, "compute path");
  }
  if (const ConfigNode* attention = node.find("attention")) {
    attention->allow_only({"forward", "backward"});
    const auto pass = [](const ConfigNode* entry, std::optional<double>& fraction) {
      if (entry != nullptr) {
        entry->allow_only({"fraction", "source", "derived"});
        fraction = parse_fraction(entry->at("fraction"));
        parse_provenance(*entry);
      }
    };
    pass(attention->find("forward"), spec.attention_efficiency.forward);
    pass(attention->find("backward"), spec.attention_efficiency.backward);
  }
  if (const ConfigNode* memory = node.find("memory")) {
    parse_fractions(*memory, spec.memory, "memory tier");
  }
  if (const ConfigNode* network = node.find("network")) {
    for (const ConfigNode::Entry& entry : network->entries()) {
      entry.value.allow_only({"fraction", "latency", "processor_usage", "source", "derived"});
      NetworkTier& tier = named(spec.network, entry, "network tier");
      if (const ConfigNode* fraction = entry.value.find("fraction")) {
        tier.efficiency = parse_fraction(*fraction);
      }
      if (const ConfigNode* latency = entry.value.find("latency")) {
        tier.call_latency = Seconds(latency->as_quantity(Dimension::seconds));
      }
      if (const ConfigNode* usage = entry.value.find("processor_usage")) {
        const double share = usage->as_number();
        if (!(share >= 0.0 && share < 1.0)) {
          usage->fail(fmt::format("a share of the device's compute in [0, 1), got {}", share));
        }
        tier.processor_usage = share;
      }
      parse_provenance(entry.value);
    }
  }
}

void apply_calibration(const std::filesystem::path& path, HardwareSpec& spec, ConfigFiles* files) {
  const ConfigNode document = load_config_file(path, files);
  document.allow_only({"hardware", "efficiency"});
  if (const ConfigNode* hardware = document.find("hardware")) {
    if (hardware->as_string() != spec.name) {
      hardware->fail(
          fmt::format("a calibration of '{}' applied to '{}'", hardware->as_string(), spec.name));
    }
  }
  parse_efficiency(document.at("efficiency"), spec);
}

}  // namespace rsim
