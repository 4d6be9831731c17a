// SPDX-License-Identifier: MIT
#include "sim/graph/op.hpp"

#include "sim/base/error.hpp"
#include "sim/base/named.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace rsim {
namespace {

constexpr std::array kOpKindNames{
    Named<OpKind>{OpKind::matmul, "matmul"},
    Named<OpKind>{OpKind::attention, "attention"},
    Named<OpKind>{OpKind::elementwise, "elementwise"},
    Named<OpKind>{OpKind::embedding_gather, "embedding_gather"},
    Named<OpKind>{OpKind::kv_cache_write, "kv_cache_write"},
    Named<OpKind>{OpKind::collective, "collective"},
};

constexpr std::array kPassNames{
    Named<Pass>{Pass::forward, "forward"},
    Named<Pass>{Pass::recompute, "recompute"},
    Named<Pass>{Pass::backward, "backward"},
    Named<Pass>{Pass::optimizer, "optimizer"},
};

constexpr std::array kBlockNames{
    Named<Block>{Block::none, ""},          // an op no builder placed; a whole stage's bounds
    Named<Block>{Block::embed, "embed"},    // the embedding and the dense layers before
    Named<Block>{Block::layer, "layer"},    // the transformer layers (count × layers)
    Named<Block>{Block::head, "head"},      // final norm, dense layers after, LM head
    Named<Block>{Block::matmul, "matmul"},  // a matmul probe's lone op (rsim matmul)
};

constexpr std::array kKindNames{
    Named<CollectiveKind>{CollectiveKind::all_gather, "all-gather"},
    Named<CollectiveKind>{CollectiveKind::reduce_scatter, "reduce-scatter"},
    Named<CollectiveKind>{CollectiveKind::all_reduce, "all-reduce"},
    Named<CollectiveKind>{CollectiveKind::all_to_all, "all-to-all"},
    Named<CollectiveKind>{CollectiveKind::send_recv, "send-recv"},
};

constexpr std::array kRoleNames{
    Named<CollectiveRole>{CollectiveRole::none, "none"},
    Named<CollectiveRole>{CollectiveRole::tensor, "tensor"},
    Named<CollectiveRole>{CollectiveRole::expert, "expert"},
    Named<CollectiveRole>{CollectiveRole::weight_gather, "weight_gather"},
    Named<CollectiveRole>{CollectiveRole::gradient_reduction, "gradient_reduction"},
    Named<CollectiveRole>{CollectiveRole::pipeline_send, "pipeline_send"},
    Named<CollectiveRole>{CollectiveRole::sequence, "sequence"},
};

}  // namespace

std::string_view to_string(CollectiveKind kind) { return name_of(kind, kKindNames); }

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  return find_named(name, kKindNames);
}

std::string_view to_string(CollectiveRole role) { return name_of(role, kRoleNames); }

std::string_view to_string(TensorRole role) {
  switch (role) {
    case TensorRole::activation:
      return "activation";
    case TensorRole::weight:
      return "weight";
    case TensorRole::kv_cache:
      return "kv_cache";
  }
  return "unknown";
}

std::string_view to_string(OpKind kind) { return name_of(kind, kOpKindNames); }

std::string_view to_string(Pass pass) { return name_of(pass, kPassNames); }

std::string_view to_string(Block block) { return name_of(block, kBlockNames); }

std::int64_t Tensor::elements() const {
  std::int64_t product = 1;
  for (const Axis& axis : axes) {
    // A workload large enough to overflow 64 bits is an input error, not a silent wrap.
    if (__builtin_mul_overflow(product, axis.size, &product)) {
      throw SizeOverflowError(
          fmt::format("tensor {} {} has more than 2^63 elements", name, shape()));
    }
  }
  return product;
}

Bytes Tensor::bytes() const {
  return Bytes(static_cast<double>(elements()) * bytes_per_element(dtype));
}

bool Tensor::has_axis(std::string_view axis_name) const {
  return std::any_of(axes.begin(), axes.end(),
                     [&](const Axis& axis) { return axis.name == axis_name; });
}

std::string Tensor::shape() const {
  std::vector<std::string> parts;
  for (const Axis& axis : axes) {
    parts.push_back(fmt::format("{}={}", axis.name, axis.size));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string Op::qualified_name() const {
  return fmt::format("{}/{}/{}", stage, to_string(block), name);
}

}  // namespace rsim
