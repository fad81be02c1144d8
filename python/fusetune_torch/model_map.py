"""A whole model of one main operator and its epilogue (KernelBench level 2's shape) as ONE line of
spec language version 2 (docs/spec-language.md), or the reason it cannot be, naming the op and its
file line.

The main operator: nn.Conv2d/Conv3d/ConvTranspose2d/ConvTranspose3d, nn.Linear (or F.linear),
torch.matmul / `@` with a parameter (`x @ W.T` is linear without bias), torch.bmm/matmul of two model
inputs. It must read the model's (first) input directly, and nothing else may read that input.
The epilogue is a small graph: a value used more than once is named (`| as a | ... | mul(a)`), a
second model input of the output's shape is `input1`, parameters are `param[k]` (one value per
channel / feature) or `param[1]` (one learned value), 0-dim tensors of a fixed value are numbers.
Exact rewrites: x*sigmoid(x) -> silu, x*tanh(softplus(x)) -> mish, x*clamp((x+3)/6,0,1) -> hardswish,
x + x -> mul(2), x*c + x -> mul(c+1), reductions over size-1 dims (keepdim) dropped, a 1-d pool
between unsqueeze(1)/squeeze(1) of a (B, F) value pools F (max_pool1d on the rank-2 value), an
InstanceNorm2d of x.unsqueeze(1).unsqueeze(1) for a (B, F) x is layer_norm over F without affine.

Norms run in the mode the model is in (fx_adapter records it): BatchNorm in training mode, or
without running statistics, is `batch_norm` (batch statistics); in eval mode it is the fold
mul(param[k]) | add(param[k]). Active dropout (training mode, p > 0) is refused: its output is random.

Pure Python: tested without torch (python/tests/test_model_map.py).
"""
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .graph import Graph, Node, Ref
from .graph import _refs as graph_refs
from .match import _arg, _reads_metadata  # one reading of a node's arguments for both mappers

MAIN_MODULES = {"conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "linear"}
MAIN_FUNCTIONS = {"matmul", "bmm", "mm", "linear_functional"}
UNARY = {"relu", "tanh", "sigmoid", "silu", "mish", "hardswish", "hardsigmoid", "exp", "log", "abs", "neg", "sqrt",
         "square"}
ALIASES = {"clone", "detach", "contiguous", "identity", "float"}
BINARY = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "div": "div", "multiply": "mul",
          "subtract": "sub", "divide": "div", "true_divide": "div", "minimum": "min", "maximum": "max",
          "min": "min", "max": "max", "fmin": "min", "fmax": "max"}
COMMUTATIVE = {"add", "mul", "min", "max"}
REDUCE = {"sum": "reduce_sum", "mean": "reduce_mean", "amax": "reduce_max", "amin": "reduce_min"}
REDUCE_WITH_INDICES = {"max": "reduce_max", "min": "reduce_min"}
RESHAPES = {"unsqueeze", "squeeze", "view", "reshape", "flatten"}
METADATA_ATTRS = {"device", "dtype", "shape", "ndim", "layout", "is_cuda"}
METADATA_METHODS = {"size", "dim"}
FP32_MAX = 3.4028234663852886e38


class Refused(Exception):
    """Why the model is not one spec line: the node it stopped at and the reason."""

    def __init__(self, node: Optional[Node], reason: str):
        super().__init__(reason)
        self.node = node
        self.reason = reason

    def line(self):
        return refusal_line(self.node, self.reason)


def describe_node(n: Optional[Node]):
    if n is None:
        return "the model"
    if n.attrs.get("module"):
        return f"nn.{n.attrs['module']} ({n.path})"
    if n.op == "input":
        return f"input {n.name}"
    return n.op if not n.path else f"{n.op} ({n.path})"


def refusal_line(n: Optional[Node], reason: str):
    where = (n.loc or n.name) if n is not None else "model"
    return f"{where}: {describe_node(n)}: {reason}"


@dataclass
class Operand:
    """A binary op's other operand that is not an epilogue value."""
    text: str                  # as written in the spec: "2", "param[k]", "param[1]", "input1"; "" for a norm's weight
    kind: str = "number"       # number | tensor | bn_scale | bn_shift | input
    path: str = ""             # the parameter's module path, or the input's name


@dataclass
class Op:
    """One stage of the epilogue: value `name` = op(value x[, y])."""
    name: str
    op: str
    args: Tuple[Any, ...] = ()    # formatted spec arguments (strings)
    x: str = ""                   # the value it reads
    y: Any = None                 # a second value (str) or an Operand
    node: Optional[Node] = None
    reduce_dims: Tuple[int, ...] = ()  # for a keepdim reduction a later squeeze may fold into
    keepdim: bool = True
    # An affine norm's weight and bias: the spec does not write them, but numbers them with the param
    # operands in order of appearance (spec/stage_parser.cpp, add_affine), so params lists them too.
    learned: Tuple[Operand, ...] = ()


@dataclass
class Mapped:
    spec: str
    main: str                     # the main operator's text
    main_path: str
    stages: List[str]
    params: List[Operand] = field(default_factory=list)
    inputs: List[str] = field(default_factory=list)
    # Where the main operator's weight ("w") and bias ("bias", only when it has one) come from, and
    # which input of the model each extra input is: "conv.weight", "weight" (a parameter's path) or
    # "input:<i>" (forward's i-th argument), as an init file binds them. Extra inputs are keyed
    # input1, input2, ... in order of first use, as the parser numbers them (spec/parser.cpp,
    # parse_input) and the plan names its buffers, not by the k of the spec's `input<k>`.
    main_operands: Dict[str, str] = field(default_factory=dict)
    input_operands: Dict[str, str] = field(default_factory=dict)


def number_text(v):
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def _tuple_text(t):
    return str(t[0]) if all(x == t[0] for x in t) else "x".join(str(x) for x in t)


def _number(v, node, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Refused(node, f"{what} {v!r} is not a number")
    v = float(v)
    if not math.isfinite(v) or abs(v) > FP32_MAX:
        raise Refused(node, f"{what} {v!r} is outside the fp32 range")
    return v


def _refs(a):
    """The names of the values an argument refers to (graph.py walks tuples, lists and dicts)."""
    return (r.name for r in graph_refs(a))


def _dims(v, rank, node):
    if v is None:
        raise Refused(node, "a reduction over every dim (no dim=): the spec reduces over given dims of a batch")
    dims = v if isinstance(v, (tuple, list)) else (v,)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise Refused(node, f"dim={v!r} is not a list of integers")
    out = tuple(sorted({d % rank for d in dims}))
    if 0 in out:
        raise Refused(node, "a reduction over the batch dim (0): the spec's reductions keep the batch")
    return out


def dims_text(dims, rank):
    if rank >= 3 and tuple(dims) == tuple(range(2, rank)) and len(dims) > 1:
        return "spatial"
    return ",".join(str(d) for d in dims)


def _ntuple(v, n, node, what):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(x, int) for x in v):
        return tuple(int(x) for x in v)
    raise Refused(node, f"{what}={v!r} is not an integer or {n} integers")


class _Mapper:
    def __init__(self, graph: Graph):
        self.g = graph
        self.alias: Dict[str, str] = {}
        self.gshape: Dict[str, Tuple[int, ...]] = {}   # the value's shape in the model
        self.sshape: Dict[str, Tuple[int, ...]] = {}   # the value's shape in the spec (differs after unsqueeze)
        self.ops: List[Op] = []
        self.producer: Dict[str, Op] = {}
        self.values = set()      # names of epilogue values (after aliasing: their roots)
        self.operands: Dict[str, dict] = {}  # parameter-derived nodes: kind, path, shape, value, transposed
        self.inputs = [n for n in graph.nodes if n.op == "input"]
        self.main: Optional[Node] = None
        self.main_text = ""
        self.input_uses = []
        self.main_operands: Dict[str, str] = {}
        self.counter = 0

    # -- helpers -----------------------------------------------------------------------------
    def root(self, name):
        while name in self.alias:
            name = self.alias[name]
        return name

    def live(self):
        out = next((n for n in self.g.nodes if n.op == "output"), None)
        if out is None:
            raise Refused(None, "the model has no output")
        seen, todo = set(), [out.name]
        while todo:
            n = self.g.by_name[todo.pop()]
            if n.name in seen:
                continue
            seen.add(n.name)
            todo.extend(r for r in _refs((n.args, n.kwargs)) if r in self.g.by_name)
        return seen

    def fresh(self):
        self.counter += 1
        return f"_t{self.counter}"

    def add_op(self, op: Op, shape):
        self.ops.append(op)
        self.producer[op.name] = op
        self.values.add(op.name)
        self.gshape[op.name] = self.sshape[op.name] = tuple(shape)
        return op.name

    def value_of(self, a, u):
        """The epilogue value an argument refers to (None for anything else)."""
        if isinstance(a, Ref):
            r = self.root(a.name)
            if r in self.values:
                return r
        return None

    def virtual(self, v):
        return self.gshape[v] != self.sshape[v]

    def materialize(self, v, u):
        """Makes the spec's value have the model's shape: a squeeze of size-1 dims becomes the keepdim=false
        of the reduction that made them (when nothing else reads it), or a mean over them (exact)."""
        if not self.virtual(v):
            return v
        g, s = self.gshape[v], self.sshape[v]
        removed, i = [], 0
        for d, size in enumerate(s):
            if i < len(g) and g[i] == size:
                i += 1
            elif size == 1:
                removed.append(d)
            else:
                removed = None
                break
        if removed is None or i != len(g) or not removed:
            raise Refused(u, f"a reshape from {s} to {g}: the spec language has no reshape (only reductions change "
                             "the rank)")
        p = self.producer.get(v)
        if (p is not None and p.keepdim and p.reduce_dims and tuple(p.reduce_dims) == tuple(removed)
                and self.uses_in_graph.get(p.name, 0) <= 1):
            p.keepdim = False
            self.gshape[v] = self.sshape[v] = g
            return v
        name = self.add_op(Op(self.fresh(), "reduce_mean", (dims_text(removed, len(s)), "keepdim=false"), v, node=u), g)
        return name

    # -- operands ----------------------------------------------------------------------------
    def operand(self, a, value, result_shape, u):
        """A binary op's non-value operand, for the value `value` (spec shape)."""
        shape = self.gshape[value]
        if not isinstance(a, Ref):
            return Operand(number_text(_number(a, u, "operand")))
        n = self.g.by_name[a.name]
        if n.op == "input":
            k = self.inputs.index(n)
            if k == 0:
                raise Refused(u, "the model's input is read again after the main operator: a spec's operands are "
                                 "the main operator's output, other inputs of the output's shape, numbers, parameters")
            if tuple(n.shape or ()) != tuple(result_shape) or tuple(result_shape) != tuple(shape):
                raise Refused(u, f"input {n.name} of shape {n.shape} with a value of shape {shape}: an input operand "
                                 "must have the output's shape")
            if n.name not in self.input_uses:
                self.input_uses.append(n.name)
            return Operand(f"input{k}", "input", n.name)
        o = self.operands.get(self.root(a.name))
        if o is None:
            raise Refused(u, f"an operand computed by the model ({n.op} {n.name}) that is not an epilogue value")
        if o["kind"] == "const":
            return Operand(number_text(_number(o["value"], u, "operand")))
        pshape = tuple(o["shape"])
        if o.get("transposed"):
            raise Refused(u, f"a transposed parameter {o['path']} in the epilogue")
        if tuple(result_shape) != tuple(shape):
            raise Refused(u, f"{o['path']} of shape {pshape} broadcasts the value of shape {shape} to "
                             f"{tuple(result_shape)}: the spec's operands never change the value's shape")
        if math.prod(pshape) == 1:
            if pshape == () and o.get("value") is not None:
                return Operand(number_text(_number(o["value"], u, f"operand {o['path']}")))
            return Operand("param[1]", "tensor", o["path"])
        rank = len(shape)
        if len(pshape) <= rank and rank >= 2:
            padded = (1,) * (rank - len(pshape)) + pshape
            if padded[1] == shape[1] and all(d == 1 for i, d in enumerate(padded) if i != 1):
                return Operand("param[k]", "tensor", o["path"])
        raise Refused(u, f"operand {o['path']} of shape {pshape}: neither one value nor one per channel (dim 1) of "
                         f"the value of shape {shape}")

    def note_operand(self, u: Node):
        """Parameters, constants and their views: operands, not values. True when u is one."""
        if u.op == "param":
            self.operands[u.name] = {"kind": "param", "path": u.path, "shape": tuple(u.shape or ()), "value": u.value}
            return True
        if u.op == "const":
            if isinstance(u.value, (int, float)) and not isinstance(u.value, bool):
                self.operands[u.name] = {"kind": "const", "value": u.value, "shape": ()}
            return True
        src = u.args[0] if u.args else None
        if isinstance(src, Ref) and src.name in self.operands:
            base = dict(self.operands[src.name])
            if u.op in RESHAPES | ALIASES | {"expand"}:
                base["shape"] = tuple(u.shape or base["shape"])
                self.operands[u.name] = base
                return True
            if (u.op in ("t", "T") or (u.op == "getattr" and u.args[1:2] == ("T",))
                    or (u.op == "transpose" and len(base["shape"]) == 2)):
                base["transposed"] = not base.get("transposed", False)
                base["shape"] = tuple(u.shape or base["shape"][::-1])
                self.operands[u.name] = base
                return True
        return False

    # -- the main operator ---------------------------------------------------------------------
    def main_op(self, u: Node):
        x = u.args[0] if u.args else None
        shape = self.g.by_name[x.name].shape if isinstance(x, Ref) else None
        if not shape:
            raise Refused(u, "its input's shape is unknown")
        a, op = u.attrs, u.op
        if op in ("conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d"):
            nd = 3 if op.endswith("3d") else 2
            if len(shape) != nd + 2:
                raise Refused(u, f"its input has shape {shape}: a batched input of rank {nd + 2} is needed")
            if a.get("padding_mode", "zeros") != "zeros":
                raise Refused(u, f"padding_mode={a['padding_mode']!r}: fusetune pads with zeros")
            kernel = _ntuple(a["kernel_size"], nd, u, "kernel_size")
            stride = _ntuple(a.get("stride", 1), nd, u, "stride")
            dilation = _ntuple(a.get("dilation", 1), nd, u, "dilation")
            pad = a.get("padding", 0)
            if pad == "valid":
                pad = (0,) * nd
            elif pad == "same":
                total = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
                if any(t % 2 for t in total):
                    raise Refused(u, "padding='same' pads unevenly here; fusetune pads both sides alike")
                pad = tuple(t // 2 for t in total)
            pad = _ntuple(pad, nd, u, "padding")
            if shape[1] != a["in_channels"]:
                raise Refused(u, f"its input has {shape[1]} channels, the conv {a['in_channels']}")
            dims = "".join(f"{k}={v}," for k, v in zip(("d", "h", "w") if nd == 3 else ("h", "w"), shape[2:]))
            ks = "".join(f"{k}={v}," for k, v in zip(("t", "r", "s") if nd == 3 else ("r", "s"), kernel))
            text = (f"{op}(n={shape[0]},c={shape[1]},{dims}k={a['out_channels']},{ks}stride={_tuple_text(stride)},"
                    f"pad={_tuple_text(pad)},")
            if op.startswith("conv_transpose"):
                text += f"out_pad={_tuple_text(_ntuple(a.get('output_padding', 0), nd, u, 'output_padding'))},"
            text += f"dilation={_tuple_text(dilation)},"
            if a.get("groups", 1) != 1:
                text += f"groups={a['groups']},"
            self.main_operands = self._module_operands(u)
            return text + f"bias={'true' if a.get('bias', True) else 'false'})", x.name
        if op == "linear":
            if len(shape) != 2:
                raise Refused(u, f"nn.Linear on an input of shape {shape}: the spec's linear reads (m, k)")
            self.main_operands = self._module_operands(u)
            return (f"linear(m={shape[0]},k={shape[1]},n={a['out_features']}" +
                    ("" if a.get("bias", True) else ",bias=false") + ")"), x.name
        # functions: F.linear(x, W, b), matmul/mm/bmm(x, W or input)
        other = u.args[1] if len(u.args) > 1 else u.kwargs.get("weight", u.kwargs.get("other"))
        o = self.operands.get(other.name) if isinstance(other, Ref) else None
        if op == "linear_functional":
            bias = u.args[2] if len(u.args) > 2 else u.kwargs.get("bias")
            if o is None or o.get("transposed") or len(o["shape"]) != 2 or len(shape) != 2:
                raise Refused(u, "F.linear of a weight that is not a 2-d parameter, or an input not of rank 2")
            bias_operand = self.operands.get(bias.name, {}) if isinstance(bias, Ref) else {}
            if bias is not None and bias_operand.get("kind") != "param":  # a constant has no path to bind
                raise Refused(u, "F.linear with a bias that is not a parameter")
            self.main_operands = {"w": o["path"]}
            if bias is not None:
                self.main_operands["bias"] = bias_operand["path"]
            return (f"linear(m={shape[0]},k={shape[1]},n={o['shape'][0]}" +
                    ("" if bias is not None else ",bias=false") + ")"), x.name
        if o is not None and o["kind"] == "param":
            w = o["shape"]
            if len(shape) != 2 or len(w) != 2:
                raise Refused(u, f"{op} of shapes {shape} and {w}: with a parameter, (m, k) times a 2-d weight")
            self.main_operands = {"w": o["path"]}  # W (k, n), or W (n, k) read transposed: the spec says which
            if o.get("transposed"):  # x @ W.T with W (n, k): nn.Linear's product, no bias
                return f"linear(m={shape[0]},k={shape[1]},n={w[1]},bias=false)", x.name
            return f"matmul(m={shape[0]},k={shape[1]},n={w[1]})", x.name
        b = self.g.by_name[other.name] if isinstance(other, Ref) else None
        trans_b = False
        while b is not None and b.op in ("transpose", "t", "getattr") and b.args and isinstance(b.args[0], Ref):
            if b.op == "getattr" and b.args[1:2] != ("T",):
                break
            if b.op == "transpose" and tuple(sorted(d % len(b.shape) for d in b.args[1:3])) != (len(b.shape) - 2,
                                                                                              len(b.shape) - 1):
                raise Refused(u, "a transpose of other dims than the last two")
            trans_b = not trans_b
            b = self.g.by_name[b.args[0].name]
        if b is None or b.op != "input" or self.inputs.index(b) == 0:
            raise Refused(u, f"{op} whose second operand is neither a parameter nor another model input")
        self.input_uses.append(b.name)
        self.main_operands = {"w": f"input:{self.inputs.index(b)}"}
        bs = tuple(b.shape)
        if len(shape) != len(bs) or len(shape) not in (2, 3):
            raise Refused(u, f"{op} of shapes {shape} and {bs}: (m, k)x(k, n) or (batch, m, k)x(batch, k, n)")
        n_ = bs[-2] if trans_b else bs[-1]
        batch = f"batch={shape[0]}," if len(shape) == 3 else ""
        return (f"matmul({batch}m={shape[-2]},k={shape[-1]},n={n_}" + (",trans_b=true" if trans_b else "") + ")",
                x.name)

    @staticmethod
    def _module_operands(u: Node):
        """A main operator module's weight and bias, by their paths in the model."""
        out = {"w": f"{u.path}.weight"}
        if u.attrs.get("bias", True):
            out["bias"] = f"{u.path}.bias"
        return out

    @staticmethod
    def _affine(u: Node, on):
        """The learned weight and bias of the norm module u when it has them (Op.learned)."""
        return (Operand("", "tensor", f"{u.path}.weight"), Operand("", "tensor", f"{u.path}.bias")) if on else ()

    # -- epilogue ops --------------------------------------------------------------------------
    def convert(self, u: Node):
        op = u.op[:-1] if u.op.endswith("_") and not u.op.startswith("_") else u.op
        op = op.lstrip("_")
        data = u.args[0] if u.args else u.kwargs.get("input")
        a = u.attrs
        if op in ("getitem", "getattr") and isinstance(data, Ref) and data.name in self.pending_index:
            idx = u.args[1] if len(u.args) > 1 else None
            if idx in (0, "values"):
                self.alias[u.name] = self.pending_index[data.name]
                return
            raise Refused(u, f"the indices of {self.g.by_name[data.name].op}(dim=...): fusetune computes values only")
        v = self.value_of(data, u)
        # aliases
        if op in ALIASES and v is not None:
            self.alias[u.name] = v
            return
        if op in ("dropout", "dropout2d", "dropout3d", "feature_alpha_dropout", "alpha_dropout") and v is not None:
            p = _arg(u, 1, "p", 0.5)
            training = a.get("training") if "training" in a else _arg(u, 2, "training", True)
            if training and p and self.value_range(v) == (0.0, 0.0):
                # Every element is exactly 0 (KernelBench 83: min(x, 0) then clamp(0, 1)), and dropout
                # keeps a 0 a 0 whatever it draws: here it is the identity, and the output is not random.
                self.alias[u.name] = v
                return
            if training and p:
                raise Refused(u, f"dropout in training mode (p={p}) zeroes a random part of the value: the output is "
                                 "random, a spec is one function (run without --train: dropout is then the identity)")
            self.alias[u.name] = v
            return
        if v is None:
            others = [r for r in _refs((u.args, u.kwargs)) if self.root(r) in self.values]
            if not others:
                raise Refused(u, "an op fusetune does not place in the epilogue")
            v = self.root(others[0])
        shape = tuple(u.shape or ())
        if op in UNARY or op in ("relu6", "gelu", "leaky_relu", "hardtanh", "softplus", "clamp", "clip", "pow",
                                 "square"):
            if not (isinstance(data, Ref) and self.root(data.name) == v):
                raise Refused(u, "an elementwise op whose first argument is not the value")
            args = ()
            if op == "relu6":
                op, args = "hardtanh", ("0", "6")
            elif op == "gelu":
                approx = _arg(u, 1, "approximate", "none")
                if approx not in ("none", "tanh"):
                    raise Refused(u, f"gelu(approximate={approx!r})")
                op = "gelu" if approx == "none" else "gelu_tanh"
            elif op == "leaky_relu":
                args = (number_text(_number(_arg(u, 1, "negative_slope", 0.01), u, "slope")),)
            elif op == "hardtanh":
                lo, hi = _number(_arg(u, 1, "min_val", -1.0), u, "min_val"), _number(_arg(u, 2, "max_val", 1.0), u,
                                                                                     "max_val")
                args = (number_text(lo), number_text(hi))
            elif op == "softplus":
                beta, thr = _number(_arg(u, 1, "beta", 1.0), u, "beta"), _number(_arg(u, 2, "threshold", 20.0), u,
                                                                                  "threshold")
                if beta <= 0:
                    raise Refused(u, "softplus with beta <= 0")
                args = (number_text(beta), number_text(thr))
            elif op == "pow":
                if _arg(u, 1, "exponent", None) not in (2, 2.0):
                    raise Refused(u, f"pow with exponent {_arg(u, 1, 'exponent', None)!r}: only 2 (square)")
                op = "square"
            elif op in ("clamp", "clip"):
                lo, hi = _arg(u, 1, "min", None), _arg(u, 2, "max", None)
                for b in (lo, hi):
                    if isinstance(b, Ref) and self.operands.get(self.root(b.name), {}).get("kind") != "const":
                        raise Refused(u, "clamp with a tensor bound: the spec's clamp takes numbers")
                num = [None if b is None else _number(self.operands[self.root(b.name)]["value"] if isinstance(b, Ref)
                                                      else b, u, "clamp bound") for b in (lo, hi)]
                if num[0] is None and num[1] is None:
                    self.alias[u.name] = v
                    return
                if num[0] is not None and num[1] is not None:
                    if num[0] > num[1]:
                        raise Refused(u, f"clamp({num[0]}, {num[1]}) with min > max")
                    op, args = "clamp", (number_text(num[0]), number_text(num[1]))
                else:
                    op, args = ("max", (number_text(num[0]),)) if num[0] is not None else ("min", (number_text(num[1]),))
                    self.gshape[u.name] = shape
                    return self._emit(Op(u.name, op, (), v, Operand(args[0]), node=u), v, shape)
            return self._emit(Op(u.name, op, args, v, node=u), v, shape)
        if op in BINARY and (len(u.args) >= 2 or "other" in u.kwargs) and not (op in ("max", "min") and self._has_dim(u)):
            return self.binary(u, BINARY[op], shape)
        if op in REDUCE or (op in REDUCE_WITH_INDICES and self._has_dim(u)) or op == "logsumexp":
            return self.reduction(u, v, op, shape)
        if op in ("softmax", "log_softmax"):
            dim = _arg(u, 1, "dim", None)
            if dim is None:
                raise Refused(u, f"{op} without dim")
            v = self.materialize(v, u)
            rank = len(self.gshape[v])
            return self.add_op(Op(u.name, op, (str(dim % rank),), v, node=u), shape)
        if op in RESHAPES:
            return self.reshape(u, v, op, shape)
        if op.startswith(("max_pool", "avg_pool")):
            return self.pool(u, v, op, shape)
        if op.startswith("adaptive_avg_pool"):
            nd = int(op[-2])
            size = _arg(u, 1, "output_size", None)
            if size not in (1, (1,) * nd, [1] * nd):
                raise Refused(u, f"adaptive average pool to {size!r}: the spec pools adaptively to 1 only")
            v = self.materialize(v, u)
            rank = len(self.gshape[v])
            o = Op(u.name, f"adaptive_avg_pool{nd}d", ("1",), v, node=u, reduce_dims=tuple(range(rank - nd, rank)))
            return self.add_op(o, shape)
        if op == "batch_norm":
            return self.batch_norm(u, v, shape)
        if op == "group_norm":
            v = self.materialize(v, u)
            s = self.gshape[v]
            if a.get("num_channels") != s[1]:
                raise Refused(u, f"GroupNorm over {a.get('num_channels')} channels of a value of shape {s}")
            args = [str(a["num_groups"])] + self._eps(a) + ([] if a.get("affine", True) else ["affine=false"])
            return self.add_op(Op(u.name, "group_norm", tuple(args), v, node=u,
                                  learned=self._affine(u, a.get("affine", True))), shape)
        if op.startswith("instance_norm"):
            return self.instance_norm(u, v, op, shape)
        if op == "layer_norm":
            v = self.materialize(v, u)
            s = self.gshape[v]
            ns = a.get("normalized_shape")
            ns = tuple(ns) if isinstance(ns, (tuple, list)) else (ns,)
            if s[len(s) - len(ns):] != ns:
                raise Refused(u, f"LayerNorm{ns} on a value of shape {s}")
            if a.get("elementwise_affine", True) and not a.get("has_bias", True):
                raise Refused(u, "LayerNorm(bias=False): the spec's layer_norm has a weight and a bias or neither")
            args = [str(len(ns))] + self._eps(a) + ([] if a.get("elementwise_affine", True) else ["affine=false"])
            return self.add_op(Op(u.name, "layer_norm", tuple(args), v, node=u,
                                  learned=self._affine(u, a.get("elementwise_affine", True))), shape)
        raise Refused(u, f"{op} is not an epilogue op the spec language has")

    def _has_dim(self, u):
        return (len(u.args) > 1 and not isinstance(u.args[1], Ref)) or "dim" in u.kwargs

    def _eps(self, a):
        eps = a.get("eps", 1e-5)
        return [] if eps == 1e-5 else [f"eps={number_text(eps)}"]

    def value_range(self, v):
        """(lo, hi) bounds on every element of value v that its clamping ops prove (min, max, clamp,
        relu, hardtanh with numbers); (-inf, inf) where nothing is known."""
        inf = float("inf")
        op = self.producer.get(v)
        if op is None:
            return (-inf, inf)
        lo, hi = self.value_range(op.x) if op.x else (-inf, inf)

        def number(t):
            try:
                return float(t)
            except (TypeError, ValueError):
                return None
        c = number(op.y.text) if isinstance(op.y, Operand) and op.y.kind == "number" else None
        if op.op == "min" and c is not None:
            return (min(lo, c), min(hi, c))
        if op.op == "max" and c is not None:
            return (max(lo, c), max(hi, c))
        if op.op == "relu":
            return (max(lo, 0.0), max(hi, 0.0))
        if op.op in ("clamp", "hardtanh") and len(op.args) == 2:
            a, b = number(op.args[0]), number(op.args[1])
            if a is not None and b is not None:
                return (min(max(lo, a), b), max(min(hi, b), a))
        return (-inf, inf)

    def _emit(self, op: Op, v, shape):
        """An elementwise op: a virtual shape passes through (scalars only)."""
        self.ops.append(op)
        self.producer[op.name] = op
        self.values.add(op.name)
        self.sshape[op.name] = self.sshape[v]
        self.gshape[op.name] = tuple(shape) if shape else self.gshape[v]
        return op.name

    def binary(self, u, op, shape):
        a0 = u.args[0] if u.args else u.kwargs.get("input")
        a1 = u.args[1] if len(u.args) > 1 else u.kwargs.get("other")
        if u.kwargs.get("alpha", 1) != 1:
            raise Refused(u, f"{op} with alpha={u.kwargs['alpha']!r}")
        if u.kwargs.get("rounding_mode") is not None:
            raise Refused(u, f"div with rounding_mode={u.kwargs['rounding_mode']!r}")
        v0, v1 = self.value_of(a0, u), self.value_of(a1, u)
        if v0 is not None and v1 is not None:
            v0, v1 = self.materialize(v0, u), self.materialize(v1, u)
            s0, s1 = self.gshape[v0], self.gshape[v1]
            if tuple(shape) not in (s0, s1):
                raise Refused(u, f"{op} of values of shapes {s0} and {s1} broadcasts both: an outer broadcast")
            return self.add_op(Op(u.name, op, (), v0, v1, node=u), shape)
        v, other, swapped = (v0, a1, False) if v0 is not None else (v1, a0, True)
        if v is None:
            raise Refused(u, f"{op} of no epilogue value")
        opnd = self.operand(other, v, shape, u)
        if opnd.kind != "number":
            v = self.materialize(v, u)
            opnd = self.operand(other, v, shape, u)
        if swapped and op in ("sub", "div"):
            op = "r" + op
        return self._emit(Op(u.name, op, (), v, opnd, node=u), v, shape)

    def reduction(self, u, v, op, shape):
        v = self.materialize(v, u)
        s = self.gshape[v]
        dims = _dims(_arg(u, 1, "dim", None), len(s), u)
        keepdim = bool(_arg(u, 2, "keepdim", False))
        with_indices = op in REDUCE_WITH_INDICES and op not in REDUCE
        name = {"logsumexp": "logsumexp"}.get(op) or REDUCE.get(op) or REDUCE_WITH_INDICES[op]
        if all(s[d] == 1 for d in dims) and keepdim:  # over size-1 dims: the identity (logsumexp too)
            self.alias[u.name] = v
            if with_indices:
                self.pending_index[u.name] = v
                del self.alias[u.name]
            return
        args = (dims_text(dims, len(s)),) + (() if keepdim else ("keepdim=false",))
        o = Op(u.name, name, args, v, node=u, reduce_dims=dims if keepdim else (), keepdim=keepdim)
        out = tuple(1 if i in dims else d for i, d in enumerate(s)) if keepdim else \
            tuple(d for i, d in enumerate(s) if i not in dims)
        self.add_op(o, out)
        if with_indices:
            self.pending_index[u.name] = u.name

    def reshape(self, u, v, op, shape):
        """unsqueeze/squeeze/view that only add or remove size-1 dims: the spec's value keeps its shape."""
        g = self.gshape[v]
        if [d for d in g if d != 1] != [d for d in shape if d != 1]:
            raise Refused(u, f"{op} from {g} to {shape}: the spec language has no reshape")
        # a new name for the same spec value, with the model's shape of its own
        self.values.add(u.name)
        self.sshape[u.name] = self.sshape[v]
        self.gshape[u.name] = tuple(shape)
        self.producer[u.name] = self.producer.get(v)
        self.reshaped[u.name] = v

    def pool(self, u, v, op, shape):
        nd = int(op[-2])
        kind = op.split("_pool")[0]
        a = u.attrs
        kernel = _ntuple(_arg(u, 1, "kernel_size", None), nd, u, "kernel_size")
        stride = _arg(u, 2, "stride", None)
        stride = kernel if stride in (None, (), []) else _ntuple(stride, nd, u, "stride")
        pad = _ntuple(_arg(u, 3, "padding", 0), nd, u, "padding")
        if kind == "max":
            dilation = _ntuple(_arg(u, 4, "dilation", 1), nd, u, "dilation")
            ceil, include, divisor = _arg(u, 5, "ceil_mode", False), True, None
            if _arg(u, 6, "return_indices", False):
                raise Refused(u, "a max pool that returns its indices")
            if dilation != (1,) * nd:
                raise Refused(u, f"a max pool with dilation {dilation}: the spec's pools are dense")
        else:
            ceil, include, divisor = (_arg(u, 4, "ceil_mode", False), _arg(u, 5, "count_include_pad", True),
                                      _arg(u, 6, "divisor_override", None))
        if ceil:
            raise Refused(u, "a pool with ceil_mode=True: the spec's pools floor the output size")
        if divisor is not None:
            raise Refused(u, f"an average pool with divisor_override={divisor}")
        g, s = self.gshape[v], self.sshape[v]
        one_d_on_features = (nd == 1 and self.virtual(v) and len(s) == 2 and g == (s[0], 1, s[1]))
        if not one_d_on_features:
            v = self.materialize(v, u)
            g = s = self.gshape[v]
            if len(g) != nd + 2:
                raise Refused(u, f"{op} on a value of shape {g}: a batched value of rank {nd + 2}")
        if stride == kernel and pad == (0,) * nd and include:
            args = (_tuple_text(kernel),)
        else:
            args = (f"kernel={_tuple_text(kernel)}", f"stride={_tuple_text(stride)}", f"pad={_tuple_text(pad)}")
            if kind == "avg" and not include:
                args += ("count_include_pad=false",)
        if one_d_on_features:
            return self._emit_virtual(Op(u.name, op, args, v, node=u), (s[0], shape[-1]), shape)
        return self.add_op(Op(u.name, op, args, v, node=u), shape)

    def _emit_virtual(self, op, sshape, gshape):
        self.ops.append(op)
        self.producer[op.name] = op
        self.values.add(op.name)
        self.sshape[op.name] = tuple(sshape)
        self.gshape[op.name] = tuple(gshape)
        return op.name

    def batch_norm(self, u, v, shape):
        a = u.attrs
        v = self.materialize(v, u)
        s = self.gshape[v]
        if a.get("num_features") not in (None, s[1]):
            raise Refused(u, f"BatchNorm over {a.get('num_features')} features of a value of shape {s}")
        if a.get("training", False) or not a.get("track_running_stats", True):
            args = self._eps(a) + ([] if a.get("affine", True) else ["affine=false"])
            return self.add_op(Op(u.name, "batch_norm", tuple(args), v, node=u,
                                  learned=self._affine(u, a.get("affine", True))), shape)
        mid = self.add_op(Op(self.fresh(), "mul", (), v, Operand("param[k]", "bn_scale", u.path), node=u), shape)
        return self.add_op(Op(u.name, "add", (), mid, Operand("param[k]", "bn_shift", u.path), node=u), shape)

    def instance_norm(self, u, v, op, shape):
        a = u.attrs
        nd = int(op[-2])
        if a.get("track_running_stats", False) and not a.get("training", False):
            raise Refused(u, "InstanceNorm with running statistics in eval mode: the spec's instance_norm uses the "
                             "statistics of each instance")
        g, s = self.gshape[v], self.sshape[v]
        if nd == 2 and self.virtual(v) and len(s) == 2 and g == (s[0], 1, 1, s[1]):
            if a.get("affine", False):
                raise Refused(u, "InstanceNorm2d(affine=True) on x.unsqueeze(1).unsqueeze(1): its one channel's "
                                 "weight is not a layer_norm's")
            # normalizes the (1, F) plane of each of B instances: a layer norm over F
            args = ("1",) + tuple(self._eps(a)) + ("affine=false",)
            return self._emit_virtual(Op(u.name, "layer_norm", args, v, node=u), s, shape)
        v = self.materialize(v, u)
        s = self.gshape[v]
        if len(s) != nd + 2:
            raise Refused(u, f"InstanceNorm{nd}d on a value of shape {s}")
        args = tuple(self._eps(a)) + (("affine=true",) if a.get("affine", False) else ())
        return self.add_op(Op(u.name, "instance_norm", args, v, node=u,
                              learned=self._affine(u, a.get("affine", False))), shape)

    # -- the whole model -------------------------------------------------------------------------
    def run(self):
        live = self.live()
        self.pending_index: Dict[str, str] = {}
        self.reshaped: Dict[str, str] = {}
        self.uses_in_graph = {n.name: sum(1 for w in self.g.users_of(n.name) if w.name in live and not _reads_metadata(w))
                              for n in self.g.nodes}
        if not self.inputs:
            raise Refused(None, "the model has no input")
        x0 = self.inputs[0].name
        before_main = {x0}
        out_node = None
        for u in self.g.nodes:
            if u.name not in live or u.op == "input" or _reads_metadata(u):
                continue
            if u.op == "output":
                out_node = u
                continue
            if self.note_operand(u):
                continue
            refs = {self.root(r) for r in _refs((u.args, u.kwargs))}
            if self.main is None:
                if refs & before_main:
                    if u.op in ALIASES:
                        self.alias[u.name] = self.root(u.args[0].name)
                        continue
                    if u.op in MAIN_MODULES or u.op in MAIN_FUNCTIONS:
                        if not (u.args and isinstance(u.args[0], Ref) and self.root(u.args[0].name) == x0):
                            raise Refused(u, "the main operator does not read the model's input directly")
                        self.main_text, _ = self.main_op(u)
                        self.main = u
                        self.values.add(u.name)
                        self.gshape[u.name] = self.sshape[u.name] = tuple(u.shape)
                        continue
                    raise Refused(u, "an op before the main operator: a spec starts with its main operator "
                                     "(conv, linear, matmul) on the model's input")
                continue
            if x0 in refs:
                if u.op in ALIASES:
                    self.alias[u.name] = x0
                    continue
                raise Refused(u, "the model's input is read again after the main operator: a spec's operands are "
                                 "the main operator's output, other model inputs of the output's shape, numbers and "
                                 "parameters")
            if (u.op in MAIN_MODULES or u.op in MAIN_FUNCTIONS) and refs & (self.values | set(self.pending_index)):
                raise Refused(u, "a second main operator: a spec has one (conv, linear or matmul), then its epilogue")
            self.convert(u)
        if self.main is None:
            raise Refused(None, "no main operator (nn.Conv2d/3d, nn.ConvTranspose2d/3d, nn.Linear, matmul, bmm) "
                                "reads the model's input")
        if out_node is None or len(out_node.args) != 1 or not isinstance(out_node.args[0], Ref):
            raise Refused(out_node, "the model returns more than one tensor")
        result = self.root(out_node.args[0].name)
        if result not in self.values:
            raise Refused(out_node, "the model's output is not computed from its main operator")
        result = self.materialize(result, out_node)
        return result

    def uses(self, result):
        count = {}
        for o in self.ops:
            for v in (o.x, o.y):
                if isinstance(v, str):
                    count[v] = count.get(v, 0) + 1
        count[result] = count.get(result, 0) + 1
        return count

    def rewrite(self, result):
        """The exact rewrites (module docstring), until none applies."""
        changed = True
        while changed:
            changed = False
            use = self.uses(result)
            by = {o.name: o for o in self.ops}

            def single(name, op, x=None, y=None):
                o = by.get(name)
                return (o is not None and o.op == op and use.get(name, 0) == 1 and (x is None or o.x == x)
                        and (y is None or o.y == y))

            def num(o, value):
                return isinstance(o.y, Operand) and o.y.kind == "number" and float(o.y.text) == value

            for i, o in enumerate(self.ops):
                new, gone = None, []
                pair = [o.x, o.y] if isinstance(o.y, str) else None
                if o.op == "add" and pair and o.x == o.y:
                    new = Op(o.name, "mul", (), o.x, Operand("2"), node=o.node)
                elif o.op == "mul" and pair:
                    for a, b in (pair, pair[::-1]):
                        bo = by.get(b)
                        if single(b, "sigmoid", x=a):
                            new, gone = Op(o.name, "silu", (), a, node=o.node), [b]
                        elif single(b, "tanh") and single(bo.x, "softplus", x=a) and by[bo.x].args == ("1", "20"):
                            new, gone = Op(o.name, "mish", (), a, node=o.node), [b, bo.x]
                        elif (single(b, "clamp") and bo.args == ("0", "1") and single(bo.x, "div") and num(by[bo.x], 6)
                              and single(by[bo.x].x, "add", x=a) and num(by[by[bo.x].x], 3)):
                            new, gone = Op(o.name, "hardswish", (), a, node=o.node), [b, bo.x, by[bo.x].x]
                        if new:
                            break
                elif o.op == "div" and num(o, 6) and single(o.x, "mul") and isinstance(by[o.x].y, str):
                    m = by[o.x]
                    for a, b in ([m.x, m.y], [m.y, m.x]):
                        bo = by.get(b)
                        if (single(b, "hardtanh") and bo.args == ("0", "6") and single(bo.x, "add", x=a)
                                and num(by[bo.x], 3)):
                            new, gone = Op(o.name, "hardswish", (), a, node=o.node), [m.name, b, bo.x]
                            break
                elif o.op == "add" and pair:
                    for a, b in (pair, pair[::-1]):
                        if single(b, "mul", x=a) and isinstance(by[b].y, Operand) and by[b].y.kind == "number":
                            c = float(by[b].y.text) + 1
                            new, gone = Op(o.name, "mul", (), a, Operand(number_text(c)), node=o.node), [b]
                            break
                if new is not None:
                    self.ops[i] = new
                    self.ops = [p for p in self.ops if p.name not in gone]
                    changed = True
                    break

    def linearize(self, result):
        use = self.uses(result)
        stages, names, params, inputs = [], {}, [], {}
        letters = iter("abcdefghijklmnopqrstuvwxyz")

        def settle(v, nxt):
            """After v becomes the current value: name it when anything but the next op reads it."""
            if use.get(v, 0) >= 2 or (use.get(v, 0) == 1 and not (nxt is not None and v in (nxt.x, nxt.y))):
                if v == result and use.get(v, 0) == 1:
                    return
                names[v] = next(letters)
                stages.append(f"as {names[v]}")

        ops = self.ops
        cur = self.main.name
        settle(cur, ops[0] if ops else None)
        for i, o in enumerate(ops):
            op, x, y = o.op, o.x, o.y
            if x != cur:
                if isinstance(y, str) and y == cur:
                    if op in COMMUTATIVE:
                        x, y = y, x
                    elif op in ("sub", "div"):
                        op, x, y = "r" + op, y, x
                    else:
                        raise Refused(o.node, f"{op} reads an earlier value first")
                else:
                    raise Refused(o.node, "the epilogue branches here (it reads a value other than the one computed "
                                          "just before, with neither operand the current value): the spec language has "
                                          "one chain with named values")
            if isinstance(y, str):
                if y not in names:
                    raise Refused(o.node, "an operand value that was never named")
                operand = names[y]
            elif isinstance(y, Operand):
                operand = y.text
                if y.kind in ("tensor", "bn_scale", "bn_shift"):
                    params.append(y)
                elif y.kind == "input":
                    source = f"input:{self.inputs.index(self.g.by_name[y.path])}"
                    if source not in inputs.values():
                        inputs[f"input{len(inputs) + 1}"] = source
            else:
                operand = None
            args = list(o.args)
            if o.op.startswith("adaptive_avg_pool") and not o.keepdim:
                op, args = "reduce_mean", [dims_text(o.reduce_dims, len(self.gshape[o.x])), "keepdim=false"]
            elif o.reduce_dims and not o.keepdim and "keepdim=false" not in args:
                args.append("keepdim=false")
            if operand is not None:
                args = [operand] + args
            stages.append(f"{op}({','.join(args)})" if args else op)
            params.extend(o.learned)
            cur = o.name
            settle(cur, ops[i + 1] if i + 1 < len(ops) else None)
        if cur != result:
            raise Refused(None, "the epilogue's last value is not the model's output")
        return stages, params, inputs


def map_model(graph: Graph) -> Mapped:
    """The model as one spec line; raises Refused with the node and the reason."""
    m = _Mapper(graph)
    result = m.run()

    def spec_value(name):  # an unsqueeze/squeeze is the value it reshapes
        while name in m.reshaped:
            name = m.reshaped[name]
        return name
    for o in m.ops:
        o.x = spec_value(o.x)
        if isinstance(o.y, str):
            o.y = spec_value(o.y)
    result = spec_value(result)
    m.rewrite(result)
    stages, params, inputs = m.linearize(result)
    main = m.main_text
    return Mapped(" | ".join([main] + stages), main, m.main.path or m.main.name, stages, params, m.input_uses,
                  m.main_operands, inputs)
