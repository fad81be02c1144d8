"""Where PyTorch eager spends its time on the presets: every CUDA kernel of one forward, with its
median duration from the profiler, so fusetune's `unfused` baseline (which stands in for eager)
can be compared step by step (conv, bias add, each op, the reduction).

    python3 bench/eager_profile.py [--math tf32|fp32] [--benchmark 0|1] [--json FILE]

--benchmark sets torch.backends.cudnn.benchmark (KernelBench leaves it False; bench_presets.py
sets it True). Prints a markdown table per preset: kernel name (shortened), calls per forward,
median us.
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(__file__))
from bench_presets import PRESETS  # noqa: E402


def profile_model(model, x, iters):
    with torch.no_grad():
        for _ in range(5):
            model(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                model(x)
            torch.cuda.synchronize()
    per_kernel = defaultdict(list)
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            per_kernel[ev.name].append(ev.device_time if hasattr(ev, "device_time") else ev.cuda_time)
    rows = []
    for name, times in per_kernel.items():
        rows.append({"kernel": name, "calls": len(times) / iters, "median_us": statistics.median(times)})
    rows.sort(key=lambda r: -r["median_us"] * r["calls"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--math", default="tf32", choices=["tf32", "fp32"])
    ap.add_argument("--benchmark", type=int, default=0)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = args.math == "tf32"
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    out = {}
    for name, (cls, shape) in PRESETS.items():
        torch.manual_seed(0)
        model = cls().cuda().eval()
        x = torch.rand(*shape, device="cuda")
        rows = profile_model(model, x, args.iters)
        out[name] = rows
        total = sum(r["median_us"] * r["calls"] for r in rows)
        print(f"\n### {name} eager, {args.math}, cudnn.benchmark={bool(args.benchmark)}: kernels sum {total / 1000:.3f} ms")
        print("| kernel | calls | median us |\n|---|---|---|")
        for r in rows:
            print(f"| {r['kernel'][:110]} | {r['calls']:.0f} | {r['median_us']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
