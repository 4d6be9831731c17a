# SPDX-License-Identifier: MIT
"""What the measurement scripts share: PyTorch with a CUDA device, and a median time by CUDA events."""

import statistics
import sys


def load_torch(script):
    """PyTorch, or None after saying why (not installed, or no CUDA device)."""
    try:
        import torch
    except ImportError:
        print(f"{script}: PyTorch is not installed", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA device", file=sys.stderr)
        return None
    return torch


def median_seconds(torch, fn, warmup, repeats, before=None):
    """Median seconds of fn() over `repeats` runs after `warmup`, each timed by CUDA events around
    fn() alone; before() (flushing the L2, freeing gradients, a synchronize) runs untimed first."""
    for _ in range(warmup):
        if before is not None:
            before()
        fn()
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)
