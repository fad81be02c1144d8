"""Writes tests/data/model_reference_torch.txt: problems of model v2 (issue 43) on small shapes,
with seeded fp32-exact inputs and PyTorch's float64 answer for each, which
tests/model_reference_test.cpp (ModelReferenceTorch) checks the CPU model reference against.
CI has no torch, so the answers are committed; regenerate them where torch is installed:

    python3 python/tests/check_model_reference.py            # rewrite the file
    python3 python/tests/check_model_reference.py --check    # compare with the committed file

Without torch it says so and exits 0. Not a pytest module (its name does not start with test_).

Each case gives the spec text, the shapes of its parameters and extra inputs in the order the
spec introduces them (param[k], param[1] and each affine norm's weight then bias; input1, ...),
and the same computation in torch. Scalars in the specs are exact in fp32, as the reference
applies them as fp32 numbers."""
import argparse
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("check_model_reference.py: skipped, needs torch and numpy")
    sys.exit(0)

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "model_reference_torch.txt")


def tup(v):
    return "x".join(str(i) for i in v) if isinstance(v, tuple) else str(v)


class Conv:
    """A conv main operator: spec text, tensor shapes and the torch call."""

    def __init__(self, kind, bias=True, **kw):
        self.kind, self.bias, self.kw = kind, bias, kw
        three = "3d" in kind
        self.transposed = "transpose" in kind
        nd = 3 if three else 2
        r = kw["r"]
        win = ((kw.get("t", r),) if three else ()) + (r, kw.get("s", r))
        size = ((kw["d"],) if three else ()) + (kw["h"], kw["w"])

        def each(key, default):
            v = kw.get(key, default)
            return v if isinstance(v, tuple) else (v,) * nd

        self.stride, self.pad = each("stride", 1), each("pad", 0)
        self.out_pad, self.dil, self.groups = each("out_pad", 0), each("dilation", 1), kw.get("groups", 1)
        n, c, k, g = kw["n"], kw["c"], kw["k"], self.groups
        self.shapes = [(n, c) + size, ((c, k // g) if self.transposed else (k, c // g)) + win, (k,) if bias else None]

    def spec(self):
        keys = ",".join(f"{k}={tup(v)}" for k, v in self.kw.items())
        return f"{self.kind}({keys}{'' if self.bias else ',bias=false'})"

    def __call__(self, x, w, b):
        if self.transposed:
            f = F.conv_transpose3d if "3d" in self.kind else F.conv_transpose2d
            return f(x, w, b, self.stride, self.pad, self.out_pad, self.groups, self.dil)
        f = F.conv3d if "3d" in self.kind else F.conv2d
        return f(x, w, b, self.stride, self.pad, self.dil, self.groups)


class Linear:
    def __init__(self, m, k, n, bias=True):
        self.m, self.k, self.n, self.bias = m, k, n, bias
        self.shapes = [(m, k), (n, k), (n,) if bias else None]

    def spec(self):
        return f"linear(m={self.m},k={self.k},n={self.n}{'' if self.bias else ',bias=false'})"

    def __call__(self, x, w, b):
        return F.linear(x, w, b)


class Matmul:
    def __init__(self, m, k, n, batch=1, trans_a=False, trans_b=False):
        self.m, self.k, self.n, self.batch, self.ta, self.tb = m, k, n, batch, trans_a, trans_b
        lead = (batch,) if batch > 1 else ()
        self.shapes = [lead + ((k, m) if trans_a else (m, k)), lead + ((n, k) if trans_b else (k, n)), None]

    def spec(self):
        s = f"matmul(batch={self.batch},m={self.m},k={self.k},n={self.n}"
        return s + (",trans_a=true" if self.ta else "") + (",trans_b=true" if self.tb else "") + ")"

    def __call__(self, a, b, _):
        return torch.matmul(a.transpose(-1, -2) if self.ta else a, b.transpose(-1, -2) if self.tb else b)


def bn(y, w=None, b=None, eps=1e-5):
    return F.batch_norm(y, None, None, w, b, training=True, eps=eps)


def residual(y, other):
    """y / (y.sum(1) - y), then the maximum with `other`: a value read after a reduction of it."""
    return torch.maximum(y / (y.sum(1, keepdim=True) - y), other)


# (name, main, epilogue text, param shapes, input shapes, torch epilogue f(y, params, inputs))
CASES = [
    ("conv3d_groups_dilation", Conv("conv3d", n=2, c=4, d=5, h=4, w=6, k=6, r=3, stride=(1, 2, 1),
                                    pad=(1, 0, 1), dilation=(2, 1, 1), groups=2), "", [], [], lambda y, P, I: y),
    ("conv3d_group_norm_mean", Conv("conv3d", n=2, c=2, d=4, h=4, w=4, k=4, r=3),
     "| group_norm(2) | reduce_mean(1,2,3,4,keepdim=false)", [(1, 4, 1, 1, 1)] * 2, [],
     lambda y, P, I: F.group_norm(y, 2, P[0].flatten(), P[1].flatten()).mean((1, 2, 3, 4))),
    ("conv_transpose2d_groups", Conv("conv_transpose2d", n=2, c=4, h=3, w=4, k=6, r=3, s=2, stride=2, pad=1,
                                     out_pad=1, groups=2), "", [], [], lambda y, P, I: y),
    ("conv_transpose2d_dilation_nobias", Conv("conv_transpose2d", bias=False, n=1, c=3, h=4, w=3, k=2, r=2,
                                              stride=(3, 2), pad=(1, 0), out_pad=(1, 0), dilation=2), "", [], [],
     lambda y, P, I: y),
    ("conv_transpose2d_pool_chain", Conv("conv_transpose2d", n=1, c=4, h=3, w=3, k=4, r=3, stride=2, pad=1,
                                         out_pad=1, groups=2),
     "| max_pool2d(2) | hardtanh | reduce_mean(2,3) | tanh", [], [],
     lambda y, P, I: torch.tanh(F.hardtanh(F.max_pool2d(y, 2)).mean((2, 3), keepdim=True))),
    ("conv_transpose3d_named", Conv("conv_transpose3d", n=1, c=2, d=3, h=3, w=3, k=2, r=3, stride=2, pad=1,
                                    out_pad=1),
     "| as a | add(param[k]) | add(a) | mul(a) | add(a)", [(1, 2, 1, 1, 1)], [],
     lambda y, P, I: (y + P[0] + y) * y + y),
    ("conv_transpose3d_groups_layer_norm", Conv("conv_transpose3d", n=2, c=4, d=2, h=3, w=2, k=2, r=2, t=3,
                                                stride=(2, 1, 2), pad=(1, 0, 0), out_pad=(1, 0, 1), groups=2),
     "| layer_norm(1) | softmax(2)", [(1, 1, 1, 1, 5)] * 2, [],
     lambda y, P, I: torch.softmax(F.layer_norm(y, (5,), P[0].flatten(), P[1].flatten()), 2)),
    ("linear_sigmoid_squared", Linear(4, 3, 5), "| sigmoid | as a | mul(a)", [], [],
     lambda y, P, I: torch.sigmoid(y) * torch.sigmoid(y)),
    ("linear_swish_named", Linear(4, 3, 5), "| as a | sigmoid | mul(a)", [], [],
     lambda y, P, I: y * torch.sigmoid(y)),
    ("linear_layer_norm_softmax", Linear(4, 3, 6), "| layer_norm(1) | softmax(-1)", [(1, 6)] * 2, [],
     lambda y, P, I: torch.softmax(F.layer_norm(y, (6,), P[0].flatten(), P[1].flatten()), -1)),
    ("matmul_inputs", Matmul(3, 4, 5, batch=2, trans_b=True), "| add(input1) | mul(input1)", [], [(2, 3, 5)],
     lambda y, P, I: (y + I[0]) * I[0]),
    ("matmul_trans_a", Matmul(2, 4, 3, batch=3, trans_a=True), "| log_softmax(1)", [], [],
     lambda y, P, I: torch.log_softmax(y, 1)),
    ("matmul_both_trans", Matmul(3, 5, 2, trans_a=True, trans_b=True), "| logsumexp(1) | exp", [], [],
     lambda y, P, I: torch.exp(torch.logsumexp(y, 1, keepdim=True))),
    ("linear_max_pool1d", Linear(4, 8, 8), "| max_pool1d(2) | reduce_sum(1,keepdim=false) | mul(0.5)", [], [],
     lambda y, P, I: F.max_pool1d(y.unsqueeze(0), 2).squeeze(0).sum(1) * 0.5),
    ("linear_avg_pool1d_nopad_count", Linear(3, 4, 9, bias=False),
     "| avg_pool1d(kernel=3,stride=2,pad=1,count_include_pad=false)", [], [],
     lambda y, P, I: F.avg_pool1d(y.unsqueeze(0), 3, 2, 1, count_include_pad=False).squeeze(0)),
    ("conv2d_adaptive_logsumexp", Conv("conv2d", n=2, c=4, h=8, w=8, k=4, r=3),
     "| adaptive_avg_pool2d(1) | add(param[k]) | logsumexp(channel) | reduce_sum(2,3,keepdim=false) | mul(10)",
     [(1, 4, 1, 1)], [],
     lambda y, P, I: torch.logsumexp(F.adaptive_avg_pool2d(y, 1) + P[0], 1, keepdim=True).sum((2, 3)) * 10),
    ("conv2d_batch_norm_scalar_param", Conv("conv2d", n=2, c=4, h=8, w=8, k=4, r=3),
     "| batch_norm | add(param[1])", [(1, 4, 1, 1)] * 2 + [(1, 1, 1, 1)], [],
     lambda y, P, I: bn(y, P[0].flatten(), P[1].flatten()) + P[2]),
    ("conv2d_instance_norm_avg_pool", Conv("conv2d", n=2, c=4, h=8, w=8, k=4, r=3),
     "| instance_norm(affine=true) | avg_pool2d(kernel=3,stride=2,pad=1,count_include_pad=false)",
     [(1, 4, 1, 1)] * 2, [],
     lambda y, P, I: F.avg_pool2d(F.instance_norm(y, weight=P[0].flatten(), bias=P[1].flatten()), 3, 2, 1,
                                  count_include_pad=False)),
    ("conv2d_avg_pool2d_count_pad", Conv("conv2d", n=1, c=2, h=7, w=6, k=3, r=3),
     "| avg_pool2d(kernel=3,stride=2,pad=1)", [], [], lambda y, P, I: F.avg_pool2d(y, 3, 2, 1)),
    ("conv3d_pool3d", Conv("conv3d", n=1, c=2, d=5, h=6, w=5, k=2, r=2),
     "| max_pool3d(kernel=2x3x2,stride=2x1x2,pad=1x1x0) | avg_pool3d(2,pad=1)", [], [],
     lambda y, P, I: F.avg_pool3d(F.max_pool3d(y, (2, 3, 2), (2, 1, 2), (1, 1, 0)), 2, 2, 1)),
    ("conv3d_instance_norm_softmax", Conv("conv3d", n=2, c=3, d=3, h=4, w=3, k=3, r=2),
     "| instance_norm(eps=0.001) | softmax(channel)", [], [],
     lambda y, P, I: torch.softmax(F.instance_norm(y, eps=1e-3), 1)),
    ("conv2d_group_norm_no_affine", Conv("conv2d", n=2, c=3, h=5, w=5, k=6, r=3),
     "| group_norm(3, affine=false) | gelu", [], [], lambda y, P, I: F.gelu(F.group_norm(y, 3))),
    ("conv2d_layer_norm_chw", Conv("conv2d", n=2, c=2, h=5, w=4, k=3, r=2),
     "| layer_norm(3, eps=0.001)", [(1, 3, 4, 3)] * 2, [],
     lambda y, P, I: F.layer_norm(y, (3, 4, 3), P[0][0], P[1][0], 1e-3)),
    ("linear_batch_norm_no_affine", Linear(5, 3, 4), "| batch_norm(affine=false) | relu", [], [],
     lambda y, P, I: F.relu(bn(y))),
    ("linear_group_norm", Linear(4, 3, 6), "| group_norm(3) | mish", [(1, 6)] * 2, [],
     lambda y, P, I: F.mish(F.group_norm(y, 3, P[0].flatten(), P[1].flatten()))),
    ("conv2d_reduce_max_min", Conv("conv2d", n=3, c=2, h=5, w=5, k=3, r=2),
     "| reduce_max(spatial) | reduce_min(0,keepdim=false)", [], [],
     lambda y, P, I: y.amax((2, 3), keepdim=True).amin(0)),
    ("conv3d_reduce_sum_all", Conv("conv3d", n=2, c=2, d=3, h=3, w=3, k=2, r=2),
     "| reduce_sum(all,keepdim=false)", [], [], lambda y, P, I: y.sum()),
    ("matmul_reduce_mean_keep", Matmul(3, 4, 5, batch=2), "| reduce_mean(0,2)", [], [],
     lambda y, P, I: y.mean((0, 2), keepdim=True)),
    ("conv2d_logsumexp_spatial_nokeep", Conv("conv2d", n=2, c=2, h=4, w=4, k=3, r=2),
     "| logsumexp(spatial,keepdim=false) | log_softmax(1)", [], [],
     lambda y, P, I: torch.log_softmax(torch.logsumexp(y, (2, 3)), 1)),
    ("conv2d_chain", Conv("conv2d", n=2, c=3, h=5, w=5, k=4, r=3, pad=1),
     "| add(param[k]) | relu | reduce_sum | mul(0.5)", [(1, 4, 1, 1)], [],
     lambda y, P, I: F.relu(y + P[0]).sum(1, keepdim=True) * 0.5),
    ("linear_chain", Linear(4, 5, 6), "| mul(param[k]) | gelu | reduce_max(channel)", [(1, 6)], [],
     lambda y, P, I: F.gelu(y * P[0]).amax(1, keepdim=True)),
    ("linear_residual_broadcast", Linear(4, 3, 5),
     "| add(input1) | min(param[k]) | as y | reduce_sum(1) | sub(y) | div(y, x) | max(input2)", [(1, 5)],
     [(4, 5), (4, 5)], lambda y, P, I: residual(torch.minimum(y + I[0], P[0]), I[1])),
    ("conv2d_operand_orders", Conv("conv2d", n=1, c=2, h=4, w=4, k=2, r=2),
     "| as a | sigmoid | sub(a, x) | rsub(param[k]) | mul(a) | div(param[k])", [(1, 2, 1, 1)] * 2, [],
     lambda y, P, I: (P[0] - (y - torch.sigmoid(y))) * y / P[1]),
]


def draw(shape, rng):
    """fp32-exact values in (-1, 1), as float64 tensors."""
    v = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np.float64)
    return torch.from_numpy(v)


def run_case(index, case):
    name, main, epilogue, param_shapes, input_shapes, fn = case
    rng = np.random.default_rng(1000 + index)
    x_shape, w_shape, b_shape = main.shapes
    x, w = draw(x_shape, rng), draw(w_shape, rng)
    b = draw(b_shape, rng) if b_shape else None
    params = [draw(s, rng) for s in param_shapes]
    inputs = [draw(s, rng) for s in input_shapes]
    y = fn(main(x, w, b), params, inputs)
    lines = [f"case {name}", f"spec {main.spec()} {epilogue}".rstrip()]

    # Shortest round-trip text: inputs as fp32 (strtof reads back the exact float), answers as
    # float64 (strtod reads back the exact double).
    def field(tag, t, exact32=True):
        flat = [] if t is None else t.flatten().tolist()
        text = [str(np.float32(v)) if exact32 else repr(float(v)) for v in flat]
        lines.append(" ".join([tag, str(len(flat))] + text))

    field("input", x)
    field("weight", w)
    field("bias", b)
    for p in params:
        field("param", p)
    for i in inputs:
        field("extra", i)
    field("expect", y, exact32=False)
    lines.append("shape " + " ".join(str(d) for d in y.shape))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    text = "".join(run_case(i, c) for i, c in enumerate(CASES))
    if args.check:
        with open(args.out) as f:
            same = f.read() == text
        print("up to date" if same else f"{args.out} differs: rerun without --check")
        return 0 if same else 1
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {len(CASES)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
