"""Runs a fusetune variant (a `variant` object of `fusetune tune --json`) from PyTorch.

The plan's cuDNN conv steps run through torch (cuDNN, same layouts); its generated kernels are
compiled from the variant's own source with NVRTC through CuPy and launched on torch tensors
with the plan's launch shapes. Buffers come from the variant's own table
(src/codegen/variant.hpp): inputs by kind, scratch sized by the table.
"""
import cupy
import torch
import torch.nn.functional as F


class Replay:
    def __init__(self, variant, conv, chan, out_channels):
        """variant: dict; conv: nn.Conv2d (weights); chan: 1-D float tensor [bias][param0]...;
        out_channels: channels of the problem's output (1 after a channel reduction)."""
        self.v = variant
        self.out_channels = out_channels
        self.conv = conv
        self.chan = chan.contiguous()
        self.fns = {}
        if variant["source"]:
            mod = cupy.RawModule(code=variant["source"], options=("-std=c++17",))
            for st in variant["plan"]:
                if st["kind"] == "kernel":
                    self.fns[st["kernel"]] = mod.get_function(st["kernel"])
        self.w = conv.weight.detach().contiguous()
        self.floats = {}
        for b in variant["buffers"]:
            n = 1
            for _, e in b["dims"]:
                n *= e
            self.floats[b["name"]] = n
        self.kinds = {b["name"]: b["kind"] for b in variant["buffers"]}
        self.scratch = {}

    def _scratch(self, name):
        t = self.scratch.get(name)
        if t is None:
            t = torch.empty(self.floats[name], device="cuda", dtype=torch.float32)
            self.scratch[name] = t
        return t

    def __call__(self, x):
        """x: (N,C,H,W) contiguous fp32. Returns the output as an NCHW-shaped tensor."""
        n, c, h, w_ = x.shape
        k = self.conv.out_channels
        r, s = self.conv.kernel_size
        inputs = {"input": x.reshape(-1), "filters": self.w.reshape(-1), "channels": self.chan}
        bufs = {name: inputs[kind] for name, kind in self.kinds.items() if kind in inputs}
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        p = q = None
        for st in self.v["plan"]:
            if st["kind"] == "cudnn_conv":
                inp = bufs[st["in"]]
                filters = bufs[st["filters"]]
                bias = bufs[st["bias"]][:k] if st["bias"] is not None else None
                if st["layout"] == "nhwc":
                    xin = inp.view(n, h, w_, c).permute(0, 3, 1, 2)  # NCHW view of NHWC memory
                    wt = filters.view(k, r, s, c).permute(0, 3, 1, 2)
                else:
                    xin = inp.view(n, c, h, w_)
                    wt = filters.view(k, c, r, s)
                y = F.conv2d(xin, wt, bias, self.conv.stride, self.conv.padding, self.conv.dilation)
                p, q = y.shape[2], y.shape[3]
                if st["layout"] == "nhwc":
                    bufs[st["out"]] = y.contiguous(memory_format=torch.channels_last).permute(0, 2, 3, 1).reshape(-1)
                else:
                    bufs[st["out"]] = y.contiguous().reshape(-1)
            else:
                ptrs = []
                for a in st["args"]:
                    if a not in bufs:
                        bufs[a] = self._scratch(a)
                    ptrs.append(cupy.uint64(bufs[a].data_ptr()))
                with stream:
                    self.fns[st["kernel"]](tuple(st["grid"]), tuple(st["block"]), tuple(ptrs), shared_mem=st["smem"])
        out = bufs[self.v["output"]]
        cout = self.out_channels
        if self.v["output_layout"] == "nhwc":
            return out[: n * p * q * cout].view(n, p, q, cout).permute(0, 3, 1, 2)
        return out[: n * cout * p * q].view(n, cout, p, q)
