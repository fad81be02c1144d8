"""A PyTorch model as graph.py's nodes: traced by torch.fx, shapes by fake-tensor propagation
(no real compute, any size), each call reduced to the op key match.py knows."""
import operator

import torch
import torch.fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from .graph import Graph, Node, Ref

# module class -> (op key, attributes to keep)
_MODULES = {
    nn.Conv2d: ("conv2d", ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                           "padding_mode")),
    nn.BatchNorm2d: ("batch_norm", ("training", "track_running_stats", "eps", "affine")),
    nn.ReLU: ("relu", ()), nn.Tanh: ("tanh", ()), nn.Sigmoid: ("sigmoid", ()), nn.SiLU: ("silu", ()),
    nn.Mish: ("mish", ()), nn.Hardswish: ("hardswish", ()), nn.Hardsigmoid: ("hardsigmoid", ()),
    nn.GELU: ("gelu", ("approximate",)), nn.LeakyReLU: ("leaky_relu", ("negative_slope",)),
    nn.ReLU6: ("relu6", ()), nn.Hardtanh: ("hardtanh", ("min_val", "max_val")),
    nn.Softplus: ("softplus", ("beta", "threshold")),
    nn.Identity: ("identity", ()), nn.Dropout: ("dropout", ()), nn.Dropout2d: ("dropout2d", ()),
}
_FUNCTIONS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.neg: "neg", operator.getitem: "getitem", operator.pow: "pow",
    torch.nn.functional.conv2d: "conv2d_functional", torch.nn.functional.batch_norm: "batch_norm_functional",
}


def _arg(a):
    if isinstance(a, torch.fx.Node):
        return Ref(a.name)
    if isinstance(a, (tuple, list)):
        return tuple(_arg(x) for x in a)
    if isinstance(a, dict):
        return {k: _arg(v) for k, v in a.items()}
    if isinstance(a, (torch.device, torch.dtype, torch.memory_format)):
        return str(a)
    return a


def _shape(n):
    meta = n.meta.get("tensor_meta")
    return tuple(int(d) for d in meta.shape) if meta is not None and hasattr(meta, "shape") else None


def _fetch(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def to_graph(model: nn.Module, input_shape) -> Graph:
    """Traces the model (in eval mode) and propagates an input of input_shape (NCHW, fp32)."""
    model = model.eval()
    gm = torch.fx.symbolic_trace(model)
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        mode = FakeTensorMode(allow_non_fake_inputs=True)
        with mode:
            x = torch.empty(*input_shape, dtype=torch.float32)
        ShapeProp(gm, fake_mode=mode).propagate(x)
    except Exception:  # noqa: BLE001 - an older torch, or an op fake tensors cannot run
        ShapeProp(gm).propagate(torch.rand(*input_shape))
    modules = dict(gm.named_modules())
    nodes = []
    for n in gm.graph.nodes:
        args, kwargs, shape = _arg(tuple(n.args)), _arg(dict(n.kwargs)), _shape(n)
        if n.op == "placeholder":
            nodes.append(Node(n.name, "input", shape=shape))
        elif n.op == "output":
            nodes.append(Node(n.name, "output", args))
        elif n.op == "get_attr":
            t = _fetch(gm, n.target)
            value = None
            if isinstance(t, torch.Tensor):
                if t.numel() == 1:
                    value = float(t.detach().reshape(-1)[0])
                nodes.append(Node(n.name, "param", path=n.target, shape=tuple(t.shape), value=value))
            else:
                nodes.append(Node(n.name, "const", value=t))
        elif n.op == "call_module":
            m = modules[n.target]
            op, keep = next(((op, keep) for cls, (op, keep) in _MODULES.items() if type(m) is cls),
                            (f"module:{type(m).__name__}", ()))
            attrs = {a: getattr(m, a) for a in keep}
            if isinstance(m, nn.Conv2d):
                attrs["bias"] = m.bias is not None
            nodes.append(Node(n.name, op, args, kwargs, attrs, path=n.target, shape=shape))
        elif n.op == "call_function":
            if n.target is torch.tensor and args and isinstance(args[0], (int, float)) and not isinstance(args[0], bool):
                nodes.append(Node(n.name, "const", value=float(args[0]), shape=shape))
                continue
            op = _FUNCTIONS.get(n.target) or getattr(n.target, "__name__", str(n.target))
            nodes.append(Node(n.name, op, args, kwargs, shape=shape))
        else:  # call_method
            nodes.append(Node(n.name, str(n.target), args, kwargs, shape=shape))
    return Graph(nodes)
