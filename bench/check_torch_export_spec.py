"""Checks a PyTorch module written by `fusetune export --format torch` for any problem against
PyTorch's own convolution and epilogue, on a GPU, and times both.

    python3 bench/check_torch_export_spec.py --spec 'conv2d(n=256,c=8,h=128,w=128,k=64,r=3) | relu' \\
        --module export.py [--math tf32|fp32] [--warmup 3] [--reps 20]

The spec is parsed here (conv2d's keys and every op and reduction of the spec language (docs/spec-language.md))
and must be the module's problem (its PROBLEM, as `fusetune export` wrote it). The exported Model,
built with get_init_inputs(), runs on torch.rand input of the conv's shape (in the layout its plan
reads). The reference is torch.nn.functional.conv2d with the same model's weights and bias, then the
spec's epilogue in PyTorch ops, with the model's per-channel parameters (PARAM_NAMES: the spec's
param[k] operands, in order). Compared as bench/check_torch_export.py does:
    every element: |out - ref| <= tol + tol * |ref|     and     relative L2 error <= tol
with tol = 1e-2 under tf32 (PyTorch's defaults, TF32 allowed for cuDNN convolutions) and 1e-4
under fp32 (TF32 off); --math defaults to the module's MATH. Timing: the median of --reps calls
after --warmup calls, each between two torch.cuda.Event records on the current stream.

A module of an arch-specific winner (fused-conv: a CUBIN for sm_90a) runs on GPUs of its compute
capability only (CUBIN_CC); on another GPU this check is skipped, saying so.

Exit status: 0 within the tolerance, 1 not (or the module failed), 2 bad usage (the spec does not
parse or is not the module's problem, the file is not an exported module), 77 skipped (no CUDA
GPU, torch or CuPy missing, a GPU the module's CUBIN does not run on).
"""
import argparse
import importlib.util
import math
import re
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

SKIP = 77
USAGE = 2


class SpecError(ValueError):
    pass


# --- the spec language (docs/spec-language.md), as far as a reference needs it ----------------

_LAYOUTS_IN = ("nchw", "nhwc")
_LAYOUTS_OUT = ("nchw", "nhwc", "any")
_BINARY = ("add", "sub", "rsub", "mul", "div", "rdiv", "min", "max")
_COMMUTATIVE = ("add", "mul", "min", "max")
# op -> (least, most arguments, defaults filled in up to `most`)
_UNARY = {
    "relu": (0, 0, ()), "gelu": (0, 0, ()), "gelu_tanh": (0, 0, ()), "tanh": (0, 0, ()),
    "sigmoid": (0, 0, ()), "silu": (0, 0, ()), "mish": (0, 0, ()), "hardswish": (0, 0, ()),
    "hardsigmoid": (0, 0, ()), "exp": (0, 0, ()), "log": (0, 0, ()), "abs": (0, 0, ()),
    "neg": (0, 0, ()), "square": (0, 0, ()), "sqrt": (0, 0, ()),
    "clamp": (2, 2, ()), "leaky_relu": (0, 1, (0.01,)), "hardtanh": (0, 2, (-1.0, 1.0)),
    "softplus": (0, 2, (1.0, 20.0)),
}
_REDUCTIONS = ("reduce_min", "reduce_max", "reduce_sum", "reduce_mean")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _number(text, where):
    if not _NUMBER.match(text):
        raise SpecError(f"{where}: '{text}' is not a number")
    value = float(text)
    if not math.isfinite(value) or abs(value) > 3.4028234663852886e38:
        raise SpecError(f"{where}: {text} is outside the fp32 range")
    return value


def _size(text, key, least):
    if not re.fullmatch(r"\d+", text) or int(text) < least:
        raise SpecError(f"conv2d {key}={text}: expected an integer >= {least}")
    return int(text)


def _pair(text, key, least):
    parts = text.split("x")
    if len(parts) == 1:
        v = _size(parts[0], key, least)
        return (v, v)
    if len(parts) == 2:
        return (_size(parts[0], key, least), _size(parts[1], key, least))
    raise SpecError(f"conv2d {key}={text}: expected an integer or a pair HxW")


def _conv(body):
    given = {}
    for item in body.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise SpecError(f"conv2d: expected key=value, found '{item}'")
        if key in given:
            raise SpecError(f"conv2d: {key} given twice")
        given[key] = value
    known = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "dilation", "bias", "in", "out"}
    for key in given:
        if key not in known:
            raise SpecError(f"conv2d: unknown key '{key}'")
    conv = {}
    for key in ("n", "c", "h", "w", "k", "r"):
        if key not in given:
            raise SpecError(f"conv2d: {key} is required")
        conv[key] = _size(given[key], key, 1)
    conv["s"] = _size(given["s"], "s", 1) if "s" in given else conv["r"]
    conv["stride"] = _pair(given.get("stride", "1"), "stride", 1)
    conv["pad"] = _pair(given.get("pad", "0"), "pad", 0)
    conv["dilation"] = _pair(given.get("dilation", "1"), "dilation", 1)
    if given.get("bias", "true") not in ("true", "false"):
        raise SpecError(f"conv2d bias={given['bias']}: expected true or false")
    conv["bias"] = given.get("bias", "true") == "true"
    conv["in"] = given.get("in", "nchw")
    conv["out"] = given.get("out", "nchw")
    if conv["in"] not in _LAYOUTS_IN or conv["out"] not in _LAYOUTS_OUT:
        raise SpecError(f"conv2d: layouts in={conv['in']} out={conv['out']}")
    (sh, sw), (ph, pw), (dh, dw) = conv["stride"], conv["pad"], conv["dilation"]
    conv["p"] = (conv["h"] + 2 * ph - dh * (conv["r"] - 1) - 1) // sh + 1
    conv["q"] = (conv["w"] + 2 * pw - dw * (conv["s"] - 1) - 1) // sw + 1
    if conv["p"] < 1 or conv["q"] < 1:
        raise SpecError("conv2d: the output would be empty")
    return conv


def _stage(text, reduced, n_params):
    """One stage as (op, operands): numbers as floats, param[k] as ("param", i)."""
    m = re.fullmatch(r"([a-z_]+)(?:\((.*)\))?", text)
    if not m:
        raise SpecError(f"cannot read the stage '{text}'")
    op, inner = m.group(1), m.group(2)
    args = [] if inner is None or inner == "" else inner.split(",")
    where = f"stage '{text}'"
    if op in _REDUCTIONS:
        if args not in ([], ["channel"]):
            raise SpecError(f"{where}: a reduction takes nothing or (channel)")
        if reduced:
            raise SpecError(f"{where}: at most one reduction")
        return (op, ())
    if op in _BINARY:
        if len(args) == 2 and "x" in args and op not in ("rsub", "rdiv"):
            if args == ["x", "x"]:
                raise SpecError(f"{where}: one operand must not be x")
            if args[0] == "x":
                args = [args[1]]
            else:  # operand first: v - x, v / x; the others commute
                args = [args[0]]
                op = {"sub": "rsub", "div": "rdiv"}.get(op, op)
        if len(args) != 1:
            raise SpecError(f"{where}: expected one operand")
        if args[0] == "param[k]":
            if reduced:
                raise SpecError(f"{where}: param[k] after the channel reduction")
            return (op, (("param", n_params),))
        return (op, (_number(args[0], where),))
    if op in _UNARY:
        least, most, defaults = _UNARY[op]
        if not least <= len(args) <= most:
            raise SpecError(f"{where}: expected {least} to {most} arguments")
        values = [_number(a, where) for a in args]
        values += list(defaults[len(values):])
        if op in ("clamp", "hardtanh") and values[0] > values[1]:
            raise SpecError(f"{where}: lo > hi")
        if op == "softplus" and values[0] <= 0:
            raise SpecError(f"{where}: beta must be > 0")
        return (op, tuple(values))
    raise SpecError(f"unknown op '{op}'")


def parse_spec(text):
    """(conv, stages) of a spec; SpecError when it is not one."""
    if any(ord(ch) > 127 for ch in text):
        raise SpecError("the spec language is ASCII")
    compact = re.sub(r"\s+", "", text)
    m = re.fullmatch(r"conv2d\(([^()]*)\)((?:\|[^|]+)*)", compact)
    if not m:
        raise SpecError("expected conv2d(...) followed by '| stage' parts")
    conv = _conv(m.group(1))
    stages, reduced, n_params = [], False, 0
    for part in m.group(2).split("|")[1:]:
        stage = _stage(part, reduced, n_params)
        reduced = reduced or stage[0] in _REDUCTIONS
        n_params += sum(1 for a in stage[1] if isinstance(a, tuple))
        stages.append(stage)
    return conv, stages


# --- the reference ------------------------------------------------------------------------------

def _operand(a, params):
    return params[a[1]] if isinstance(a, tuple) else a


def _apply(op, args, x, params):
    if op in _BINARY:
        v = _operand(args[0], params)
        if op == "add":
            return x + v
        if op == "sub":
            return x - v
        if op == "rsub":
            return v - x
        if op == "mul":
            return x * v
        if op == "div":
            return x / v
        if op == "rdiv":
            return v / x
        if op == "min":
            return torch.minimum(x, v) if isinstance(v, torch.Tensor) else torch.clamp(x, max=v)
        return torch.maximum(x, v) if isinstance(v, torch.Tensor) else torch.clamp(x, min=v)
    if op == "reduce_min":
        return torch.amin(x, dim=1, keepdim=True)
    if op == "reduce_max":
        return torch.amax(x, dim=1, keepdim=True)
    if op == "reduce_sum":
        return torch.sum(x, dim=1, keepdim=True)
    if op == "reduce_mean":
        return torch.mean(x, dim=1, keepdim=True)
    table = {
        "relu": lambda: F.relu(x),
        "gelu": lambda: F.gelu(x),
        "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
        "tanh": lambda: torch.tanh(x),
        "sigmoid": lambda: torch.sigmoid(x),
        "silu": lambda: F.silu(x),
        "mish": lambda: F.mish(x),
        "hardswish": lambda: F.hardswish(x),
        "hardsigmoid": lambda: F.hardsigmoid(x),
        "exp": lambda: torch.exp(x),
        "log": lambda: torch.log(x),
        "abs": lambda: torch.abs(x),
        "neg": lambda: torch.neg(x),
        "square": lambda: x * x,
        "sqrt": lambda: torch.sqrt(x),
        "clamp": lambda: torch.clamp(x, args[0], args[1]),
        "leaky_relu": lambda: F.leaky_relu(x, args[0]),
        "hardtanh": lambda: F.hardtanh(x, args[0], args[1]),
        "softplus": lambda: F.softplus(x, beta=args[0], threshold=args[1]),
    }
    return table[op]()


def make_reference(conv, stages, model, param_names):
    """PyTorch's conv with the model's weights, then the epilogue: a function of x."""
    weight = model.conv.weight
    bias = model.conv.bias
    params = [getattr(model, name) for name in param_names]

    def reference(x):
        y = F.conv2d(x, weight, bias, conv["stride"], conv["pad"], conv["dilation"])
        for op, args in stages:
            y = _apply(op, args, y, params)
        return y

    return reference


# --- comparing and timing -------------------------------------------------------------------------

def compare(got, ref, tol):
    """(ok, line): the errors of `got` against `ref`, in float64, a slice of the batch at a time."""
    if tuple(got.shape) != tuple(ref.shape):
        return False, f"FAIL output shape {tuple(got.shape)}, reference {tuple(ref.shape)}"
    per_item = max(1, math.prod(got.shape[1:]))
    step = max(1, (1 << 26) // per_item)
    max_abs, worst, diff2, ref2, nan = 0.0, 0.0, 0.0, 0.0, False
    for i in range(0, got.shape[0], step):
        g = got[i:i + step].double()
        r = ref[i:i + step].double()
        d = (g - r).abs()
        nan = nan or bool(torch.isnan(g).any().item())
        max_abs = max(max_abs, d.max().item())
        worst = max(worst, (d / (tol + tol * r.abs())).max().item())
        diff2 += float((d * d).sum().item())
        ref2 += float((r * r).sum().item())
    rel_l2 = math.sqrt(diff2) / math.sqrt(ref2) if ref2 > 0 else (0.0 if diff2 == 0 else math.inf)
    ok = not nan and worst <= 1.0 and rel_l2 <= tol
    line = (f"{'ok  ' if ok else 'FAIL'} max abs error {max_abs:.3e} (worst diff/bound {worst:.3f}, bound "
            f"{tol:g} + {tol:g}*|ref|), relative L2 {rel_l2:.3e} (<= {tol:g}){', NaN in output' if nan else ''}")
    return ok, line


def time_ms(fn, x, warmup, reps):
    """Median milliseconds of fn(x) over `reps` calls after `warmup`, by CUDA events."""
    with torch.no_grad():
        for _ in range(warmup):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(x)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def load_module(path):
    spec = importlib.util.spec_from_file_location("fusetune_exported_module", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", required=True, help="the problem, in fusetune's spec language")
    ap.add_argument("--module", required=True, help="the file `fusetune export --format torch` wrote")
    ap.add_argument("--math", choices=["tf32", "fp32"], help="default: the module's MATH")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if args.warmup < 0 or args.reps < 1:
        ap.error("--warmup >= 0 and --reps >= 1")

    try:
        conv, stages = parse_spec(args.spec)
    except SpecError as e:
        print(f"error: --spec: {e}")
        return USAGE

    if torch is None or not torch.cuda.is_available():
        print("skip: no CUDA GPU (or no torch)")
        return SKIP
    if importlib.util.find_spec("cupy") is None:  # the exported modules run their kernels through it
        print("skip: CuPy is not installed")
        return SKIP

    try:
        module = load_module(args.module)
        problem, module_math = module.PROBLEM, module.MATH
        param_names, input_shape, layout = module.PARAM_NAMES, module.INPUT_SHAPE, module.INPUT_LAYOUT
    except (OSError, ImportError, SyntaxError, AttributeError) as e:
        print(f"error: --module {args.module}: not a module of `fusetune export --format torch`: {e}")
        return USAGE
    try:
        module_problem = parse_spec(problem)
    except SpecError as e:
        print(f"error: the module's PROBLEM does not parse here: {e}")
        return USAGE
    if module_problem != (conv, stages):
        print(f"error: --spec is not the module's problem\n  spec:   {args.spec}\n  module: {problem}")
        return USAGE
    n_params = sum(1 for _, a in stages for v in a if isinstance(v, tuple))
    if len(param_names) != n_params:
        print(f"error: the module has {len(param_names)} per-channel parameters, the spec {n_params}")
        return USAGE

    device = torch.device("cuda", torch.cuda.current_device())
    cc = tuple(torch.cuda.get_device_capability(device))
    cubin_cc = getattr(module, "CUBIN_CC", None)
    if cubin_cc is not None and cc != tuple(cubin_cc):
        print(f"skip: the module's kernels are a CUBIN for {module.CUBIN_ARCH} (compute capability "
              f"{cubin_cc[0]}.{cubin_cc[1]}); {torch.cuda.get_device_name(device)} is {cc[0]}.{cc[1]}")
        return SKIP

    math_mode = args.math or module_math
    if math_mode != module_math:
        print(f"note: the module was tuned under {module_math}, checking under {math_mode}")
    tf32 = math_mode == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32  # tf32: PyTorch's default for cuDNN convolutions
    torch.backends.cuda.matmul.allow_tf32 = tf32
    tol = 1e-2 if tf32 else 1e-4

    print(f"problem: {problem}")
    print(f"math:    {math_mode}; kernels: "
          + (f"CUBIN for {module.CUBIN_ARCH}" if cubin_cc is not None else "SOURCE compiled through CuPy (NVRTC)"))
    print(f"GPU:     {torch.cuda.get_device_name(device)} (sm_{cc[0]}{cc[1]})")

    torch.manual_seed(0)
    try:
        model = module.Model(*module.get_init_inputs()).to(device).eval()
    except Exception as e:  # noqa: BLE001 - the module's own error, reported as a failure
        print(f"FAIL Model(*get_init_inputs()): {type(e).__name__}: {e}")
        return 1
    reference = make_reference(conv, stages, model, param_names)
    x = torch.rand(*input_shape, device=device)
    if layout == "nhwc":
        x = x.contiguous(memory_format=torch.channels_last)

    try:
        with torch.no_grad():
            got = model(x)
            want = reference(x)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        print(f"FAIL running the module: {type(e).__name__}: {e}")
        return 1
    ok, line = compare(got, want, tol)
    print(line)
    del got, want
    torch.cuda.empty_cache()

    exported_ms = time_ms(model, x, args.warmup, args.reps)
    reference_ms = time_ms(reference, x, args.warmup, args.reps)
    print(f"time (median of {args.reps} after {args.warmup} warmup): exported {exported_ms:.4f} ms, "
          f"PyTorch conv + epilogue {reference_ms:.4f} ms ({reference_ms / exported_ms:.2f}x)")
    print("passed" if ok else "FAILED: the error exceeds the tolerance")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
