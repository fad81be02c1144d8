"""fusetune's best verified NCHW convolution against PyTorch's own, in one script on one GPU.

    python3 bench/bench_conv_nchw.py --fusetune build/fusetune [--json-dir DIR] [SPEC ...]

For each spec: `fusetune tune SPEC --force --json F` (the `cudnn.nchw` floor is the conv alone,
NCHW in and out, through the fastest verified legacy algorithm or graph-API engine
configuration), then PyTorch's F.conv2d on an NCHW tensor of the same shape with
torch.backends.cudnn.benchmark = True and TF32 allowed, without and with the bias, and
PyTorch's whole eager pipeline (conv + the spec's ops, when they are ones this script knows).
Prints a markdown table of medians (triton.testing.do_bench, L2 flushed between runs).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_timing import bench  # noqa: E402

DEFAULT = [
    "conv2d(n=128,c=16,h=192,w=192,k=64,r=3) | relu",
    "conv2d(n=256,c=8,h=128,w=128,k=64,r=3) | relu",
]


def conv_args(spec):
    m = re.search(r"conv2d\(([^)]*)\)", spec)
    kv = dict(p.split("=") for p in m.group(1).split(","))
    a = {k: kv[k] for k in kv}
    n, c, h, w, k, r = (int(a[x]) for x in ("n", "c", "h", "w", "k", "r"))
    s = int(a.get("s", r))
    if a.get("in", "nchw") != "nchw":
        sys.exit(f"{spec}: this script compares NCHW convolutions only")
    return n, c, h, w, k, r, s, int(a.get("stride", 1)), int(a.get("pad", 0)), int(a.get("dilation", 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fusetune", default="build/fusetune")
    ap.add_argument("--json-dir", default=".")
    ap.add_argument("specs", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    rows = []
    for i, spec in enumerate(args.specs):
        path = os.path.join(args.json_dir, f"conv-nchw-{i + 1}.json")
        subprocess.run([args.fusetune, "tune", spec, "--force", "--json", path], check=True, stdout=subprocess.DEVNULL)
        rep = json.load(open(path))
        floor = next(r for r in rep["results"] if r["name"] == "cudnn.nchw")
        n, c, h, w, k, r, s, stride, pad, dil = conv_args(spec)
        torch.manual_seed(0)
        x = torch.rand(n, c, h, w, device="cuda")
        wt = torch.rand(k, c, r, s, device="cuda") - 0.5
        b = torch.rand(k, device="cuda")
        conv = lambda: F.conv2d(x, wt, None, stride, pad, dil)  # noqa: E731
        conv_b = lambda: F.conv2d(x, wt, b, stride, pad, dil)  # noqa: E731
        whole = (lambda: F.relu(F.conv2d(x, wt, b, stride, pad, dil))) if spec.rstrip().endswith("| relu") else None
        with torch.no_grad():
            t_conv = bench(conv)
            t_conv_b = bench(conv_b)
            t_whole = bench(whole) if whole else float("nan")
            t_conv2 = bench(conv)  # again: drift check
        own = floor["time_ms"]["median"]
        rows.append((spec, own, floor.get("cudnn_algo") or "", t_conv, t_conv2, t_conv_b, t_whole,
                     rep["winner"]["name"] if rep.get("winner") else "-",
                     rep["winner"]["time_ms"]["median"] if rep.get("winner") else float("nan")))
    print("\n| problem | fusetune best NCHW conv ms | its choice | PyTorch NCHW conv ms (again) | PyTorch conv+bias ms "
          "| PyTorch eager pipeline ms | fusetune / PyTorch conv | fusetune winner | winner ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec, own, algo, tc, tc2, tcb, tw, wname, wms in rows:
        print(f"| `{spec}` | {own:.3f} | {algo} | {tc:.3f} ({tc2:.3f}) | {tcb:.3f} | {tw:.3f} | {own / tc:.2f} | "
              f"{wname} | {wms:.3f} |")


if __name__ == "__main__":
    main()
