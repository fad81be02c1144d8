#!/usr/bin/env python3
"""A stand-in for a python3 with torch, for GPU- and torch-free tests of `fusetune from-torch`
(FUSETUNE_PYTHON=this file). It runs the embedded package exactly as the binary asks
(`-m fusetune_torch.from_torch ARGS...`), with only the tracing replaced: `torch` is an empty
module and fx_adapter.to_graph returns the graph torch.fx makes of KernelBench level 2 #31
(conv -> min(0.5) -> + bias -> * 2), whatever the model file holds. Everything after the trace
(matching, the spec file, -o/--json and their "-") is the real code. python/tests trace real
models where torch is installed."""
import runpy
import sys
import types

torch = types.ModuleType("torch")
overrides = types.ModuleType("torch.overrides")


class TorchFunctionMode:
    """from_torch's meta-device mode is one of these; here it changes nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


overrides.TorchFunctionMode = TorchFunctionMode
torch.overrides = overrides
torch.Size = tuple
torch.Tensor = type("Tensor", (), {})
for factory in ("empty", "zeros", "ones", "rand", "randn", "full"):
    setattr(torch, factory, lambda *a, **k: None)
sys.modules["torch"] = torch
sys.modules["torch.overrides"] = overrides

from fusetune_torch.graph import Graph, Node, Ref  # noqa: E402  (the embedded package: PYTHONPATH)

CONV = {"in_channels": 3, "out_channels": 16, "kernel_size": (3, 3), "stride": (1, 1), "padding": (0, 0),
        "dilation": (1, 1), "groups": 1, "padding_mode": "zeros", "bias": True}


def to_graph(model, shapes, train=False):
    input_shape = shapes[0]
    k = CONV["out_channels"]
    n, _, h, w = input_shape
    y = (n, k, h - 2, w - 2)  # the 3x3 conv's output, as shape propagation records it
    return Graph([
        Node("x", "input", shape=tuple(input_shape)),
        Node("conv", "conv2d", (Ref("x"),), attrs=dict(CONV, in_channels=input_shape[1]), path="conv", shape=y),
        Node("dev", "getattr", (Ref("conv"), "device")),
        Node("c05", "const", value=0.5, kwargs={"device": Ref("dev")}, shape=()),
        Node("bias", "param", path="bias", shape=(k, 1, 1)),
        Node("n0", "min", (Ref("conv"), Ref("c05")), shape=y),
        Node("n1", "add", (Ref("n0"), Ref("bias")), shape=y),
        Node("n2", "mul", (Ref("n1"), 2.0), shape=y),
        Node("out", "output", (Ref("n2"),), shape=y),
    ])


adapter = types.ModuleType("fusetune_torch.fx_adapter")
adapter.to_graph = to_graph
sys.modules["fusetune_torch.fx_adapter"] = adapter

if sys.argv[1:3] != ["-m", "fusetune_torch.from_torch"]:
    sys.exit(f"from_torch_stub.py: expected -m fusetune_torch.from_torch ARGS..., got {sys.argv[1:]}")
sys.argv = [sys.argv[2]] + sys.argv[3:]
runpy.run_module("fusetune_torch.from_torch", run_name="__main__", alter_sys=True)
