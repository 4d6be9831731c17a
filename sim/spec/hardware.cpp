// SPDX-License-Identifier: MIT
#include "sim/spec/hardware.hpp"

#include "sim/base/error.hpp"
#include "sim/spec/config.hpp"
#include "sim/spec/efficiency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace rsim {

Provenance parse_provenance(const ConfigNode& node) {
  const ConfigNode* source = node.find("source");
  const ConfigNode* derived = node.find("derived");
  if ((source == nullptr) == (derived == nullptr)) {
    node.fail("give exactly one of 'source' (a citation) or 'derived' (the formula)");
  }
  return source != nullptr ? Provenance{source->as_string(), ""}
                           : Provenance{"", derived->as_string()};
}

namespace {

constexpr std::array kUnitNames{
    Named<ComputeUnit>{ComputeUnit::tensor_core, "tensor_core"},
    Named<ComputeUnit>{ComputeUnit::cuda_core, "cuda_core"},
    Named<ComputeUnit>{ComputeUnit::mxu, "mxu"},
    Named<ComputeUnit>{ComputeUnit::vpu, "vpu"},
};

// Outermost tiers first; the first tier of every hardware must be main memory.
constexpr std::array<std::string_view, 2> kMainMemoryTiers{"dram", "hbm"};
constexpr std::array<std::string_view, 6> kMemoryTiers{"dram", "hbm",  "l2",
                                                       "smem", "vmem", "registers"};

bool contains(const auto& names, std::string_view name) {
  for (std::string_view candidate : names) {
    if (candidate == name) {
      return true;
    }
  }
  return false;
}

ComputePath parse_compute_path(const ConfigNode::Entry& entry) {
  const ConfigNode& node = entry.value;
  node.allow_only({"peak", "unit", "source", "derived"});
  const auto dtype = compute_path_dtype(entry.key);
  if (!dtype) {
    throw ConfigError(entry.key_mark,
                      fmt::format("'{}': not a compute path name; expected a precision ({}) "
                                  "optionally followed by _sparse",
                                  node.path(), fmt::join(dtype_names(), ", ")));
  }
  ComputePath path;
  path.name = entry.key;
  path.dtype = *dtype;
  path.sparse = entry.key.ends_with("_sparse");
  path.peak = FlopsPerSecond(node.at("peak").as_quantity(Dimension::flop_rate));
  path.unit = parse_named(node.at("unit"), kUnitNames);
  path.provenance = parse_provenance(node);
  return path;
}

MemoryTier parse_memory_tier(const ConfigNode::Entry& entry) {
  const ConfigNode& node = entry.value;
  node.allow_only(
      {"bandwidth", "capacity", "count", "per", "clocked", "accumulators", "source", "derived"});
  if (!contains(kMemoryTiers, entry.key)) {
    throw ConfigError(entry.key_mark, fmt::format("'{}': unknown memory tier (expected one of: {})",
                                                  node.path(), fmt::join(kMemoryTiers, ", ")));
  }
  MemoryTier tier;
  tier.name = entry.key;
  if (const ConfigNode* bandwidth = node.find("bandwidth")) {
    tier.bandwidth = BytesPerSecond(bandwidth->as_quantity(Dimension::byte_rate));
  }
  tier.capacity = Bytes(node.at("capacity").as_quantity(Dimension::bytes));
  if (tier.capacity.si() < 1.0) {
    // A tile must fit at least one byte; 1e-5 B made every tile empty and every time inf.
    node.at("capacity")
        .fail(fmt::format("a capacity of {} B is less than one byte", tier.capacity.si()));
  }
  if (const ConfigNode* count = node.find("count")) {
    tier.count = count->as_positive_int();
  }
  if (const ConfigNode* per = node.find("per")) {
    tier.per = per->as_choice({"sm", "core", "chip"});
  }
  if (const ConfigNode* accumulators = node.find("accumulators")) {
    tier.accumulator_tier = accumulators->as_string();
  }
  if (const ConfigNode* clocked = node.find("clocked")) {
    tier.clocked = clocked->as_bool();
    if (tier.clocked && !tier.bandwidth) {
      clocked->fail("'clocked' scales a bandwidth with the mode's clock; this tier has none");
    }
  }
  tier.provenance = parse_provenance(node);
  return tier;
}

constexpr std::array<std::string_view, 4> kNetworkTiers{"nvlink", "ib", "ici", "dcn"};

constexpr std::array kTopologyNames{
    Named<Topology>{Topology::torus, "torus"},
    Named<Topology>{Topology::switched, "switch"},
    Named<Topology>{Topology::fat_tree, "fat_tree"},
};

NetworkTier parse_network_tier(const ConfigNode::Entry& entry) {
  const ConfigNode& node = entry.value;
  node.allow_only({"topology", "bandwidth", "devices", "wraparound_size", "hop_latency",
                   "in_network_reduction", "source", "derived"});
  if (!contains(kNetworkTiers, entry.key)) {
    throw ConfigError(entry.key_mark,
                      fmt::format("'{}': unknown network tier (expected one of: {})", node.path(),
                                  fmt::join(kNetworkTiers, ", ")));
  }
  NetworkTier tier;
  tier.name = entry.key;
  tier.topology = parse_named(node.at("topology"), kTopologyNames);
  tier.bandwidth = BytesPerSecond(node.at("bandwidth").as_quantity(Dimension::byte_rate));
  if (const ConfigNode* devices = node.find("devices")) {
    tier.devices = devices->as_positive_int();
  }
  if (const ConfigNode* wraparound = node.find("wraparound_size")) {
    if (tier.topology != Topology::torus) {
      wraparound->fail("only a torus has wraparound links");
    }
    tier.wraparound_size = wraparound->as_positive_int();
  }
  if (const ConfigNode* latency = node.find("hop_latency")) {
    tier.hop_latency = Seconds(latency->as_quantity(Dimension::seconds));
  }
  if (const ConfigNode* reduction = node.find("in_network_reduction")) {
    tier.in_network_reduction = reduction->as_bool();
  }
  tier.provenance = parse_provenance(node);
  return tier;
}

HardwareMode parse_mode(const ConfigNode::Entry& entry, const HardwareSpec& spec) {
  const ConfigNode& node = entry.value;
  node.allow_only({"clock", "peaks", "bandwidths", "source"});
  HardwareMode mode;
  mode.name = entry.key;
  if (const ConfigNode* clock = node.find("clock")) {
    if (!spec.clock) {
      clock->fail("a mode clock needs the hardware's base 'clock' to scale peaks against");
    }
    mode.clock = Hertz(clock->as_quantity(Dimension::frequency));
  }
  mode.overrides = parse_roof_overrides(node, spec);
  if (const ConfigNode* source = node.find("source")) {
    mode.source = source->as_string();
  }
  return mode;
}

void parse_modes(const ConfigNode& document, HardwareSpec& spec) {
  const ConfigNode* modes = document.find("modes");
  const ConfigNode* default_mode = document.find("default_mode");
  if (modes == nullptr) {
    if (default_mode != nullptr) {
      default_mode->fail("'default_mode' needs a 'modes' map");
    }
    spec.modes.push_back(HardwareMode{"default", std::nullopt, {}, ""});
    spec.default_mode = "default";
    return;
  }
  for (const ConfigNode::Entry& entry : modes->entries()) {
    spec.modes.push_back(parse_mode(entry, spec));
  }
  // A hardware with modes must say which one is the default (at() reports it missing).
  spec.default_mode =
      (default_mode != nullptr ? *default_mode : document.at("default_mode")).as_string();
  bool known = false;
  for (const HardwareMode& mode : spec.modes) {
    known = known || mode.name == spec.default_mode;
  }
  if (!known) {
    default_mode->fail(fmt::format("no mode '{}' in 'modes'", spec.default_mode));
  }
}

}  // namespace

std::string_view to_string(Topology topology) { return name_of(topology, kTopologyNames); }

std::string_view to_string(ComputeUnit unit) { return name_of(unit, kUnitNames); }

RoofOverrides parse_roof_overrides(const ConfigNode& node, const HardwareSpec& spec) {
  RoofOverrides overrides;
  if (const ConfigNode* peaks = node.find("peaks")) {
    for (const ConfigNode::Entry& peak : peaks->entries()) {
      const bool known =
          std::any_of(spec.compute.begin(), spec.compute.end(),
                      [&](const ComputePath& path) { return path.name == peak.key; });
      if (!known) {
        throw ConfigError(peak.key_mark, fmt::format("'{}': {} has no compute path '{}'",
                                                     peak.value.path(), spec.name, peak.key));
      }
      overrides.peaks.emplace_back(peak.key,
                                   FlopsPerSecond(peak.value.as_quantity(Dimension::flop_rate)));
    }
  }
  if (const ConfigNode* bandwidths = node.find("bandwidths")) {
    for (const ConfigNode::Entry& bandwidth : bandwidths->entries()) {
      const bool known =
          std::any_of(spec.memory.begin(), spec.memory.end(),
                      [&](const MemoryTier& tier) { return tier.name == bandwidth.key; }) ||
          std::any_of(spec.network.begin(), spec.network.end(),
                      [&](const NetworkTier& tier) { return tier.name == bandwidth.key; });
      if (!known) {
        throw ConfigError(bandwidth.key_mark,
                          fmt::format("'{}': {} has no memory or network tier '{}'",
                                      bandwidth.value.path(), spec.name, bandwidth.key));
      }
      overrides.bandwidths.emplace_back(
          bandwidth.key, BytesPerSecond(bandwidth.value.as_quantity(Dimension::byte_rate)));
    }
  }
  return overrides;
}

HardwareSpec parse_hardware(const ConfigNode& document) {
  document.allow_only({"name", "source", "clock", "unified_memory", "vector_path", "compute",
                       "memory", "host_memory", "network", "modes", "default_mode", "efficiency"});
  HardwareSpec spec;
  spec.file = document.mark().file;
  spec.name = document.at("name").as_string();
  spec.source = document.at("source").as_string();
  if (const ConfigNode* clock = document.find("clock")) {
    spec.clock = Hertz(clock->as_quantity(Dimension::frequency));
  }
  spec.unified_memory = document.at("unified_memory").as_bool();
  for (const ConfigNode::Entry& entry : document.at("compute").entries()) {
    spec.compute.push_back(parse_compute_path(entry));
  }
  if (spec.compute.empty()) {
    document.at("compute").fail("expected at least one compute path");
  }
  const ConfigNode& vector_path = document.at("vector_path");
  spec.vector_path = vector_path.as_string();
  bool vector_known = false;
  for (const ComputePath& path : spec.compute) {
    vector_known = vector_known || path.name == spec.vector_path;
  }
  if (!vector_known) {
    vector_path.fail(fmt::format("no compute path '{}' in 'compute'", spec.vector_path));
  }
  const ConfigNode& memory = document.at("memory");
  for (const ConfigNode::Entry& entry : memory.entries()) {
    spec.memory.push_back(parse_memory_tier(entry));
  }
  if (spec.memory.empty() || !contains(kMainMemoryTiers, spec.memory.front().name)) {
    memory.fail("the first memory tier must be main memory: dram or hbm");
  }
  // Each tier serves the one inside it, so the order is the hierarchy: main memory, L2, the
  // per-SM/core scratchpad (SMEM or VMEM), registers. A tier out of place was costed as if it
  // held the next one's tiles (issue 23 #6).
  const auto depth = [](std::string_view name) {
    return name == "l2" ? 1 : name == "smem" || name == "vmem" ? 2 : name == "registers" ? 3 : 0;
  };
  for (std::size_t index = 1; index < spec.memory.size(); ++index) {
    const std::string& outer = spec.memory[index - 1].name;
    const std::string& inner = spec.memory[index].name;
    if (depth(inner) <= depth(outer)) {
      throw ConfigError(memory.at(inner).mark(),
                        fmt::format("'memory.{}' after '{}': list the tiers outermost first ({})",
                                    inner, outer, "dram or hbm, l2, smem or vmem, registers"));
    }
  }
  if (!spec.memory.front().bandwidth) {
    memory.at(spec.memory.front().name).fail("main memory needs a 'bandwidth'");
  }
  // A tier's accumulators live in a tier inside it (registers, TMEM).
  for (std::size_t index = 0; index < spec.memory.size(); ++index) {
    const std::string& holder = spec.memory[index].accumulator_tier;
    const auto inner = std::find_if(spec.memory.begin() + static_cast<std::ptrdiff_t>(index) + 1,
                                    spec.memory.end(),
                                    [&](const MemoryTier& tier) { return tier.name == holder; });
    if (!holder.empty() && inner == spec.memory.end()) {
      memory.at(spec.memory[index].name)
          .at("accumulators")
          .fail(
              fmt::format("'{}' is not a memory tier inside {}", holder, spec.memory[index].name));
    }
  }
  if (const ConfigNode* host = document.find("host_memory")) {
    if (spec.unified_memory) {
      host->fail("a unified-memory device has no separate host memory to offload to");
    }
    host->allow_only({"capacity", "bandwidth", "source", "derived"});
    spec.host_memory =
        HostMemory{Bytes(host->at("capacity").as_quantity(Dimension::bytes)),
                   BytesPerSecond(host->at("bandwidth").as_quantity(Dimension::byte_rate)),
                   parse_provenance(*host)};
  }
  if (const ConfigNode* network = document.find("network")) {
    for (const ConfigNode::Entry& entry : network->entries()) {
      spec.network.push_back(parse_network_tier(entry));
    }
  }
  parse_modes(document, spec);
  if (const ConfigNode* efficiency = document.find("efficiency")) {
    parse_efficiency(*efficiency, spec);
  }
  return spec;
}

HardwareSpec load_hardware(const std::filesystem::path& path, ConfigFiles* files) {
  return parse_hardware(load_config_file(path, files));
}

const ComputePath* Roofs::find_path(std::string_view name) const {
  for (const ComputePath& path : compute) {
    if (path.name == name) {
      return &path;
    }
  }
  return nullptr;
}

const NetworkTier* Roofs::find_network(std::string_view name) const {
  for (const NetworkTier& tier : network) {
    if (tier.name == name) {
      return &tier;
    }
  }
  return nullptr;
}

std::vector<const NetworkTier*> Roofs::find_networks(std::string_view names) const {
  std::vector<const NetworkTier*> tiers;
  while (!names.empty()) {
    const std::size_t plus = names.find('+');
    const NetworkTier* tier = find_network(names.substr(0, plus));
    if (tier == nullptr) {
      return {};
    }
    tiers.push_back(tier);
    names = plus == std::string_view::npos ? std::string_view() : names.substr(plus + 1);
  }
  return tiers;
}

const MemoryTier* Roofs::find_tier(std::string_view name) const {
  for (const MemoryTier& tier : memory) {
    if (tier.name == name) {
      return &tier;
    }
  }
  return nullptr;
}

std::string Roofs::path_names() const {
  std::vector<std::string> names;
  for (const ComputePath& path : compute) {
    names.push_back(path.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

namespace {

void apply_overrides(Roofs& roofs, const RoofOverrides& overrides, const std::string& hardware) {
  for (const auto& [name, peak] : overrides.peaks) {
    ComputePath* path = nullptr;
    for (ComputePath& candidate : roofs.compute) {
      path = candidate.name == name ? &candidate : path;
    }
    if (path == nullptr) {
      throw InputError(fmt::format("--peak {}: {} has no compute path '{}' (paths: {})", name,
                                   hardware, name, roofs.path_names()));
    }
    path->peak = peak;
  }
  for (const auto& [name, bandwidth] : overrides.bandwidths) {
    bool found = false;
    std::vector<std::string> tier_names;
    for (MemoryTier& tier : roofs.memory) {
      found = found || tier.name == name;
      tier.bandwidth =
          tier.name == name ? std::optional<BytesPerSecond>(bandwidth) : tier.bandwidth;
      tier_names.push_back(tier.name);
    }
    for (NetworkTier& tier : roofs.network) {
      found = found || tier.name == name;
      tier.bandwidth = tier.name == name ? bandwidth : tier.bandwidth;
      tier_names.push_back(tier.name);
    }
    if (!found) {
      throw InputError(
          fmt::format("--bandwidth {}: {} has no memory or network tier '{}' (tiers: {})", name,
                      hardware, name, fmt::join(tier_names, ", ")));
    }
  }
}

}  // namespace

Roofs resolve_roofs(const HardwareSpec& spec, std::string_view mode_name,
                    const RoofOverrides& overrides) {
  if (mode_name.empty()) {
    mode_name = spec.default_mode;
  }
  const HardwareMode* mode = nullptr;
  std::vector<std::string> mode_names;
  for (const HardwareMode& candidate : spec.modes) {
    mode_names.push_back(candidate.name);
    if (candidate.name == mode_name) {
      mode = &candidate;
    }
  }
  if (mode == nullptr) {
    throw InputError(fmt::format("{}: no mode '{}' (modes: {})", spec.file, mode_name,
                                 fmt::join(mode_names, ", ")));
  }
  Roofs roofs{spec.name,
              mode->name,
              spec.unified_memory,
              spec.vector_path,
              spec.compute,
              spec.memory,
              spec.network,
              spec.host_memory,
              spec.kernel_overhead,
              spec.attention_efficiency,
              spec.gemm_quantization};
  // peak(mode) = explicit figure, else peak(base) × f_mode / f_base: an nvpmodel mode clamps the
  // GPU clock (Jetson Linux Developer Guide, Platform Power and Performance, Jetson Thor).
  for (ComputePath& path : roofs.compute) {
    if (mode->clock) {
      path.peak = path.peak * (*mode->clock / *spec.clock);
    }
  }
  // On-chip bandwidths are bytes per clock × clock: they scale like the peaks.
  for (MemoryTier& tier : roofs.memory) {
    if (mode->clock && tier.clocked) {
      tier.bandwidth = *tier.bandwidth * (*mode->clock / *spec.clock);
    }
  }
  apply_overrides(roofs, mode->overrides, spec.name);
  apply_overrides(roofs, overrides, spec.name);
  // A roof below 1 FLOP/s or 1 B/s (a denormal --peak, a clock ratio that overflows) is no roof:
  // its times would be inf or NaN in every output (issue 23 #3).
  const auto check = [&](std::string_view what, const std::string& name, double value,
                         std::string_view unit) {
    if (!(std::isfinite(value) && value >= 1.0)) {
      throw InputError(fmt::format(
          "{} mode {}: {} '{}' at {:g} {}: expected a finite roof of at least 1 {} (set by the "
          "hardware, its mode, or --peak / --bandwidth)",
          spec.name, roofs.mode, what, name, value, unit, unit));
    }
  };
  for (const ComputePath& path : roofs.compute) {
    check("compute path", path.name, path.peak.si(), "FLOP/s");
  }
  for (const MemoryTier& tier : roofs.memory) {
    if (tier.bandwidth) {
      check("memory tier", tier.name, tier.bandwidth->si(), "B/s");
    }
  }
  for (const NetworkTier& tier : roofs.network) {
    check("network tier", tier.name, tier.bandwidth.si(), "B/s");
  }
  return roofs;
}

}  // namespace rsim
