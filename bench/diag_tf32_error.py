"""How large is a TF32 convolution's error, next to the bound fusetune derives for it?

    python3 bench/diag_tf32_error.py [--json FILE]

For each problem: x ~ U(0,1) (torch.rand), weights and bias with PyTorch's Conv2d init. The conv
runs through cuDNN in TF32 (NCHW and channels-last) and in float64; A = conv(|x|, |w|) and
B = conv(x^2, w^2) in float64. Printed per layout:
  max_err/A     max over elements of |y_tf32 - y64| / A, in units of u = 2^-11 (the forward
                error bound with inputs rounded to TF32 is about 2u + CRS*2^-24)
  rel_l2        ||y_tf32 - y64|| / ||y64||
  model_l2      sqrt(sum u^2 (4 y^2 + 2/3 B)) / ||y64||: the expected rel-L2 error if inputs are
                truncated (round to nearest gives sqrt(2/3 B) alone)
  bias          <err, y> / <y, y> in units of u: -2 for truncation toward zero, 0 for rounding
It answers whether cuDNN's TF32 kernels round or truncate, and how far the bound sits above
the real error (the margin a correct TF32 variant keeps and a planted bug must exceed).
"""
import argparse
import json

import torch
import torch.nn as nn

U = 2.0 ** -11

PROBLEMS = [
    # (name, n, c, h, w, k, r)
    ("kb31-n4", 4, 64, 128, 128, 128, 3),
    ("kb32-n2", 2, 64, 256, 256, 128, 3),
    ("c8", 16, 8, 128, 128, 64, 3),
    ("c16", 8, 16, 192, 192, 64, 3),
    ("c256-r1", 8, 256, 56, 56, 256, 1),
    ("c3-r7", 8, 3, 224, 224, 64, 7),
]


def one(name, n, c, h, w, k, r, layout):
    torch.manual_seed(20261130)
    conv = nn.Conv2d(c, k, r).cuda()
    x = torch.rand(n, c, h, w, device="cuda")
    wt = conv.weight.detach()
    if layout == "nhwc":
        xin, win = x.to(memory_format=torch.channels_last), wt.to(memory_format=torch.channels_last)
    else:
        xin, win = x, wt
    torch.backends.cudnn.allow_tf32 = True
    y = torch.nn.functional.conv2d(xin, win).double()
    x64, w64 = x.double(), wt.double()
    y64 = torch.nn.functional.conv2d(x64, w64)
    a = torch.nn.functional.conv2d(x64.abs(), w64.abs())
    b = torch.nn.functional.conv2d(x64 * x64, w64 * w64)
    err = y - y64
    ratio = (err.abs() / a).max().item() / U
    rel_l2 = (err.norm() / y64.norm()).item()
    model = (torch.sqrt((U * U * (4 * y64 * y64 + (2.0 / 3.0) * b)).sum()) / y64.norm()).item()
    model_rn = (torch.sqrt((U * U * (2.0 / 3.0) * b).sum()) / y64.norm()).item()
    bias = ((err * y64).sum() / (y64 * y64).sum()).item() / U
    return {"problem": name, "layout": layout, "max_err_over_A_u": ratio, "max_abs": err.abs().max().item(),
            "rel_l2": rel_l2, "model_l2_trunc": model, "model_l2_rn": model_rn, "bias_u": bias,
            "A_max": a.max().item()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print("| problem | layout | max err/A (u) | max abs | rel L2 | model L2 trunc | model L2 RN | bias (u) |")
    print("|---|---|---|---|---|---|---|---|")
    for p in PROBLEMS:
        for layout in ("nchw", "nhwc"):
            r = one(*p, layout)
            rows.append(r)
            print(f"| {r['problem']} | {layout} | {r['max_err_over_A_u']:.3f} | {r['max_abs']:.3g} | {r['rel_l2']:.3g} | "
                  f"{r['model_l2_trunc']:.3g} | {r['model_l2_rn']:.3g} | {r['bias_u']:.3f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
