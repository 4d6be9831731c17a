#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure what rsim's expected time needs on one NVIDIA GPU, as CSVs rsim reads.

Runs on a machine with PyTorch and CUDA (an H200 is the one to expect):

  python3 tools/measure/measure_gpu.py --hardware h200_sxm --out validation/measured/h200
  torchrun --nproc-per-node 8 tools/measure/measure_gpu.py --hardware h200_sxm \\
      --out validation/measured/h200 --only nccl

and writes under --out:

  gemm.csv        hardware,b,d,f,dtype,measured_s      what `rsim calibrate` reads: one GEMM
                  X[b,d]·W[d,f] per row over a grid of shapes (wave and tile quantization at
                  small sizes, the peak fraction at large ones, GEMVs for the HBM fraction) in
                  bf16 and fp8 (torch._scaled_mm, e4m3 in, bf16 out)
  attention.csv   batch,seq,heads,head_dim,causal,pass,measured_s,tflops
                  FlashAttention through torch.nn.functional.scaled_dot_product_attention
                  (the flash backend), forward and forward+backward; with
                  --attention-backend cudnn, cuDNN's fused attention into attention_cudnn.csv
  hbm.csv         kind,bytes,measured_s,bytes_per_s    kind copy: a device-to-device copy (bytes
                  read + written); read: a sum over the bytes (read only, a GEMV's pattern)
  nccl.csv        collective,bytes,devices,measured_s,bus_bytes_per_s
                  torch.distributed all-reduce / all-gather / reduce-scatter under torchrun

Each time is the median of --repeats runs after --warmup, timed with CUDA events, with the L2
cache flushed before each run (a 256 MiB write), as stas00/ml-engineering's mamf-finder does.
The GEMM CSV goes straight into `rsim calibrate FILE` (docs/design/expected.md); the rows that
become validation cases name this script's command line as their source.

--dry-run needs no GPU or PyTorch: it writes gemm.csv's grid with an empty measured_s column,
so the grid can be checked against `rsim matmul` (the test tools.measure.grid does).
"""

import argparse
import csv
import os
import sys

from cuda_timing import load_torch, median_seconds

# b (tokens) × d × f: GEMVs and small batches (HBM-bound), multiples and non-multiples of the
# tile sizes and of the SM count's waves, and the large square shapes that reach the peak.
GEMM_TOKENS = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
GEMM_WIDTHS = [(1024, 1024), (4096, 4096), (4096, 14336), (14336, 4096), (8192, 8192),
               (8192, 28672)]
GEMM_DTYPES = ["bf16", "fp8"]
# Squares (the OpenXLA sm_90 table's shapes) and skinny shapes, in bf16: launch-bound to peak.
GEMM_SHAPES = [(n, n, n, "bf16") for n in (256, 512, 1024, 2048, 4096, 8192, 16384)] + [
    (4096, 4096, 256, "bf16"), (4096, 256, 4096, "bf16"), (2048, 13312, 2048, "bf16"),
    (1024, 14336, 9216, "fp8"), (4096, 16384, 7168, "fp8"), (64, 7168, 2112, "fp8")]
ATTENTION = [  # batch, seq, heads, head_dim, causal
    (16, 512, 16, 128, True), (4, 2048, 16, 128, True), (1, 8192, 16, 128, True),
    (1, 16384, 16, 128, False), (16, 512, 32, 64, True), (1, 16384, 8, 256, False)]
HBM_BYTES = [1 << 20, 16 << 20, 256 << 20, 2 << 30]
NCCL_BYTES = [1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]


def gemm_grid():
    for dtype in GEMM_DTYPES:
        for b in GEMM_TOKENS:
            for d, f in GEMM_WIDTHS:
                yield b, d, f, dtype
    yield from GEMM_SHAPES


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows)", file=sys.stderr)


class Timer:
    """Median seconds of fn() over repeats, L2 flushed before each, CUDA events."""

    def __init__(self, torch, warmup, repeats):
        self.torch = torch
        self.warmup = warmup
        self.repeats = repeats
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def __call__(self, fn):
        return median_seconds(self.torch, fn, self.warmup, self.repeats, before=self.flush.zero_)


def measure_gemms(torch, timer, hardware):
    rows = []
    for b, d, f, dtype in gemm_grid():
        x = torch.randn(b, d, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(f, d, device="cuda", dtype=torch.bfloat16)
        if dtype == "bf16":
            def fn():
                return torch.mm(x, w.t())
        else:
            if not hasattr(torch, "_scaled_mm"):
                continue
            x8 = x.to(torch.float8_e4m3fn)
            w8 = w.to(torch.float8_e4m3fn)
            one = torch.tensor(1.0, device="cuda")

            def fn():
                return torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16)
        try:
            seconds = timer(fn)
        except RuntimeError as error:  # a shape this PyTorch's kernels refuse: skip it, say so
            print(f"gemm {b}x{d}x{f} {dtype}: {error}", file=sys.stderr)
            continue
        rows.append([hardware, b, d, f, dtype, f"{seconds:.9g}"])
        print(f"gemm {b}x{d}x{f} {dtype}: {seconds * 1e6:.2f} us, "
              f"{2 * b * d * f / seconds / 1e12:.1f} TFLOP/s", file=sys.stderr)
    return rows


def measure_attention(torch, timer, backend_name="flash"):
    functional = torch.nn.functional
    backends = {"flash": torch.nn.attention.SDPBackend.FLASH_ATTENTION,
                "cudnn": torch.nn.attention.SDPBackend.CUDNN_ATTENTION}
    rows = []
    for batch, seq, heads, head_dim, causal in ATTENTION:
        shape = (batch, heads, seq, head_dim)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        # FLOPs of FlashAttention's benchmark: 4·b·s²·h·d forward (halved when causal), 2.5× that
        # for the backward pass.
        forward_flops = 4 * batch * seq * seq * heads * head_dim / (2 if causal else 1)
        with torch.nn.attention.sdpa_kernel(backends[backend_name]):
            def forward():
                return functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            out = forward()
            grad = torch.randn_like(out)

            def forward_backward():
                forward().backward(grad)
            for name, fn, flops in (("forward", forward, forward_flops),
                                    ("forward_backward", forward_backward, 3.5 * forward_flops)):
                seconds = timer(fn)
                rows.append([batch, seq, heads, head_dim, int(causal), name, f"{seconds:.9g}",
                             f"{flops / seconds / 1e12:.1f}"])
    return rows


def measure_hbm(torch, timer):
    rows = []
    for size in HBM_BYTES:
        source = torch.empty(size, dtype=torch.uint8, device="cuda")
        target = torch.empty_like(source)
        seconds = timer(lambda: target.copy_(source))
        rows.append(["copy", 2 * size, f"{seconds:.9g}", f"{2 * size / seconds:.6g}"])  # r + w
        del target
        # Read only (a GEMV's pattern): a sum over the bytes as bf16, one scalar written.
        values = source.view(torch.bfloat16).normal_()
        seconds = timer(lambda: values.sum(dtype=torch.float32))
        rows.append(["read", size, f"{seconds:.9g}", f"{size / seconds:.6g}"])
    return rows


def measure_nccl(torch, timer):
    import torch.distributed as dist
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    devices = dist.get_world_size()
    rows = []
    # Bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md): all-reduce 2(n−1)/n of the
    # bytes per second, all-gather and reduce-scatter (n−1)/n.
    for name, factor in (("all_reduce", 2.0), ("all_gather", 1.0), ("reduce_scatter", 1.0)):
        for size in NCCL_BYTES:
            elements = size // 2
            data = torch.empty(elements, dtype=torch.bfloat16, device="cuda")
            shard = torch.empty(elements // devices, dtype=torch.bfloat16, device="cuda")
            if name == "all_reduce":
                def fn():
                    dist.all_reduce(data)
            elif name == "all_gather":
                def fn():
                    dist.all_gather_into_tensor(data, shard)
            else:
                def fn():
                    dist.reduce_scatter_tensor(shard, data)
            seconds = timer(fn)
            bus = factor * (devices - 1) / devices * size / seconds
            rows.append([name, size, devices, f"{seconds:.9g}", f"{bus:.6g}"])
    dist.destroy_process_group()
    return rows if rank == 0 else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hardware", required=True,
                        help="the rsim hardware preset the GPU is (e.g. h200_sxm): gemm.csv's "
                             "hardware column")
    parser.add_argument("--out", required=True, help="directory for the CSVs")
    parser.add_argument("--only", choices=["gemm", "attention", "hbm", "nccl"], action="append",
                        help="measure only these (repeatable); default: all but nccl, which "
                             "needs torchrun")
    parser.add_argument("--attention-backend", choices=["flash", "cudnn"], default="flash",
                        help="scaled_dot_product_attention's backend: flash (FlashAttention-2) "
                             "or cudnn (cuDNN's fused attention, Hopper kernels); cudnn rows go "
                             "to attention_cudnn.csv")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--dry-run", action="store_true",
                        help="write gemm.csv's grid with no times; needs no GPU")
    args = parser.parse_args()
    gemm_header = ["hardware", "b", "d", "f", "dtype", "measured_s"]
    if args.dry_run:
        write_csv(os.path.join(args.out, "gemm.csv"), gemm_header,
                  [[args.hardware, b, d, f, dtype, ""] for b, d, f, dtype in gemm_grid()])
        return 0
    torch = load_torch("measure_gpu.py (--dry-run needs no GPU)")
    if torch is None:
        return 2
    only = args.only or ["gemm", "attention", "hbm"]
    timer = Timer(torch, args.warmup, args.repeats)
    if "gemm" in only:
        write_csv(os.path.join(args.out, "gemm.csv"), gemm_header,
                  measure_gemms(torch, timer, args.hardware))
    if "attention" in only:
        name = "attention.csv" if args.attention_backend == "flash" else "attention_cudnn.csv"
        write_csv(os.path.join(args.out, name),
                  ["batch", "seq", "heads", "head_dim", "causal", "pass", "measured_s",
                   "tflops"], measure_attention(torch, timer, args.attention_backend))
    if "hbm" in only:
        write_csv(os.path.join(args.out, "hbm.csv"), ["kind", "bytes", "measured_s", "bytes_per_s"],
                  measure_hbm(torch, timer))
    if "nccl" in only:
        rows = measure_nccl(torch, timer)
        if rows:
            write_csv(os.path.join(args.out, "nccl.csv"),
                      ["collective", "bytes", "devices", "measured_s", "bus_bytes_per_s"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
