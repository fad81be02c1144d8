#!/usr/bin/env python3
"""PyTorch's own fp32 error for the epilogue's ops, measured the way fusetune's renderings are
(tests/gpu_op_math_test.cpp): the same input sweep (reference/op_sweep.cpp: every exponent of both
signs, PER_EXPONENT mantissas each, the specials and branch points), torch's CUDA op in fp32
against the float64 value of the op, in ulps of the result (results >= 2^-126), and below 2^-126
in units of 2^-149. Prints a markdown table. Run on the GPU machine:
    python3 bench/op_math/op_accuracy_torch.py [--per-exponent 16384]
"""
import argparse
import math

import torch
import torch.nn.functional as F

BRANCH = [0.0, 0.5, 0.55, 1.0, 2.0, 3.0, 6.0, 8.0, 9.01, 10.0, 15.0, 20.0, 30.0, 87.33, 88.72, 103.97,
          1e-3, 1e-7, 1e-20, 1e20, 3.92, 5.0, 0.3, 100.0]


def sweep(per_exponent):
    """The inputs of reference::op_sweep_inputs, in the same order."""
    span = 1 << 23
    step = span // per_exponent
    j = torch.arange(per_exponent, dtype=torch.int64)
    m = j * step + (j * 2654435761) % step
    bits = []
    for sign in (0, 1):
        for e in range(255):
            bits.append((sign << 31) | (e << 23) | m)
            bits.append(torch.tensor([(sign << 31) | (e << 23) | (span - 1)]))
    xs = torch.cat(bits).to(torch.int32 if False else torch.int64)
    xs = (xs & 0xFFFFFFFF).to(torch.int64)
    xs = torch.where(xs >= 2**31, xs - 2**32, xs).to(torch.int32).view(torch.float32)
    extra = []
    for s in (1.0, -1.0):
        extra += [s * math.inf, s * 3.4028234663852886e38, s * 1.401298464324817e-45]
        for b in BRANCH:
            x = torch.tensor(s * b, dtype=torch.float32)
            for _ in range(8):
                x = torch.nextafter(x, torch.tensor(-math.inf))
            for _ in range(17):
                extra.append(float(x))
                x = torch.nextafter(x, torch.tensor(math.inf))
    extra.append(math.nan)
    return torch.cat([xs, torch.tensor(extra, dtype=torch.float32)])


def ref_gelu(x):
    return 0.5 * x * torch.special.erfc(-x / math.sqrt(2.0))


def ref_gelu_tanh(x):
    k = math.sqrt(2.0 / math.pi)
    return x * torch.sigmoid(2.0 * k * (x + 0.044715 * x * x * x))


def softplus1(x):
    return torch.clamp_min(x, 0.0) + torch.log1p(torch.exp(-x.abs()))


# name: (torch fp32 op, float64 reference)
OPS = {
    "gelu": (F.gelu, ref_gelu),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), ref_gelu_tanh),
    "tanh": (torch.tanh, torch.tanh),
    "sigmoid": (torch.sigmoid, lambda x: 1.0 / (1.0 + torch.exp(-x))),
    "silu": (F.silu, lambda x: x / (1.0 + torch.exp(-x))),
    "mish": (F.mish, lambda x: x * torch.tanh(softplus1(x))),
    "hardswish": (F.hardswish, lambda x: x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0),
    "hardsigmoid": (F.hardsigmoid, lambda x: torch.clamp(x + 3.0, 0.0, 6.0) / 6.0),
    "softplus": (F.softplus, lambda x: torch.where(x > 20.0, x, softplus1(x))),
    "exp": (torch.exp, torch.exp),
    "log": (torch.log, torch.log),
    "sqrt": (torch.sqrt, torch.sqrt),
    "div(0.3)": (lambda x: x / 0.3, lambda x: x / float(torch.tensor(0.3, dtype=torch.float32))),
}


def ulp_errors(got, ref):
    got = got.double()
    finite = torch.isfinite(ref) & (ref.abs() <= 3.4028234663852886e38) & torch.isfinite(got)
    a = ref.abs()
    ulp = torch.where(a >= 2.0**-126, torch.ldexp(torch.ones_like(a), torch.floor(torch.log2(a)).to(torch.int32) - 23),
                      torch.full_like(a, 2.0**-149))
    err = (got - ref).abs() / ulp
    normal = finite & (a >= 2.0**-126)
    tiny = finite & (a < 2.0**-126)
    return err, normal, tiny


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-exponent", type=int, default=16384)
    args = ap.parse_args()
    x32 = sweep(args.per_exponent).cuda()
    x64 = x32.double()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {x32.numel()} inputs per op\n")
    print("| op | max ulp (results >= 2^-126) | at x | max below 2^-126 (units of 2^-149) |")
    print("| --- | --- | --- | --- |")
    for name, (f32, f64) in OPS.items():
        got = f32(x32)
        ref = f64(x64)
        err, normal, tiny = ulp_errors(got, ref)
        en = torch.where(normal, err, torch.zeros_like(err))
        et = torch.where(tiny, err, torch.zeros_like(err))
        i = int(torch.argmax(en))
        print(f"| {name} | {float(en[i]):.2f} | {float(x32[i]):.9g} | {float(et.max()):.1f} |")


if __name__ == "__main__":
    main()
