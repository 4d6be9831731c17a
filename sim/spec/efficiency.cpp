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

// `gemm: {tiles: [[128, 256], …], mma: [64, 8], split_k_min: 1024, units: 132, source: …}`;
// `units` defaults to the count of the per-SM (per-CU) memory tier.
void parse_gemm(const ConfigNode& node, HardwareSpec& spec) {
  node.allow_only({"tiles", "mma", "split_k_min", "units", "source", "derived"});
  const auto positive = [](const ConfigNode& value, std::string_view what) {
    const double number = value.as_number();
    if (!(number >= 1.0 && number <= 1e6 &&
          number == static_cast<double>(static_cast<std::int64_t>(number)))) {
      value.fail(fmt::format("{}: a whole number from 1 to 1,000,000, got {}", what, number));
    }
    return static_cast<std::int64_t>(number);
  };
  GemmQuantization quantization;
  const ConfigNode& tiles = node.at("tiles");
  if (tiles.kind() != ConfigNode::Kind::sequence || tiles.items().empty()) {
    tiles.fail("tiles: a list of [M, N] output tiles, e.g. [[128, 256], [128, 128]]");
  }
  const auto tile_of = [&](const ConfigNode& tile) {
    if (tile.kind() != ConfigNode::Kind::sequence || tile.items().size() != 2) {
      tile.fail("a tile: [M, N], e.g. [128, 256]");
    }
    return GemmTile{positive(tile.items()[0], "tile M"), positive(tile.items()[1], "tile N")};
  };
  for (const ConfigNode& tile : tiles.items()) {
    quantization.tiles.push_back(tile_of(tile));
  }
  const ConfigNode& mma = node.at("mma");
  quantization.mma = tile_of(mma);
  for (const GemmTile& tile : quantization.tiles) {
    if (tile.m % quantization.mma.m != 0 || tile.n % quantization.mma.n != 0) {
      mma.fail(
          fmt::format("every tile is a multiple of the MMA instruction [{}, {}]; [{}, {}] is not",
                      quantization.mma.m, quantization.mma.n, tile.m, tile.n));
    }
  }
  if (const ConfigNode* split = node.find("split_k_min")) {
    quantization.split_k_min = positive(*split, "split_k_min");
  }
  if (const ConfigNode* units = node.find("units")) {
    quantization.units = positive(*units, "units");
  } else {
    const MemoryTier* per_unit = nullptr;
    for (const MemoryTier& tier : spec.memory) {
      if (!tier.per.empty() && per_unit == nullptr) {
        per_unit = &tier;
      }
    }
    if (per_unit == nullptr) {
      node.fail(
          "units: the compute units (SMs) a wave of tiles fills; the hardware has no "
          "per-SM memory tier to count them from");
    }
    quantization.units = per_unit->count;
  }
  parse_provenance(node);
  spec.gemm_quantization = std::move(quantization);
}

}  // namespace

void parse_efficiency(const ConfigNode& node, HardwareSpec& spec) {
  node.allow_only({"kernel_overhead", "compute", "attention", "gemm", "memory", "network"});
  if (const ConfigNode* gemm = node.find("gemm")) {
    parse_gemm(*gemm, spec);
  }
  if (const ConfigNode* overhead = node.find("kernel_overhead")) {
    overhead->allow_only({"time", "source", "derived"});
    spec.kernel_overhead = Seconds(overhead->at("time").as_quantity(Dimension::seconds));
    parse_provenance(*overhead);
  }
  if (const ConfigNode* compute = node.find("compute")) {
    parse_fractions(*compute, spec.compute, "compute path");
  }
  if (const ConfigNode* attention = node.find("attention")) {
    attention->allow_only(
        {"forward", "backward", "length_overhead", "head_dim_overhead", "unfused_memory"});
    const auto pass = [](const ConfigNode* entry, std::optional<double>& fraction) {
      if (entry != nullptr) {
        entry->allow_only({"fraction", "source", "derived"});
        fraction = parse_fraction(entry->at("fraction"));
        parse_provenance(*entry);
      }
    };
    pass(attention->find("forward"), spec.attention_efficiency.forward);
    pass(attention->find("backward"), spec.attention_efficiency.backward);
    pass(attention->find("unfused_memory"), spec.attention_efficiency.unfused_memory);
    // An overhead `{UNIT: x, source}` in [0, most] into `value`, left as it is where absent (0
    // from a hardware file; a calibration overlay's attention section keeps the preset's).
    const auto overhead = [&](const char* key, const char* unit, double most,
                              std::string_view most_text, std::string_view meaning, double& value) {
      const ConfigNode* entry = attention->find(key);
      if (entry == nullptr) {
        return;
      }
      entry->allow_only({unit, "source", "derived"});
      const ConfigNode& amount = entry->at(unit);
      const double number = amount.as_number();
      if (!(number >= 0.0 && number <= most)) {
        amount.fail(fmt::format("{}: {}, from 0 to {}, got {}", unit, meaning, most_text, number));
      }
      parse_provenance(*entry);
      value = number;
    };
    overhead("length_overhead", "tokens", 1e6, "1,000,000",
             "the keys' worth of a query tile's fixed work",
             spec.attention_efficiency.length_overhead);
    overhead("head_dim_overhead", "dims", 1e4, "10,000",
             "the head dimensions' worth of each score's work beside the matmuls",
             spec.attention_efficiency.head_dim_overhead);
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
