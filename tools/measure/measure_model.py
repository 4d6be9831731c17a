#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time whole-model decode steps and prefills of a Llama-shaped decoder on one NVIDIA GPU.

  python3 tools/measure/measure_model.py --out validation/measured/h200

writes model.csv under --out:

  model,phase,batch,context,tokens,measured_s

one row per configuration: `phase` decode is one decode step of `batch` sequences, each with
`context` tokens already in its KV cache (the step reads the cache of context + 1 tokens);
prefill is one forward pass over batch × tokens prompt tokens (causal), the LM head applied to
the last token of each sequence only (as vLLM and TensorRT-LLM do).

The decoder is Llama 3 8B's shapes (hidden 4096, 32 layers, 32 query and 8 KV heads of 128,
SwiGLU 14336, vocabulary 128,256), bf16 weights drawn at random (the time of a dense kernel does
not depend on the values), written in plain PyTorch: fused RMSNorm (F.rms_norm), one fused QKV
and one fused gate+up GEMM (cuBLAS), FlashAttention through scaled_dot_product_attention, SiLU,
the gate product and each residual add as their own elementwise kernels. No rotary embedding
(elementwise, well under 1 % of a step). The step is captured once in a CUDA graph and replayed,
so host launch overhead is out and what remains is the kernels and their in-graph gaps: the
median of --repeats replays after --warmup, timed with CUDA events. --eager launches the same
kernels from Python one by one instead (model_eager.csv): the host's launch rate shows where
the kernels are shorter than it.
"""

import argparse
import csv
import os
import sys

from cuda_timing import load_torch, median_seconds

LLAMA3_8B = dict(hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                 vocab=128256)
# phase, batch, context (decode) or prompt tokens (prefill)
CONFIGS = [("decode", 1, 1024), ("decode", 16, 1024), ("decode", 64, 1024),
           ("decode", 1, 8192), ("decode", 32, 4096),
           ("prefill", 1, 512), ("prefill", 1, 2048), ("prefill", 4, 2048),
           ("prefill", 1, 8192)]


class Decoder:
    def __init__(self, torch, shape, fp8=False):
        self.torch = torch
        self.s = shape
        self.fp8 = fp8
        dt = torch.bfloat16
        h, hd = shape["hidden"], shape["head_dim"]
        qkv = (shape["heads"] + 2 * shape["kv_heads"]) * hd

        def weight(rows, cols):
            return torch.randn(rows, cols, device="cuda", dtype=dt) * 0.02

        self.layers = [dict(wqkv=weight(qkv, h), wo=weight(h, shape["heads"] * hd),
                            w13=weight(2 * shape["ffn"], h), w2=weight(h, shape["ffn"]),
                            n1=torch.ones(h, device="cuda", dtype=dt),
                            n2=torch.ones(h, device="cuda", dtype=dt))
                       for _ in range(shape["layers"])]
        if fp8:  # the layers' weights stored in e4m3 (a static scale of 1), the head in bf16
            for layer in self.layers:
                for key in ("wqkv", "wo", "w13", "w2"):
                    layer[key] = layer[key].to(torch.float8_e4m3fn)
            self.one = torch.tensor(1.0, device="cuda")
        self.embed = weight(shape["vocab"], h)
        self.head = weight(shape["vocab"], h)
        self.norm = torch.ones(h, device="cuda", dtype=dt)

    def mm(self, x, w):
        """x · wᵀ: cuBLAS bf16, or with --fp8 x cast to e4m3 (one kernel) and cuBLASLt's FP8 GEMM
        with a bf16 output, as TensorRT-LLM's FP8 recipe runs the linear layers."""
        if not self.fp8:
            return x @ w.t()
        torch = self.torch
        return torch._scaled_mm(x.to(torch.float8_e4m3fn), w.t(), scale_a=self.one,
                                scale_b=self.one, out_dtype=torch.bfloat16)

    def layer(self, w, x, batch, tokens, cache, position):
        """x: [batch·tokens, hidden]. cache: (k, v) [batch, kv_heads, capacity, head_dim] or None."""
        torch, s = self.torch, self.s
        functional = torch.nn.functional
        hd, heads, kv = s["head_dim"], s["heads"], s["kv_heads"]
        y = functional.rms_norm(x, (s["hidden"],), w["n1"], 1e-5)
        qkv = self.mm(y, w["wqkv"]).view(batch, tokens, heads + 2 * kv, hd).transpose(1, 2)
        q, k, v = qkv[:, :heads], qkv[:, heads:heads + kv], qkv[:, heads + kv:]
        if cache is not None:  # decode: append this token's K/V, attend over the whole cache
            cache[0][:, :, position:position + 1].copy_(k)
            cache[1][:, :, position:position + 1].copy_(v)
            k, v = cache[0][:, :, :position + 1], cache[1][:, :, :position + 1]
        attn = functional.scaled_dot_product_attention(q, k, v, is_causal=cache is None,
                                                       enable_gqa=True)
        x = x + self.mm(attn.transpose(1, 2).reshape(batch * tokens, heads * hd), w["wo"])
        y = functional.rms_norm(x, (s["hidden"],), w["n2"], 1e-5)
        gate, up = self.mm(y, w["w13"]).chunk(2, dim=-1)
        return x + self.mm(functional.silu(gate) * up, w["w2"])

    def step(self, ids, batch, tokens, caches, position):
        torch = self.torch
        x = self.embed[ids.view(-1)]
        for index, w in enumerate(self.layers):
            x = self.layer(w, x, batch, tokens, caches[index] if caches else None, position)
        last = x.view(batch, tokens, -1)[:, -1]
        last = torch.nn.functional.rms_norm(last, (self.s["hidden"],), self.norm, 1e-5)
        return last @ self.head.t()


def time_eager(torch, fn, warmup, repeats):
    """The same step launched op by op from Python (no CUDA graph)."""
    return median_seconds(torch, fn, warmup, repeats, before=torch.cuda.synchronize)


def time_graph(torch, fn, warmup, repeats):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm cuBLAS / SDPA workspaces outside the capture
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    seconds = median_seconds(torch, graph.replay, warmup, repeats)
    del graph
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory for model.csv")
    parser.add_argument("--eager", action="store_true",
                        help="launch the kernels from Python instead of replaying a CUDA graph; "
                             "writes model_eager.csv")
    parser.add_argument("--fp8", action="store_true",
                        help="the layers' GEMMs in FP8 (e4m3 weights, activations cast before "
                             "each GEMM, bf16 out); attention, KV cache and LM head stay bf16; "
                             "writes model_fp8.csv")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch = load_torch("measure_model.py")
    if torch is None:
        return 2
    torch.manual_seed(0)
    shape = LLAMA3_8B
    decoder = Decoder(torch, shape, args.fp8)
    rows = []
    os.makedirs(args.out, exist_ok=True)
    name = "model" + ("_fp8" if args.fp8 else "") + ("_eager" if args.eager else "")
    path = os.path.join(args.out, name + ".csv")
    timer = time_eager if args.eager else time_graph
    for phase, batch, length in CONFIGS:
        with torch.no_grad():
            if phase == "decode":
                capacity = length + 1
                caches = [tuple(torch.randn(batch, shape["kv_heads"], capacity, shape["head_dim"],
                                            device="cuda", dtype=torch.bfloat16)
                                for _ in range(2)) for _ in range(shape["layers"])]
                ids = torch.zeros(batch, 1, dtype=torch.long, device="cuda")
                seconds = timer(
                    torch, lambda: decoder.step(ids, batch, 1, caches, length), args.warmup,
                    args.repeats)
                del caches
            else:
                ids = torch.zeros(batch, length, dtype=torch.long, device="cuda")
                seconds = timer(
                    torch, lambda: decoder.step(ids, batch, length, None, 0), args.warmup,
                    args.repeats)
        torch.cuda.empty_cache()
        rows.append(["llama3_8b", phase, batch, length if phase == "decode" else 0,
                     1 if phase == "decode" else length, f"{seconds:.9g}"])
        print(f"{phase} batch {batch} {'context' if phase == 'decode' else 'tokens'} {length}: "
              f"{seconds * 1e3:.3f} ms", file=sys.stderr, flush=True)
        with open(path, "w", newline="") as out:  # rewritten each row: a cut-off run keeps rows
            writer = csv.writer(out)
            writer.writerow(["model", "phase", "batch", "context", "tokens", "measured_s"])
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
