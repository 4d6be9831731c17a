// SPDX-License-Identifier: MIT
#pragma once
// Llama 3 8B training on H100s (scenarios/llama3_8b_train_h100.yaml), the model the training
// tests derive their figures from: its dimensions and the helpers they share.

#include "run_fixture.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rsim::test::llama3_8b {

// Llama 3 8B (models/llama3_8b.yaml, HF config): D 4096, N 32 query heads, K 8 KV heads,
// H 128, F 14336 (gated), L 32, V 128256, untied embeddings.
inline constexpr double kD = 4096;
inline constexpr double kN = 32;
inline constexpr double kK = 8;
inline constexpr double kH = 128;
inline constexpr double kF = 14336;
inline constexpr double kL = 32;
inline constexpr double kV = 128256;
// Matmul parameters of one layer: q D·N·H + kv D·2·K·H + o N·H·D + gate_up D·2F + down F·D
// = 16,777,216 + 8,388,608 + 16,777,216 + 117,440,512 + 58,720,256 = 218,103,808.
inline constexpr double kLayerMatmulParams =
    kD * kN * kH + kD * 2 * kK * kH + kN * kH * kD + kD * 2 * kF + kF * kD;
inline constexpr double kHeadParams = kD * kV;  // lm_head 525,336,576

inline RunResult train_8b(std::vector<std::pair<std::string, std::string>> sets) {
  return run_scenario("llama3_8b_train_h100", std::move(sets));
}

// One device, one microbatch of one 1,024-token sequence.
inline std::vector<std::pair<std::string, std::string>> one_device_1024_tokens() {
  return {{"plan", "single"},
          {"workload.global_batch_tokens", "1024"},
          {"workload.seq_len", "1024"},
          {"workload.microbatches", "1"}};
}

// The pass and the bytes (inputs + outputs, per device) of the op named `name`; -1 B without it.
inline std::pair<Pass, double> op_bytes(const RunResult& run, const std::string& name) {
  for (const auto vertex : run.table.order) {
    const Op& op = run.graph.op(vertex);
    if (op.name == name) {
      double total = 0.0;
      for (const auto& tensor : op.inputs) {
        total += tensor.bytes().si();
      }
      for (const auto& tensor : op.outputs) {
        total += tensor.bytes().si();
      }
      return {op.pass, total};
    }
  }
  return {Pass::optimizer, -1.0};
}

}  // namespace rsim::test::llama3_8b
