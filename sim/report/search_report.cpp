// SPDX-License-Identifier: MIT
#include "sim/report/search_report.hpp"

#include "sim/report/format.hpp"
#include "sim/report/json_records.hpp"
#include "sim/report/table.hpp"
#include "sim/report/text_width.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <numeric>

namespace rsim {
namespace {

// One word for a POSIX shell: as it is when it is plain, else in single quotes.
std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_./=:,+-").find(c) != std::string_view::npos;
  });
  if (plain) {
    return word;
  }
  std::string quoted = "'";
  for (const char c : word) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

using Json = nlohmann::ordered_json;
using Align = TextTable::Align;

// Why `candidate` ranks below `above`: by throughput or cost, the work per device-second it
// gives up; by latency, the term of the sum that grew the most.
std::string loses_by(const SearchCandidate& candidate, const SearchCandidate& above,
                     SearchObjective objective, RankBy rank_by) {
  if (objective != SearchObjective::latency) {
    return fmt::format(
        "−{:.3g} % seq/s/device (+{} device-seconds per sequence)",
        100.0 * (1.0 - candidate.sequences_per_device_s / above.sequences_per_device_s),
        format_quantity(1.0 / candidate.sequences_per_device_s - 1.0 / above.sequences_per_device_s,
                        Dimension::seconds));
  }
  const std::array<std::pair<std::string_view, double>, 3> growth{{
      {"ΣT_math", (candidate.total.t_math - above.total.t_math).si()},
      {"ΣT_memory", (memory_side(candidate.total).time - memory_side(above.total).time).si()},
      {"ΣT_net", (candidate.total.t_net - above.total.t_net).si()},
  }};
  const auto largest =
      std::max_element(growth.begin(), growth.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const Seconds slower = ranked_time(candidate.total, rank_by) - ranked_time(above.total, rank_by);
  if (largest->second <= 0.0) {
    return fmt::format("+{} {} (ties broken by lower, upper bound, preset, mesh)", seconds(slower),
                       to_string(rank_by));
  }
  return fmt::format("+{} {}: {} +{}", seconds(slower), to_string(rank_by), largest->first,
                     format_quantity(largest->second, Dimension::seconds));
}

std::map<std::string, std::int64_t> rejection_counts(const SearchResult& result) {
  std::map<std::string, std::int64_t> counts;
  for (const SearchRejection& rejection : result.rejected) {
    ++counts[std::string(to_string(rejection.reason))];
  }
  return counts;
}

std::string plan_change(const TrainingPlan& from, const TrainingPlan& to) {
  std::vector<std::string> changes;
  const auto note = [&](std::string_view name, const auto& before, const auto& after) {
    if (before != after) {
      changes.push_back(fmt::format("{} {} → {}", name, before, after));
    }
  };
  note("t", from.tensor, to.tensor);
  note("p", from.pipeline, to.pipeline);
  note("d", from.data, to.data);
  note("preset", from.sharding(), to.sharding());
  note("m", from.microbatches, to.microbatches);
  note("recompute", to_string(from.recompute), to_string(to.recompute));
  note("v", from.interleave, to.interleave);
  note("gradients", from.overlap_gradients ? "overlapped" : "after",
       to.overlap_gradients ? "overlapped" : "after");
  note("tensor collectives", from.overlap_tensor ? "overlapped" : "after",
       to.overlap_tensor ? "overlapped" : "after");
  note("offload", from.offloaded(), to.offloaded());
  note("placement", from.placement_order(), to.placement_order());
  return fmt::format("{}", fmt::join(changes, ", "));
}

// Why a training plan ranks below the one above: the term of its step that grew the most, and
// what differs in the plan.
std::string training_loses_by(const TrainingCandidate& candidate, const TrainingCandidate& above,
                              RankBy rank_by) {
  const std::array<std::pair<std::string_view, double>, 6> growth{{
      {"ΣT_math", (candidate.t_math - above.t_math).si()},
      {"ΣT_mem", (candidate.t_mem - above.t_mem).si()},
      {"ΣT_net", (candidate.t_net - above.t_net).si()},
      {"T_host", (candidate.t_host - above.t_host).si()},
      {"tensor comms exposed", (above.tensor_hidden - candidate.tensor_hidden).si()},
      {"bubble", (candidate.bubble - above.bubble).si()},
  }};
  const auto largest =
      std::max_element(growth.begin(), growth.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto step = [&](const TrainingCandidate& plan) {
    return by_rank(rank_by, plan.step_lower, plan.step_expected, plan.step_upper);
  };
  const std::string slower = seconds(step(candidate) - step(above));
  const std::string change = plan_change(above.plan, candidate.plan);
  if (largest->second <= 0.0) {
    return fmt::format("+{} ({}; ties: lower, upper bound, then plan order)", slower, change);
  }
  return fmt::format("+{}: {} +{} ({})", slower, largest->first,
                     format_quantity(largest->second, Dimension::seconds), change);
}

// The placement order in the table's letters: "t>d>p" (tensor, data, pipeline) for
// model>data>stage.
std::string placement_letters(const TrainingPlan& plan) {
  std::string order = plan.placement_order();
  for (const auto& [name, letter] :
       {std::pair{std::string_view("model"), "t"}, std::pair{std::string_view("data"), "d"},
        std::pair{std::string_view("stage"), "p"}}) {
    order.replace(order.find(name), name.size(), letter);
  }
  return order;
}

std::string training_bound(const TrainingCandidate& candidate) {
  const std::array<std::pair<std::string_view, double>, 4> terms{{
      {"compute", candidate.t_math.si()},
      {"memory", candidate.t_mem.si()},
      {"network", candidate.t_net.si()},
      {"host link", candidate.t_host.si()},
  }};
  // The largest term; ties go to the earlier (compute before memory before network).
  return std::string(std::max_element(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
                       return a.second < b.second;
                     })->first);
}

// What one sequence of a decode request sees: its decode_steps + 1 output tokens over the
// request's expected total.
double tokens_per_sequence_s(const DecodeRequest& request) {
  return static_cast<double>(request.steps + 1) / request.total().expected.si();
}

}  // namespace

void write_search_text(std::ostream& out, const SearchResult& result, std::size_t top) {
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : rejection_counts(result)) {
    reasons.push_back(fmt::format("{} {}", count, reason));
  }
  write_wrapped(
      out, fmt::format(
               "Plan search: {} on {} devices, by {} ({} time): {} plans seen, {} costed, {} "
               "rejected{}",
               result.scenario, result.devices, to_string(result.objective),
               to_string(result.rank_by), result.seen, result.ranked.size(), result.rejected.size(),
               reasons.empty() ? std::string() : fmt::format(" ({})", fmt::join(reasons, ", "))));
  out << '\n';
  // Drop ranks: the highest go first when the terminal is narrow.
  std::vector<TextTable::Column> columns{{"#"},
                                         {"preset", Align::left},
                                         {"mesh (per replica)", Align::left},
                                         {"replicas", Align::right, 3},
                                         {"expected"},
                                         {"lower", Align::right, 4},
                                         {"upper", Align::right, 5},
                                         {"ΣT_math", Align::right, 8},
                                         {"ΣT_mem", Align::right, 7},
                                         {"ΣT_net", Align::right, 6},
                                         {"bound", Align::left},
                                         {"memory/device"},
                                         {"seq/s/device"},
                                         {"device·s/seq", Align::right, 9},
                                         {"Pareto", Align::left, 2},
                                         {"vs the one above", Align::left, 1}};
  // A decode request's: the expected time to first token and per output token of each plan.
  const bool requests =
      std::any_of(result.ranked.begin(), result.ranked.end(),
                  [](const SearchCandidate& candidate) { return candidate.request.has_value(); });
  if (requests) {
    columns.insert(columns.begin() + 5,
                   {{"TTFT"}, {"TPOT"}, {"tokens/s/seq", TextTable::Align::right, 3}});
  }
  TextTable table(std::move(columns));
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t index = 0; index < shown; ++index) {
    const SearchCandidate& candidate = result.ranked[index];
    std::vector<std::string> row{
        fmt::format("{}", index + 1),
        candidate.preset,
        candidate.mesh.empty() ? "one device" : candidate.mesh,
        fmt::format("{}", candidate.replicas),
        seconds(candidate.total.t_expected),
        seconds(candidate.total.t_lower),
        seconds(candidate.total.t_upper),
        seconds(candidate.total.t_math),
        seconds(candidate.total.t_mem),
        seconds(candidate.total.t_net),
        std::string(bound_label(candidate.total)),
        format_quantity(candidate.footprint.total().si(), Dimension::bytes),
        format_plain(candidate.sequences_per_device_s),
        format_quantity(1.0 / candidate.sequences_per_device_s, Dimension::seconds),
        candidate.pareto ? "yes" : "",
        index == 0
            ? "-"
            : loses_by(candidate, result.ranked[index - 1], result.objective, result.rank_by)};
    if (requests) {
      row.insert(
          row.begin() + 5,
          {candidate.request ? seconds(candidate.request->prefill.expected) : "-",
           candidate.request ? seconds(candidate.request->per_output_token().expected) : "-",
           candidate.request ? format_plain(tokens_per_sequence_s(*candidate.request)) : "-"});
    }
    table.add_row(std::move(row));
  }
  table.print(out, "  ");
  const auto pareto =
      std::count_if(result.ranked.begin(), result.ranked.end(),
                    [](const SearchCandidate& candidate) { return candidate.pareto; });
  out << '\n';
  write_wrapped(out, fmt::format("{} plans on the Pareto front of latency ({}) against sequences "
                                 "per device-second; mesh \"data: D over …, model: M over …\" per "
                                 "replica of devices / replicas.",
                                 pareto, to_string(result.rank_by)));
}

namespace {

// The mesh one axis per key ({"data": {"size": 4, "network": "ib"}}): in CSV, a column per axis.
Json mesh_axes_json(const std::vector<MeshAxis>& axes) {
  Json json = Json::object();
  for (const MeshAxis& axis : axes) {
    json[axis.name] = Json{{"size", axis.size}, {"network", axis.network}};
  }
  return json;
}

}  // namespace

nlohmann::ordered_json search_to_json(const SearchResult& result, std::size_t top) {
  Json ranked = Json::array();
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t index = 0; index < shown; ++index) {
    const SearchCandidate& candidate = result.ranked[index];
    ranked.push_back(Json{{"rank", index + 1},
                          {"preset", candidate.preset},
                          {"mesh", candidate.mesh},
                          {"devices_per_replica", candidate.devices},
                          {"replicas", candidate.replicas},
                          {"t_expected_s", candidate.total.t_expected.si()},
                          {"t_lower_s", candidate.total.t_lower.si()},
                          {"t_upper_s", candidate.total.t_upper.si()},
                          {"t_math_s", candidate.total.t_math.si()},
                          {"t_mem_s", candidate.total.t_mem.si()},
                          {"t_net_s", candidate.total.t_net.si()},
                          {"bound", std::string(bound_label(candidate.total))},
                          {"memory_per_device_bytes", candidate.footprint.total().si()},
                          {"sequences_per_device_s", candidate.sequences_per_device_s},
                          {"device_seconds_per_sequence", 1.0 / candidate.sequences_per_device_s},
                          {"pareto", candidate.pareto},
                          {"mesh_axes", mesh_axes_json(candidate.mesh_axes)}});
    if (candidate.request) {
      // A decode request's time to first token (its prefill) and time per output token, as
      // rsim run's decode.request gives them.
      ranked.back()["request"] =
          Json{{"prefill", phase_json(candidate.request->prefill)},
               {"per_output_token", phase_json(candidate.request->per_output_token())},
               {"total", phase_json(candidate.request->total())},
               {"tokens_per_s_per_sequence", tokens_per_sequence_s(*candidate.request)}};
    }
  }
  Json rejected = Json::object();
  for (const auto& [reason, count] : rejection_counts(result)) {
    rejected[reason] = count;
  }
  return Json{{"scenario", result.scenario},
              {"devices", result.devices},
              {"objective", to_string(result.objective)},
              {"rank_by", to_string(result.rank_by)},
              {"seen", result.seen},
              {"costed", result.ranked.size()},
              {"rejected", rejected},
              {"ranked", ranked}};
}

void write_training_search_text(std::ostream& out, const TrainingSearchResult& result,
                                std::size_t top) {
  const std::int64_t rejected = std::accumulate(
      result.rejected_by_reason.begin(), result.rejected_by_reason.end(), std::int64_t{0},
      [](std::int64_t sum, const auto& entry) { return sum + entry.second; });
  write_wrapped(
      out,
      fmt::format("Training plan search: {} on {} devices ({} sequences × {} tokens per step, {} "
                  "layers): {} plans seen, {} costed (from {} analyses), {} rejected",
                  result.scenario, result.devices, result.batch, result.seq_len, result.layers,
                  result.seen, result.costed, result.analyses, rejected));
  if (result.cancelled) {
    write_wrapped(out, fmt::format("Interrupted: {} of {} plan shapes searched. Plans seen counts "
                                   "the whole space; costed, rejected and the ranking cover the "
                                   "finished shapes.",
                                   result.shapes_searched, result.shapes));
  }
  for (const auto& [reason, count] : result.rejected_by_reason) {
    // A named capture: clang before 16 (clang-tidy) cannot capture a structured binding.
    const auto example = std::find_if(result.rejected.begin(), result.rejected.end(),
                                      [&name = reason](const TrainingRejection& rejection) {
                                        return to_string(rejection.reason) == name;
                                      });
    write_wrapped(
        out,
        fmt::format("{} {}, e.g. {}: {}", count, reason, example->plan.label(), example->detail),
        "  ", "      ");
  }
  write_wrapped(
      out,
      fmt::format(
          "Ranked by {} step time (bubble included{}); ties: lower, then upper bound, then t, p, "
          "ZeRO stage, sp, m, recompute, v, gradient overlap, tensor overlap, offload, placement "
          "ascending.{}",
          to_string(result.rank_by),
          result.rank_by == RankBy::expected
              ? "; collectives exposed but for the overlaps the plan names"
              : "",
          result.ranked.size() < static_cast<std::size_t>(result.costed)
              ? fmt::format(" The best {} are kept.", result.ranked.size())
              : std::string()));
  out << '\n';
  // Drop ranks: the highest go first when the terminal is narrow.
  TextTable table({{"#"},
                   {"t×p×d"},
                   {"placement", Align::left, 6},
                   {"preset", Align::left},
                   {"m"},
                   {"b", Align::right, 4},
                   {"recompute", Align::left},
                   {"v", Align::right, 5},
                   {"grads", Align::left, 2},
                   {"tp comms", Align::left, 3},
                   {"offload", Align::left, 1},
                   {"expected"},
                   {"lower", Align::right, 7},
                   {"upper", Align::right, 8},
                   {"ΣT_math", Align::right, 13},
                   {"ΣT_mem", Align::right, 12},
                   {"ΣT_net", Align::right, 10},
                   {"T_host", Align::right, 11},
                   {"bound", Align::left},
                   {"bubble", Align::right, 9},
                   {"memory/device"},
                   {"MFU"},
                   {"vs the one above", Align::left, 14}});
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  bool vocab_note = false;
  for (std::size_t index = 0; index < shown; ++index) {
    const TrainingCandidate& candidate = result.ranked[index];
    const TrainingPlan& plan = candidate.plan;
    vocab_note = vocab_note || candidate.vocab_padded;
    table.add_row(
        {fmt::format("{}", index + 1),
         fmt::format("{}×{}×{}", plan.tensor, plan.pipeline, plan.data),
         placement_letters(plan),
         plan.sharding() + (candidate.vocab_padded ? "*" : ""),
         fmt::format("{}", plan.microbatches),
         fmt::format("{}", candidate.microbatch),
         std::string(to_string(plan.recompute)),
         fmt::format("{}", plan.interleave),
         plan.data == 1           ? "-"
         : plan.overlap_gradients ? "overlap"
                                  : "after",
         !plan.sequence_parallel ? "-"
         : plan.overlap_tensor   ? "overlap"
                                 : "after",
         plan.offloaded(),
         seconds(candidate.step_expected),
         seconds(candidate.step_lower),
         seconds(candidate.step_upper),
         seconds(candidate.t_math),
         seconds(candidate.t_mem),
         seconds(candidate.t_net),
         seconds(candidate.t_host),
         training_bound(candidate),
         fmt::format("{} ({:.3g} %)", seconds(candidate.bubble), 100.0 * candidate.bubble_fraction),
         format_quantity(candidate.footprint.total().si(), Dimension::bytes),
         fmt::format("{:.1f} %", 100.0 * candidate.mfu),
         index == 0 ? "-"
                    : training_loses_by(candidate, result.ranked[index - 1], result.rank_by)});
  }
  table.print(out, "  ");
  if (!result.ranked.empty()) {
    out << '\n';
    write_wrapped(out,
                  fmt::format("Best: {} over {}.", result.ranked.front().plan.label(),
                              result.ranked.front().mesh.empty() ? std::string("one device")
                                                                 : result.ranked.front().mesh));
    std::vector<std::string> words{"rsim", "run", shell_quoted(result.scenario)};
    for (const std::string& arg : result.scenario_args) {
      words.push_back(shell_quoted(arg));
    }
    for (const std::string& arg : run_args(result.ranked.front())) {
      words.push_back(shell_quoted(arg));
    }
    // One line, whatever the width: it is pasted into a shell.
    out << fmt::format("Run it: {}\n", fmt::join(words, " "));
  }
  write_wrapped(
      out,
      fmt::format(
          "t×p×d: tensor × pipeline × data devices; placement: the order in which the axes take "
          "the "
          "innermost network tier (t>d>p: Megatron-LM's); b: sequences per microbatch per replica; "
          "v: "
          "layer chunks per stage; grads: the data axis's gradient reductions after the backward "
          "pass "
          "or overlapped with the last microbatch's (exposed: max(G/layers, G − backward/m)); tp "
          "comms: the tensor axis's all-gathers and reduce-scatters after their matmuls or as ring "
          "steps under them (exposed: max(0, C − (t−1)/t·matmuls) per pass); offload: what lives "
          "in "
          "host memory, two layers' worth resident in HBM, streamed over the host link; MFU: "
          "{} model FLOPs per step (forward + backward, no "
          "recomputation) / (devices × peak × expected step).{}",
          format_count(result.model_flops),
          vocab_note
              ? " *: the vocabulary does not divide over t: padded to a multiple of 128·t, as "
                "Megatron-LM "
                "pads it (--make-vocab-size-divisible-by 128)."
              : ""));
}

nlohmann::ordered_json training_search_to_json(const TrainingSearchResult& result,
                                               std::size_t top) {
  Json ranked = Json::array();
  const std::size_t shown = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t index = 0; index < shown; ++index) {
    const TrainingCandidate& candidate = result.ranked[index];
    const TrainingPlan& plan = candidate.plan;
    ranked.push_back(Json{{"rank", index + 1},
                          {"tensor", plan.tensor},
                          {"pipeline", plan.pipeline},
                          {"data", plan.data},
                          {"placement", plan.placement_order()},
                          {"preset", plan.preset()},
                          {"zero_stage", plan.zero_stage},
                          {"mesh", candidate.mesh},
                          {"microbatches", plan.microbatches},
                          {"microbatch_sequences", candidate.microbatch},
                          {"recompute", to_string(plan.recompute)},
                          {"interleave", plan.interleave},
                          {"overlap_gradients", plan.overlap_gradients},
                          {"overlap_tensor", plan.overlap_tensor},
                          {"offload_weights", plan.offload_weights},
                          {"offload_activations", plan.offload_activations},
                          {"offload_optimizer", plan.offload_optimizer},
                          {"vocab_padded", candidate.vocab_padded},
                          {"step_lower_s", candidate.step_lower.si()},
                          {"step_expected_s", candidate.step_expected.si()},
                          {"step_upper_s", candidate.step_upper.si()},
                          {"t_math_s", candidate.t_math.si()},
                          {"t_mem_s", candidate.t_mem.si()},
                          {"t_net_s", candidate.t_net.si()},
                          {"t_host_s", candidate.t_host.si()},
                          {"tensor_hidden_s", candidate.tensor_hidden.si()},
                          {"bubble_s", candidate.bubble.si()},
                          {"bubble_fraction", candidate.bubble_fraction},
                          {"memory_per_device_bytes", candidate.footprint.total().si()},
                          {"host_memory_per_device_bytes", candidate.host_bytes.si()},
                          {"mfu", candidate.mfu},
                          {"run_args", run_args(candidate)}});
  }
  Json rejected = Json::object();
  for (const auto& [reason, count] : result.rejected_by_reason) {
    rejected[reason] = count;
  }
  Json json{{"scenario", result.scenario},
            {"scenario_args", result.scenario_args},
            {"devices", result.devices},
            {"phase", "train"},
            {"rank_by", to_string(result.rank_by)},
            {"seen", result.seen},
            {"costed", result.costed},
            {"analyses", result.analyses},
            {"cancelled", result.cancelled},
            {"shapes", result.shapes},
            {"shapes_searched", result.shapes_searched},
            {"rejected", rejected},
            {"ranked", ranked}};
  if (result.shard.requested) {
    // What `rsim merge` ranks the shards' plans by, one key per ranked plan.
    Json keys = Json::array();
    for (std::size_t index = 0; index < shown; ++index) {
      keys.push_back(rank_key_values(result.ranked[index], result.rank_by));
    }
    json["shard"] = Json{{"command", "search"},
                         {"index", result.shard.index},
                         {"count", result.shard.count},
                         {"first", result.shard_first},
                         {"end", result.shard_end},
                         {"shapes", result.all_shapes},
                         {"top", top},
                         {"keys", keys}};
  }
  return json;
}

}  // namespace rsim
