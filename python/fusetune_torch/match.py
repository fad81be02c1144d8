"""Finds the blocks fusetune can tune in a model's graph (graph.py): an nn.Conv2d, then the
longest chain of epilogue operations fusetune's spec language expresses, each the only user of
the value before it: pointwise ops with scalar or per-channel (K, 1, 1) operands, an eval-mode
BatchNorm2d (folded into a per-channel mul and add), at most one reduction over channels
(keepdim), then scalar pointwise ops. Everything else ends a chain, and why is kept: a conv
whose chain is empty, or that fusetune cannot compute, is reported with the reason, never
dropped silently.

Pure Python: tested without torch (python/tests/test_match.py).
"""
import math
from dataclasses import dataclass, field
from typing import Any, List, Tuple

from .graph import Graph, Node, Ref

UNARY = {"relu", "tanh", "sigmoid", "silu", "mish", "hardswish", "hardsigmoid", "exp", "log", "abs", "neg",
         "sqrt", "square"}
SKIPPED = {"identity", "dropout", "dropout2d", "contiguous"}  # identities in eval mode
BINARY = {"add", "sub", "mul", "truediv", "div", "minimum", "maximum", "min", "max"}
REDUCE_FUNCTIONS = {"amin": "reduce_min", "amax": "reduce_max", "sum": "reduce_sum", "mean": "reduce_mean"}
REDUCE_WITH_INDICES = {"min": "reduce_min", "max": "reduce_max"}  # return (values, indices)
FP32_MAX = 3.4028234663852886e38
# Reads of a value's metadata, not of the value: `torch.tensor(0.5, device=x.device)` (KernelBench's
# model 31), `x.shape`, `x.size()`. They neither fork a chain nor belong to it.
METADATA_ATTRS = {"device", "dtype", "shape", "ndim", "layout", "is_cuda"}
METADATA_METHODS = {"size", "dim"}


@dataclass
class ParamSource:
    """Where a per-channel operand's K values come from, for binding them later."""
    kind: str   # "tensor": a parameter or buffer (path); "bn_scale" / "bn_shift": a BatchNorm's fold
    path: str

    def describe(self):
        if self.kind == "bn_scale":
            return f"{self.path}: weight / sqrt(running_var + eps)"
        if self.kind == "bn_shift":
            return f"{self.path}: bias - running_mean * weight / sqrt(running_var + eps)"
        return self.path


@dataclass
class Param:
    """A per-channel operand: param[k] in the spec."""
    source: ParamSource


@dataclass
class Stage:
    op: str                  # a spec op or reduction name
    args: Tuple[Any, ...] = ()  # floats, or Param


@dataclass
class Block:
    conv_path: str
    conv: dict               # n c h w k r s stride pad dilation bias (pairs as (h, w))
    stages: List[Stage]
    nodes: List[str]         # the graph nodes the block replaces, conv first
    output: str              # the node whose value the block computes
    ends: str = ""           # why the chain stopped where it did ("" at the model's end or a fork)
    module_paths: List[str] = field(default_factory=list)
    in_layout: str = "nchw"  # the memory layout the block reads its input in (chain_layouts)
    out_layout: str = "nchw"  # and writes its output in

    @property
    def params(self):
        return [a.source for s in self.stages for a in s.args if isinstance(a, Param)]


@dataclass
class Unmatched:
    path: str
    reason: str


class _Stop(Exception):
    pass


def _pair(v, what):
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return (int(v[0]), int(v[1]))
    raise _Stop(f"{what}={v!r} is not an integer or a pair")


def conv_geometry(graph: Graph, conv: Node) -> dict:
    a = conv.attrs
    if a.get("groups", 1) != 1:
        raise _Stop(f"groups={a['groups']}: fusetune's conv2d is a dense convolution (groups=1)")
    if a.get("padding_mode", "zeros") != "zeros":
        raise _Stop(f"padding_mode={a['padding_mode']!r}: fusetune pads with zeros")
    r, s = _pair(a["kernel_size"], "kernel_size")
    stride = _pair(a.get("stride", 1), "stride")
    dilation = _pair(a.get("dilation", 1), "dilation")
    pad = a.get("padding", 0)
    if pad == "valid":
        pad = (0, 0)
    elif pad == "same":
        if stride != (1, 1):
            raise _Stop("padding='same' with a stride: PyTorch refuses it too")
        total = (dilation[0] * (r - 1), dilation[1] * (s - 1))
        if total[0] % 2 or total[1] % 2:
            raise _Stop("padding='same' pads unevenly here; fusetune pads both sides alike")
        pad = (total[0] // 2, total[1] // 2)
    else:
        pad = _pair(pad, "padding")
    x = graph.node(conv.args[0]) if conv.args and isinstance(conv.args[0], Ref) else None
    shape = x.shape if x is not None else None
    if not shape or len(shape) != 4:
        raise _Stop(f"its input's shape is {'unknown' if not shape else shape}: fusetune needs (N, C, H, W)")
    n, c, h, w = shape
    if c != a["in_channels"]:
        raise _Stop(f"its input has {c} channels, the conv {a['in_channels']}")
    return {"n": n, "c": c, "h": h, "w": w, "k": a["out_channels"], "r": r, "s": s, "stride": stride, "pad": pad,
            "dilation": dilation, "bias": bool(a.get("bias", True))}


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Stop(f"{what} {v!r} is not a number")
    v = float(v)
    if not math.isfinite(v) or abs(v) > FP32_MAX:
        raise _Stop(f"{what} {v!r} is outside the fp32 range")
    return v


def _arg(node: Node, index, name, default):
    if len(node.args) > index:
        return node.args[index]
    if name in node.kwargs:
        return node.kwargs[name]
    return node.attrs.get(name, default)


def _operand(graph: Graph, a, k, reduced):
    """A binary op's other operand: a float, or Param."""
    if not isinstance(a, Ref):
        return _number(a, "operand")
    n = graph.node(a)
    if n.op == "const":
        return _number(n.value, "operand")
    if n.op == "param":
        shape = tuple(n.shape or ())
        numel = math.prod(shape) if shape else 1
        if numel == 1 and n.value is not None:
            return _number(n.value, f"operand {n.path}")
        if shape in ((k, 1, 1), (1, k, 1, 1)):
            if reduced:
                raise _Stop(f"{n.path} is per-channel, but after the reduction one channel is left")
            return Param(ParamSource("tensor", n.path))
        raise _Stop(f"operand {n.path} has shape {shape}: neither a scalar nor per-channel ({k}, 1, 1)")
    raise _Stop(f"an operand is computed by the model ({n.op} {n.name}), not a constant or parameter")


def _reduction_dim_ok(node: Node):
    dim = _arg(node, 1, "dim", None)
    keepdim = _arg(node, 2, "keepdim", False)
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    if dim not in (1, -3):
        raise _Stop(f"{node.op} over dim={dim!r}: fusetune reduces over channels (dim=1) only")
    if keepdim is not True:
        raise _Stop(f"{node.op} without keepdim=True: fusetune keeps the channel dimension")


def _reads_metadata(u: Node):
    if u.op == "getattr":
        return len(u.args) >= 2 and u.args[1] in METADATA_ATTRS
    return u.op in METADATA_METHODS


def value_users(graph: Graph, name):
    """The nodes that use the value of `name` (its metadata reads left out)."""
    return [u for u in graph.users_of(name) if not _reads_metadata(u)]


def _stages_of(graph: Graph, u: Node, cur: Node, k, reduced):
    """(stages, node whose value continues the chain, nodes consumed) for user u of cur."""
    op = u.op[:-1] if u.op.endswith("_") and u.op[:-1] in UNARY | BINARY | {"clamp", "clip"} else u.op
    data = u.args[0] if u.args else None
    first = isinstance(data, Ref) and data.name == cur.name
    if op in SKIPPED and first:
        if u.attrs.get("training", False) and u.attrs.get("p", 0) > 0:
            raise _Stop(f"{u.path or u.name}: dropout in training mode (p={u.attrs['p']}) draws a random mask")
        return [], u, [u.name]
    if op == "batch_norm":
        if u.attrs.get("training", False):
            raise _Stop(f"{u.path}: BatchNorm2d in training mode (batch statistics) cannot be folded; eval() it")
        if not u.attrs.get("track_running_stats", True):
            raise _Stop(f"{u.path}: BatchNorm2d without running statistics cannot be folded")
        if reduced:
            raise _Stop(f"{u.path}: a BatchNorm after the reduction")
        return ([Stage("mul", (Param(ParamSource("bn_scale", u.path)),)),
                 Stage("add", (Param(ParamSource("bn_shift", u.path)),))], u, [u.name])
    if op in UNARY and first:
        return [Stage(op)], u, [u.name]
    if op == "pow" and first:
        if _arg(u, 1, "exponent", None) in (2, 2.0):
            return [Stage("square")], u, [u.name]
        raise _Stop(f"pow with exponent {_arg(u, 1, 'exponent', None)!r}: only 2 (square) is in the spec language")
    if op == "gelu" and first:
        approx = _arg(u, 1, "approximate", "none")
        if approx not in ("none", "tanh"):
            raise _Stop(f"gelu(approximate={approx!r})")
        return [Stage("gelu" if approx == "none" else "gelu_tanh")], u, [u.name]
    if op == "leaky_relu" and first:
        return [Stage("leaky_relu", (_number(_arg(u, 1, "negative_slope", 0.01), "slope"),))], u, [u.name]
    if op in ("hardtanh", "relu6") and first:
        lo, hi = (0.0, 6.0) if op == "relu6" else (_arg(u, 1, "min_val", -1.0), _arg(u, 2, "max_val", 1.0))
        return [Stage("hardtanh", (_number(lo, "min_val"), _number(hi, "max_val")))], u, [u.name]
    if op == "softplus" and first:
        beta = _number(_arg(u, 1, "beta", 1.0), "beta")
        if beta <= 0:
            raise _Stop("softplus with beta <= 0")
        return [Stage("softplus", (beta, _number(_arg(u, 2, "threshold", 20.0), "threshold")))], u, [u.name]
    if op in ("clamp", "clip") and first:
        lo, hi = _arg(u, 1, "min", None), _arg(u, 2, "max", None)
        lo = None if lo is None else _operand(graph, lo, k, reduced)
        hi = None if hi is None else _operand(graph, hi, k, reduced)
        if lo is None and hi is None:
            return [], u, [u.name]
        if isinstance(lo, float) and isinstance(hi, float):
            if lo > hi:
                raise _Stop(f"clamp({lo}, {hi}) with min > max")
            return [Stage("clamp", (lo, hi))], u, [u.name]
        out = []
        if lo is not None:
            out.append(Stage("max", (lo,)))
        if hi is not None:
            out.append(Stage("min", (hi,)))
        return out, u, [u.name]
    if op in REDUCE_FUNCTIONS and first:
        if reduced:
            raise _Stop("a second reduction over channels")
        _reduction_dim_ok(u)
        return [Stage(REDUCE_FUNCTIONS[op])], u, [u.name]
    if op in REDUCE_WITH_INDICES and first and (len(u.args) > 1 and not isinstance(u.args[1], Ref) or "dim" in u.kwargs):
        if reduced:
            raise _Stop("a second reduction over channels")
        _reduction_dim_ok(u)
        users = value_users(graph, u.name)
        if len(users) != 1 or users[0].op != "getitem" or tuple(users[0].args[1:2]) != (0,):
            raise _Stop(f"{op}(dim=1) whose indices are used: fusetune computes the values only")
        return [Stage(REDUCE_WITH_INDICES[op])], users[0], [u.name, users[0].name]
    if op in BINARY and len(u.args) >= 2:
        a0, a1 = u.args[0], u.args[1]
        mine0 = isinstance(a0, Ref) and a0.name == cur.name
        mine1 = isinstance(a1, Ref) and a1.name == cur.name
        if mine0 == mine1:
            raise _Stop(f"{op} of the value with itself")
        if u.kwargs.get("alpha", 1) != 1:
            raise _Stop(f"{op} with alpha={u.kwargs['alpha']!r}")
        if u.kwargs.get("rounding_mode") is not None:
            raise _Stop(f"div with rounding_mode={u.kwargs['rounding_mode']!r}")
        other = _operand(graph, a1 if mine0 else a0, k, reduced)
        name = {"truediv": "div", "minimum": "min", "maximum": "max"}.get(op, op)
        if mine1 and name in ("sub", "div"):
            name = "r" + name
        return [Stage(name, (other,))], u, [u.name]
    raise _Stop(f"{u.op} ({u.path or u.name}) is not an epilogue op fusetune expresses")


def find_blocks(graph: Graph):
    """(blocks, unmatched): every nn.Conv2d of the graph is in exactly one of the two lists."""
    blocks, unmatched = [], []
    for conv in graph.nodes:
        if conv.op == "conv2d_functional":
            unmatched.append(Unmatched(conv.name, "a functional conv2d: fusetune matches nn.Conv2d modules"))
            continue
        if conv.op != "conv2d":
            continue
        try:
            geometry = conv_geometry(graph, conv)
        except _Stop as e:
            unmatched.append(Unmatched(conv.path, str(e)))
            continue
        k = geometry["k"]
        stages, nodes, paths, cur, reduced, ends = [], [conv.name], [conv.path], conv, False, ""
        while True:
            users = value_users(graph, cur.name)
            if len(users) != 1:
                ends = f"its value is used {len(users)} times" if users else ""
                break
            if users[0].op == "output":
                break
            try:
                more, nxt, consumed = _stages_of(graph, users[0], cur, k, reduced)
            except _Stop as e:
                ends = str(e)
                break
            stages += more
            nodes += consumed
            if users[0].path:
                paths.append(users[0].path)
            reduced = reduced or any(s.op.startswith("reduce_") for s in more)
            cur = nxt
        if not stages:
            unmatched.append(Unmatched(conv.path, "no epilogue op fusetune expresses follows it" +
                                       (f": {ends}" if ends else "")))
            continue
        blocks.append(Block(conv.path, geometry, stages, nodes, cur.name, ends, paths))
    return blocks, unmatched


def chain_layouts(graph: Graph, blocks):
    """Keeps the values that pass from one block straight into others channels-last (NHWC), as
    torch.compile's layout optimization does: a block whose output only feeds the convs of other
    blocks writes NHWC (a channels-last tensor, so any PyTorch op could still read it), and those
    blocks read NHWC -- the fast layout for a convolution, with no transform on either side. The
    model's own input and output, and every value another op reads, stay as PyTorch lays them
    out (NCHW). A reduced output has one channel, the same memory in either layout: left NCHW."""
    conv_of = {b.nodes[0]: b for b in blocks}
    by_output = {b.output: b for b in blocks}
    for b in blocks:
        if any(s.op.startswith("reduce_") for s in b.stages):
            continue
        users = value_users(graph, b.output)
        if users and all(u.name in conv_of and u.args and u.args[0] == Ref(b.output) for u in users):
            b.out_layout = "nhwc"
    for b in blocks:
        x = graph.node(b.nodes[0]).args[0]  # a block's conv has its input there (conv_geometry)
        src = by_output.get(x.name) if isinstance(x, Ref) else None
        if src is not None and src.out_layout == "nhwc":
            b.in_layout = "nhwc"
    return blocks
