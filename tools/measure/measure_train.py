#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time a training step's forward and backward passes of a Llama-shaped decoder on one GPU.

  python3 tools/measure/measure_train.py --out validation/measured/h200

writes under --out:

  train.csv    model,layers,batch,seq,measured_s        forward + backward of one microbatch
  kernels.csv  layers,batch,seq,kernel,count,device_s    the same pass under torch.profiler: the
                                                         GPU time of each kernel name, summed

The decoder has Llama 3 8B's shapes (tools/measure/measure_model.py) cut to --layers layers, bf16
parameters that require gradients, the LM head over every token and a cross-entropy loss in
fp32 (as Megatron-LM computes it), FlashAttention-2 through scaled_dot_product_attention. The
pass runs eagerly (no CUDA graph, as Megatron-LM and most training loops run), the gradients
freed before each pass; no optimizer step. Each time is the median of --repeats passes after
--warmup, timed with CUDA events around forward and backward.
"""

import argparse
import csv
import os
import sys

from cuda_timing import load_torch, median_seconds
from measure_model import LLAMA3_8B

CONFIGS = [(1, 4096), (2, 4096), (1, 8192)]  # batch, seq


class TrainModel:
    def __init__(self, torch, shape, layers):
        self.torch = torch
        self.s = shape
        h, hd = shape["hidden"], shape["head_dim"]
        qkv = (shape["heads"] + 2 * shape["kv_heads"]) * hd

        def weight(rows, cols):
            return (torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16) * 0.02
                    ).requires_grad_()

        def ones():
            return torch.ones(h, device="cuda", dtype=torch.bfloat16).requires_grad_()

        self.layers = [dict(wqkv=weight(qkv, h), wo=weight(h, shape["heads"] * hd),
                            w13=weight(2 * shape["ffn"], h), w2=weight(h, shape["ffn"]),
                            n1=ones(), n2=ones()) for _ in range(layers)]
        self.embed = weight(shape["vocab"], h)
        self.head = weight(shape["vocab"], h)
        self.norm = ones()

    def parameters(self):
        for layer in self.layers:
            yield from layer.values()
        yield from (self.embed, self.head, self.norm)

    def loss(self, ids, targets, batch, seq):
        torch, s = self.torch, self.s
        functional = torch.nn.functional
        hd, heads, kv = s["head_dim"], s["heads"], s["kv_heads"]
        x = functional.embedding(ids.view(-1), self.embed)
        for w in self.layers:
            y = functional.rms_norm(x, (s["hidden"],), w["n1"], 1e-5)
            qkv = (y @ w["wqkv"].t()).view(batch, seq, heads + 2 * kv, hd).transpose(1, 2)
            q, k, v = qkv[:, :heads], qkv[:, heads:heads + kv], qkv[:, heads + kv:]
            attn = functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                           enable_gqa=True)
            x = x + attn.transpose(1, 2).reshape(batch * seq, heads * hd) @ w["wo"].t()
            y = functional.rms_norm(x, (s["hidden"],), w["n2"], 1e-5)
            gate, up = (y @ w["w13"].t()).chunk(2, dim=-1)
            x = x + (functional.silu(gate) * up) @ w["w2"].t()
        x = functional.rms_norm(x, (s["hidden"],), self.norm, 1e-5)
        logits = x @ self.head.t()
        return functional.cross_entropy(logits.float(), targets.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for train.csv and kernels.csv")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch = load_torch("measure_train.py")
    if torch is None:
        return 2
    torch.manual_seed(0)
    model = TrainModel(torch, LLAMA3_8B, args.layers)
    os.makedirs(args.out, exist_ok=True)
    times, kernels = [], []
    for batch, seq in CONFIGS:
        ids = torch.randint(0, LLAMA3_8B["vocab"], (batch, seq), device="cuda")
        targets = torch.randint(0, LLAMA3_8B["vocab"], (batch, seq), device="cuda")

        def free_gradients():  # outside the timed region
            for parameter in model.parameters():
                parameter.grad = None

        def forward_backward():
            model.loss(ids, targets, batch, seq).backward()

        def step():
            free_gradients()
            forward_backward()

        seconds = median_seconds(torch, forward_backward, args.warmup, args.repeats,
                                 before=free_gradients)
        times.append(["llama3_8b", args.layers, batch, seq, f"{seconds:.9g}"])
        print(f"train {args.layers} layers batch {batch} seq {seq}: {seconds * 1e3:.3f} ms",
              file=sys.stderr, flush=True)
        activities = [torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as profile:
            step()
            torch.cuda.synchronize()
        for event in profile.key_averages():
            device_us = getattr(event, "self_device_time_total", 0) or 0
            if device_us > 0:
                kernels.append([args.layers, batch, seq, event.key, event.count,
                                f"{device_us * 1e-6:.9g}"])
        for name, header, rows in (
                ("train.csv", ["model", "layers", "batch", "seq", "measured_s"], times),
                ("kernels.csv", ["layers", "batch", "seq", "kernel", "count", "device_s"],
                 kernels)):
            with open(os.path.join(args.out, name), "w", newline="") as out:
                writer = csv.writer(out)
                writer.writerow(header)
                writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
