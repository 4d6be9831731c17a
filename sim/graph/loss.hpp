// SPDX-License-Identifier: MIT
#pragma once
// What a training engine's cross-entropy kernels read and write, pass by pass: the loss op and
// its backward (stage_builder.cpp, backward.cpp) carry these tensors, so their bytes are the
// engine's. Each engine's passes and their evidence: docs/design/expected.md, "The training
// loss's kernels".

#include "sim/graph/op.hpp"
#include "sim/spec/scenario.hpp"

#include <vector>

namespace rsim {

/// The tensors of one direction of the loss: every read and every write of its kernels, the
/// first write being the tensor the next step uses (forward: the kept fp32 softmax or
/// log-probabilities, which the memory table counts; backward: the logits' gradient).
struct LossPasses {
  std::vector<Tensor> reads;
  std::vector<Tensor> writes;
  /// The direction's FLOPs per logit spread over its writes (an op counts FLOPs per output
  /// element): the extra passes add traffic, not results.
  double flops_per_element = 0.0;
};

/// The forward kernels' traffic over `logits` (V elements per token):
///   single_pass: read the logits, write the fp32 softmax (6 B per bf16 logit);
///   torch:       cast to fp32 (2 + 4 B), log_softmax over a row longer than a block's 48 KB of
///                shared memory — a max pass, a sum-of-exp pass and a write pass over the fp32
///                row (3 × 4 + 4 B): 22 B;
///   megatron:    cast (2 + 4 B), max (4), subtract in place (4 + 4), exp in place (4 + 4), sum
///                (4), divide in place (4 + 4): 38 B.
LossPasses loss_forward(LossKernels kernels, const Tensor& logits);

/// The backward kernels' traffic, writing the logits' gradient in `gradient_dtype`:
///   single_pass: read the fp32 softmax, write the gradient (4 + 2 B);
///   torch:       fill the fp32 gradient with zeros (4 B), log_softmax's backward — a sum pass
///                over the gradient, then the gradient and the output read and the input's
///                gradient written (3 × 4 + 4 B), the cast back (4 + 2 B): 26 B;
///   megatron:    scale the fp32 softmax in place by the incoming gradient (4 + 4 B), the cast
///                back (4 + 2 B): 14 B.
LossPasses loss_backward(LossKernels kernels, const Tensor& logits, DType gradient_dtype);

}  // namespace rsim
