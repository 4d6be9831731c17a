// SPDX-License-Identifier: MIT
#include "sim/report/shard_merge.hpp"

#include "sim/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace rsim {
namespace {

using Json = nlohmann::ordered_json;

const Json& shard_record(const ShardDocument& shard) {
  const Json& json = shard.json;
  if (!json.is_object() || !json.contains("shard") || !json["shard"].is_object() ||
      !json["shard"].contains("command")) {
    throw InputError(fmt::format(
        "{}: not the output of one shard (no 'shard' record): run rsim sweep or rsim search "
        "with --shard K/N --format json, then merge those files",
        shard.path));
  }
  return json["shard"];
}

// A field of a shard's JSON, or an InputError naming the file and the key.
template <typename T>
T field(const ShardDocument& shard, const Json& object, const char* key) {
  if (!object.contains(key)) {
    throw InputError(fmt::format("{}: the shard's JSON has no '{}'", shard.path, key));
  }
  try {
    return object[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: '{}' is not what rsim writes there ({})", shard.path, key,
                                 object[key].dump()));
  }
}

// The shards in order K = 1 … N, each once; InputError for a missing, doubled or foreign one.
// `same` lists the keys every shard must agree on with the first.
std::vector<const ShardDocument*> in_order(const std::vector<ShardDocument>& shards,
                                           const std::vector<const char*>& same,
                                           const std::vector<const char*>& same_in_record) {
  const ShardDocument& first = shards.front();
  const auto count = field<std::int64_t>(first, shard_record(first), "count");
  std::vector<const ShardDocument*> ordered(
      static_cast<std::size_t>(std::max<std::int64_t>(count, 0)), nullptr);
  for (const ShardDocument& shard : shards) {
    const Json& record = shard_record(shard);
    const auto index = field<std::int64_t>(shard, record, "index");
    if (field<std::int64_t>(shard, record, "count") != count) {
      throw InputError(fmt::format("{}: shard {}/{} is not one of {}'s {} slices", shard.path,
                                   index, field<std::int64_t>(shard, record, "count"), first.path,
                                   count));
    }
    for (const char* key : same) {
      if (shard.json.value(key, Json()) != first.json.value(key, Json())) {
        throw InputError(fmt::format("{}: '{}' differs from {}'s: the shards of one run share it",
                                     shard.path, key, first.path));
      }
    }
    for (const char* key : same_in_record) {
      if (record.value(key, Json()) != shard_record(first).value(key, Json())) {
        throw InputError(
            fmt::format("{}: the shard's '{}' differs from {}'s", shard.path, key, first.path));
      }
    }
    if (index < 1 || index > count) {
      throw InputError(
          fmt::format("{}: shard {}/{} is outside 1..{}", shard.path, index, count, count));
    }
    const ShardDocument*& slot = ordered[static_cast<std::size_t>(index - 1)];
    if (slot != nullptr) {
      throw InputError(fmt::format("{}: shard {}/{} was given twice (also {})", shard.path, index,
                                   count, slot->path));
    }
    slot = &shard;
  }
  for (std::size_t index = 0; index < ordered.size(); ++index) {
    if (ordered[index] == nullptr) {
      throw InputError(fmt::format("shard {}/{} is missing: merge needs all {} shards' files",
                                   index + 1, count, count));
    }
  }
  return ordered;
}

Bound bound_of(const std::string& label) {
  if (label.starts_with("compute")) {
    return Bound::compute;
  }
  return label.starts_with("network") ? Bound::network : Bound::memory;
}

}  // namespace

std::string shard_command(const std::vector<ShardDocument>& shards) {
  if (shards.empty()) {
    throw InputError("rsim merge: give the JSON files of every shard");
  }
  const auto command = field<std::string>(shards.front(), shard_record(shards.front()), "command");
  for (const ShardDocument& shard : shards) {
    const auto other = field<std::string>(shard, shard_record(shard), "command");
    if (other != command) {
      throw InputError(fmt::format("{}: a {} shard among {} shards ({})", shard.path, other,
                                   command, shards.front().path));
    }
  }
  if (command != "sweep" && command != "search") {
    throw InputError(fmt::format("{}: shards of '{}': rsim merges sweep and search shards",
                                 shards.front().path, command));
  }
  return command;
}

MergedSweep merge_sweep_shards(const std::vector<ShardDocument>& shards) {
  const std::vector<const ShardDocument*> ordered =
      in_order(shards, {"scenario", "rank_by", "axes"},
               {"points", "scenario_name", "arguments", "crossovers"});
  const ShardDocument& first = *ordered.front();
  const Json& record = shard_record(first);
  MergedSweep merged;
  SweepResult& result = merged.result;
  result.scenario = field<std::string>(first, first.json, "scenario");
  result.scenario_name = field<std::string>(first, record, "scenario_name");
  result.threads = field<std::int64_t>(first, first.json, "threads");
  const auto rank_by = parse_rank_by(field<std::string>(first, first.json, "rank_by"));
  if (!rank_by) {
    throw InputError(fmt::format("{}: 'rank_by' is not lower, expected or upper", first.path));
  }
  result.rank_by = *rank_by;
  for (const Json& axis : first.json.at("axes")) {
    result.axes.push_back({field<std::string>(first, axis, "key"),
                           field<std::vector<std::string>>(first, axis, "values"),
                           field<bool>(first, axis, "numeric")});
  }
  merged.crossovers = field<bool>(first, record, "crossovers");
  merged.arguments = field<std::vector<std::string>>(first, record, "arguments");
  const auto total = field<std::size_t>(first, record, "points");
  const std::size_t grid = std::accumulate(
      result.axes.begin(), result.axes.end(), std::size_t{1},
      [](std::size_t product, const SweepAxis& axis) { return product * axis.values.size(); });
  if (total != grid) {
    throw InputError(
        fmt::format("{}: {} points, but its axes make a grid of {}", first.path, total, grid));
  }
  result.points.resize(total);
  std::map<std::string, std::uint32_t> ids{{"", 0}};
  const auto intern = [&](const std::string& text) {
    const auto [found, added] = ids.emplace(text, static_cast<std::uint32_t>(result.labels.size()));
    if (added) {
      result.labels.push_back(text);
    }
    return found->second;
  };
  std::size_t next = 0;
  for (const ShardDocument* shard : ordered) {
    const Json& slice = shard_record(*shard);
    const auto begin = field<std::size_t>(*shard, slice, "first");
    const auto end = field<std::size_t>(*shard, slice, "end");
    const Json& points = shard->json.at("points");
    if (begin != next || end < begin || end > total || points.size() != end - begin) {
      throw InputError(fmt::format(
          "{}: its slice [{}, {}) with {} points does not follow the slice before it (from {})",
          shard->path, begin, end, points.size(), next));
    }
    result.cancelled = result.cancelled || field<bool>(*shard, shard->json, "cancelled");
    for (std::size_t index = begin; index < end; ++index) {
      const Json& point = points[index - begin];
      SweepPoint& into = result.points[index];
      const Json& error = point.contains("error") ? point["error"] : Json();
      if (!error.is_null()) {
        const auto text = error.get<std::string>();
        into.evaluated = text != "not evaluated";
        into.error = into.evaluated ? intern(text) : 0;
        continue;
      }
      into.evaluated = true;
      SweepFigures& figures = into.total;
      figures.t_lower = Seconds(field<double>(*shard, point, "t_lower_s"));
      figures.t_expected = Seconds(field<double>(*shard, point, "t_expected_s"));
      figures.t_upper = Seconds(field<double>(*shard, point, "t_upper_s"));
      figures.t_math = Seconds(field<double>(*shard, point, "t_math_s"));
      figures.t_mem = Seconds(field<double>(*shard, point, "t_mem_s"));
      figures.t_net = Seconds(field<double>(*shard, point, "t_net_s"));
      const auto bound = field<std::string>(*shard, point, "bound");
      figures.bound = bound_of(bound);
      figures.roof = intern(bound);
      into.memory = Bytes(field<double>(*shard, point, "memory_per_device_bytes"));
      into.capacity = Bytes(field<double>(*shard, point, "capacity_bytes"));
      if (point.contains("request_s")) {
        into.ttft = Seconds(field<double>(*shard, point, "ttft_s"));
        into.tpot = Seconds(field<double>(*shard, point, "tpot_s"));
        into.request = Seconds(field<double>(*shard, point, "request_s"));
        into.request_tokens = field<double>(*shard, point, "tokens_per_s") * into.request.si();
      }
    }
    next = end;
  }
  if (next != total) {
    throw InputError(fmt::format("the shards cover {} of the grid's {} points", next, total));
  }
  return merged;
}

Json merge_search_shards(const std::vector<ShardDocument>& shards) {
  const std::vector<const ShardDocument*> ordered = in_order(
      shards, {"scenario", "scenario_args", "devices", "phase", "rank_by"}, {"shapes", "top"});
  const ShardDocument& first = *ordered.front();
  Json merged = first.json;
  merged.erase("shard");
  std::int64_t seen = 0;
  std::int64_t costed = 0;
  std::int64_t analyses = 0;
  std::int64_t shapes = 0;
  std::int64_t searched = 0;
  bool cancelled = false;
  std::map<std::string, std::int64_t> rejected;
  std::vector<std::pair<std::vector<double>, Json>> ranked;
  std::int64_t next = 0;
  for (const ShardDocument* shard : ordered) {
    const Json& json = shard->json;
    const Json& record = shard_record(*shard);
    if (field<std::int64_t>(*shard, record, "first") != next) {
      throw InputError(
          fmt::format("{}: its slice of the plan shapes does not follow the one "
                      "before it (from {})",
                      shard->path, next));
    }
    next = field<std::int64_t>(*shard, record, "end");
    seen += field<std::int64_t>(*shard, json, "seen");
    costed += field<std::int64_t>(*shard, json, "costed");
    analyses += field<std::int64_t>(*shard, json, "analyses");
    shapes += field<std::int64_t>(*shard, json, "shapes");
    searched += field<std::int64_t>(*shard, json, "shapes_searched");
    cancelled = cancelled || field<bool>(*shard, json, "cancelled");
    for (const auto& [reason, plans] : json.at("rejected").items()) {
      rejected[reason] += plans.get<std::int64_t>();
    }
    const auto keys = field<std::vector<std::vector<double>>>(*shard, record, "keys");
    const Json& plans = json.at("ranked");
    if (keys.size() != plans.size()) {
      throw InputError(
          fmt::format("{}: {} ranked plans but {} keys", shard->path, plans.size(), keys.size()));
    }
    for (std::size_t index = 0; index < keys.size(); ++index) {
      ranked.emplace_back(keys[index], plans[index]);
    }
  }
  if (next != field<std::int64_t>(first, shard_record(first), "shapes")) {
    throw InputError(fmt::format("the shards cover {} of the search's {} plan shapes", next,
                                 field<std::int64_t>(first, shard_record(first), "shapes")));
  }
  // The search's own order: its key is unique per plan (the plan's dimensions end it).
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& left, const auto& right) { return left.first < right.first; });
  const auto top = field<std::size_t>(first, shard_record(first), "top");
  if (top > 0 && ranked.size() > top) {
    ranked.resize(top);
  }
  Json plans = Json::array();
  for (std::size_t index = 0; index < ranked.size(); ++index) {
    Json plan = std::move(ranked[index].second);
    plan["rank"] = index + 1;
    plans.push_back(std::move(plan));
  }
  Json reasons = Json::object();
  for (const auto& [reason, plans_rejected] : rejected) {
    reasons[reason] = plans_rejected;
  }
  merged["seen"] = seen;
  merged["costed"] = costed;
  merged["analyses"] = analyses;
  merged["cancelled"] = cancelled;
  merged["shapes"] = shapes;
  merged["shapes_searched"] = searched;
  merged["rejected"] = reasons;
  merged["ranked"] = plans;
  return merged;
}

}  // namespace rsim
