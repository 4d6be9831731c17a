// SPDX-License-Identifier: MIT
#include "sim/graph/loss.hpp"

#include "sim/graph/elementwise_flops.hpp"

#include <string>
#include <utility>

namespace rsim {
namespace {

Tensor renamed(const Tensor& tensor, std::string name, DType dtype) {
  Tensor copy = tensor;
  copy.name = std::move(name);
  copy.dtype = dtype;
  return copy;
}

// `times` reads (or writes) of one tensor: each pass of a kernel over it moves it again.
void repeat(std::vector<Tensor>& tensors, const Tensor& tensor, int times) {
  for (int pass = 0; pass < times; ++pass) {
    tensors.push_back(tensor);
  }
}

}  // namespace

LossPasses loss_forward(LossKernels kernels, const Tensor& logits) {
  const Tensor wide = renamed(logits, "logits_fp32", DType::fp32);
  // What the backward pass reads: the softmax (single pass, Megatron) or PyTorch's
  // log-probabilities, fp32 either way.
  const Tensor kept = renamed(logits, "probabilities", DType::fp32);
  LossPasses passes;
  passes.reads.push_back(logits);
  passes.writes.push_back(kept);
  switch (kernels) {
    case LossKernels::single_pass:
      break;
    case LossKernels::torch:
      // logits.float(), then log_softmax's cunn_SoftMaxForward: max, sum of exp, write.
      passes.writes.push_back(wide);
      repeat(passes.reads, wide, 3);
      break;
    case LossKernels::megatron:
      // logits.float(); max; sub_; exp (out=); sum; div_ (megatron/core/tensor_parallel/
      // cross_entropy.py): the cast, three in-place passes and two reductions.
      passes.writes.push_back(wide);
      repeat(passes.reads, wide, 5);
      repeat(passes.writes, wide, 2);
      break;
  }
  passes.flops_per_element = kCrossEntropyFlops / static_cast<double>(passes.writes.size());
  return passes;
}

LossPasses loss_backward(LossKernels kernels, const Tensor& logits, DType gradient_dtype) {
  const Tensor kept = renamed(logits, "probabilities", DType::fp32);
  const Tensor wide_gradient = renamed(logits, "dlogits_fp32", DType::fp32);
  LossPasses passes;
  passes.writes.push_back(renamed(logits, "d" + logits.name, gradient_dtype));
  switch (kernels) {
    case LossKernels::single_pass:
      passes.reads.push_back(kept);
      break;
    case LossKernels::torch:
      // nll_loss's backward zero-fills the fp32 gradient; cunn_SoftMaxBackward reads it for
      // the row sums, then reads it and the log-probabilities and writes; then the cast back.
      passes.writes.push_back(wide_gradient);
      repeat(passes.reads, wide_gradient, 2);
      passes.reads.push_back(kept);
      passes.writes.push_back(wide_gradient);
      passes.reads.push_back(wide_gradient);
      break;
    case LossKernels::megatron:
      // grad_input.mul_(grad_output) on the kept softmax, then the cast back.
      passes.reads.push_back(kept);
      passes.writes.push_back(wide_gradient);
      passes.reads.push_back(wide_gradient);
      break;
  }
  passes.flops_per_element = kCrossEntropyBackwardFlops / static_cast<double>(passes.writes.size());
  return passes;
}

}  // namespace rsim
