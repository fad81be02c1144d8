"""A PyTorch model as graph.py's nodes: traced by torch.fx, shapes by propagation on the meta device
(no real compute, no real memory: any size), each call reduced to the op key match.py and
model_map.py know, with the file line it comes from."""
import operator
import os
import re
import warnings

import torch
import torch.fx
import torch.nn as nn
from torch.fx.passes.shape_prop import ShapeProp

from .graph import Graph, Node, Ref

_CONV = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "padding_mode")
_POOL = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices", "count_include_pad",
         "divisor_override")
_BN = ("training", "track_running_stats", "eps", "affine", "num_features")
# module class -> (op key, attributes to keep)
_MODULES = {
    nn.Conv2d: ("conv2d", _CONV),
    nn.Conv3d: ("conv3d", _CONV),
    nn.ConvTranspose2d: ("conv_transpose2d", _CONV + ("output_padding",)),
    nn.ConvTranspose3d: ("conv_transpose3d", _CONV + ("output_padding",)),
    nn.Linear: ("linear", ("in_features", "out_features")),
    nn.BatchNorm1d: ("batch_norm", _BN), nn.BatchNorm2d: ("batch_norm", _BN), nn.BatchNorm3d: ("batch_norm", _BN),
    nn.GroupNorm: ("group_norm", ("num_groups", "num_channels", "eps", "affine")),
    nn.InstanceNorm1d: ("instance_norm1d", _BN), nn.InstanceNorm2d: ("instance_norm2d", _BN),
    nn.InstanceNorm3d: ("instance_norm3d", _BN),
    nn.LayerNorm: ("layer_norm", ("normalized_shape", "eps", "elementwise_affine")),
    nn.MaxPool1d: ("max_pool1d", _POOL), nn.MaxPool2d: ("max_pool2d", _POOL), nn.MaxPool3d: ("max_pool3d", _POOL),
    nn.AvgPool1d: ("avg_pool1d", _POOL), nn.AvgPool2d: ("avg_pool2d", _POOL), nn.AvgPool3d: ("avg_pool3d", _POOL),
    nn.AdaptiveAvgPool1d: ("adaptive_avg_pool1d", ("output_size",)),
    nn.AdaptiveAvgPool2d: ("adaptive_avg_pool2d", ("output_size",)),
    nn.AdaptiveAvgPool3d: ("adaptive_avg_pool3d", ("output_size",)),
    nn.Softmax: ("softmax", ("dim",)), nn.LogSoftmax: ("log_softmax", ("dim",)),
    nn.ReLU: ("relu", ()), nn.Tanh: ("tanh", ()), nn.Sigmoid: ("sigmoid", ()), nn.SiLU: ("silu", ()),
    nn.Mish: ("mish", ()), nn.Hardswish: ("hardswish", ()), nn.Hardsigmoid: ("hardsigmoid", ()),
    nn.GELU: ("gelu", ("approximate",)), nn.LeakyReLU: ("leaky_relu", ("negative_slope",)),
    nn.ReLU6: ("relu6", ()), nn.Hardtanh: ("hardtanh", ("min_val", "max_val")),
    nn.Softplus: ("softplus", ("beta", "threshold")),
    nn.Identity: ("identity", ()),
    nn.Dropout: ("dropout", ("p", "training")), nn.Dropout1d: ("dropout", ("p", "training")),
    nn.Dropout2d: ("dropout2d", ("p", "training")), nn.Dropout3d: ("dropout", ("p", "training")),
}
_FUNCTIONS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
    operator.neg: "neg", operator.getitem: "getitem", operator.pow: "pow", operator.matmul: "matmul",
    torch.nn.functional.conv2d: "conv2d_functional", torch.nn.functional.batch_norm: "batch_norm_functional",
    torch.nn.functional.linear: "linear_functional",
}
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


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


def _location(n):
    """FILE:LINE of the user's code that made the node: the innermost frame outside torch and
    fusetune (torch.fx records the stack when the tracer is asked to)."""
    frames = _FRAME.findall(getattr(n, "stack_trace", None) or "")
    mine = [(f, ln) for f, ln in frames if f"{os.sep}torch{os.sep}" not in f and "fusetune_torch" not in f]
    if not mine:
        return ""
    f, ln = mine[-1]
    return f"{os.path.basename(f)}:{ln}"


def _trace(model):
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(model)
    return torch.fx.GraphModule(tracer.root, graph)


def _shapes(input_shape):
    """One shape (a tuple of ints, the old form) or a list of shapes (the model's inputs)."""
    if input_shape and all(isinstance(d, int) for d in input_shape):
        return [tuple(input_shape)]
    return [tuple(s) for s in input_shape]


def to_graph(model: nn.Module, input_shape, train=False) -> Graph:
    """Traces the model (in eval mode; with train, in training mode: batch statistics, active
    dropout) and propagates fp32 inputs of input_shape (one shape, or one per model input) on
    the meta device. The values of one-element tensors (a parameter made of torch.tensor(c)) are
    read before the model moves there; nothing of the size of a weight or an activation is
    allocated by the propagation."""
    model = model.train() if train else model.eval()
    gm = _trace(model)
    values = {}
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            t = _fetch(gm, n.target)
            if isinstance(t, torch.Tensor) and t.numel() == 1 and t.device.type != "meta":
                values[n.target] = float(t.detach().reshape(-1)[0])
    shapes = _shapes(input_shape)
    gm = gm.to("meta")
    with warnings.catch_warnings():  # a module's own complaints (InstanceNorm2d's num_features) are not ours
        warnings.simplefilter("ignore")
        ShapeProp(gm).propagate(*[torch.empty(*s, dtype=torch.float32, device="meta") for s in shapes])
    modules = dict(gm.named_modules())
    nodes = []
    for n in gm.graph.nodes:
        args, kwargs, shape, loc = _arg(tuple(n.args)), _arg(dict(n.kwargs)), _shape(n), _location(n)
        if n.op == "placeholder":
            nodes.append(Node(n.name, "input", shape=shape, loc=loc))
        elif n.op == "output":
            nodes.append(Node(n.name, "output", args, loc=loc))
        elif n.op == "get_attr":
            t = _fetch(gm, n.target)
            if isinstance(t, torch.Tensor):
                nodes.append(Node(n.name, "param", path=n.target, shape=tuple(t.shape), value=values.get(n.target),
                                  loc=loc))
            else:
                nodes.append(Node(n.name, "const", value=t, loc=loc))
        elif n.op == "call_module":
            m = modules[n.target]
            op, keep = next(((op, keep) for cls, (op, keep) in _MODULES.items() if type(m) is cls),
                            (f"module:{type(m).__name__}", ()))
            attrs = {a: getattr(m, a) for a in keep if hasattr(m, a)}
            if isinstance(m, (nn.Conv2d, nn.Conv3d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Linear)):
                attrs["bias"] = m.bias is not None
            if isinstance(m, nn.LayerNorm):
                attrs["has_bias"] = m.bias is not None
            attrs["module"] = type(m).__name__
            nodes.append(Node(n.name, op, args, kwargs, attrs, path=n.target, shape=shape, loc=loc))
        elif n.op == "call_function":
            if n.target is torch.tensor and args and isinstance(args[0], (int, float)) and not isinstance(args[0], bool):
                nodes.append(Node(n.name, "const", value=float(args[0]), shape=shape, loc=loc))
                continue
            op = _FUNCTIONS.get(n.target) or getattr(n.target, "__name__", str(n.target))
            nodes.append(Node(n.name, op, args, kwargs, shape=shape, loc=loc))
        else:  # call_method
            nodes.append(Node(n.name, str(n.target), args, kwargs, shape=shape, loc=loc))
    return Graph(nodes)
