"""Runs a fusetune variant (the `variant` object of `fusetune tune --json`) from PyTorch.

The plan's cuDNN conv steps run through torch (cuDNN, same layouts); its generated kernels are
compiled from the variant's own source with NVRTC through CuPy and launched on torch tensors
with the plan's launch shapes. Buffers follow src/codegen/variant.hpp.
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
        w = conv.weight.detach()
        self.w = w.contiguous()
        self.w_krsc = w.permute(0, 2, 3, 1).contiguous()
        self.bufs = {}

    def _buf(self, name, like_elems):
        t = self.bufs.get(name)
        if t is None or t.numel() < like_elems:
            t = torch.empty(like_elems, device="cuda", dtype=torch.float32)
            self.bufs[name] = t
        return t

    def __call__(self, x):
        """x: (N,C,H,W) contiguous fp32. Returns the output as an NCHW-shaped tensor."""
        n, c, h, w_ = x.shape
        k = self.conv.out_channels
        bufs = {"x": x, "w": self.w, "w_krsc": self.w_krsc, "chan": self.chan}
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)  # noqa: deprecated name, still works
        y_shape = None
        for st in self.v["plan"]:
            if st["kind"] == "cudnn_conv":
                inp = bufs[st["in"]]
                bias = self.chan[:k] if st["with_bias"] else None
                if st["layout"] == "nhwc":
                    xin = inp.view(n, h, w_, c).permute(0, 3, 1, 2)  # NCHW view of NHWC memory
                    wt = self.w_krsc.view(k, self.conv.kernel_size[0], self.conv.kernel_size[1], c).permute(0, 3, 1, 2)
                else:
                    xin = inp.view(n, c, h, w_)
                    wt = self.w
                y = F.conv2d(xin, wt, bias, self.conv.stride, self.conv.padding, self.conv.dilation)
                if st["layout"] == "nhwc":
                    y = y.contiguous(memory_format=torch.channels_last)
                    y_shape = ("nhwc", y.shape)
                    bufs[st["out"]] = y.permute(0, 2, 3, 1).reshape(-1)
                else:
                    y = y.contiguous()
                    y_shape = ("nchw", y.shape)
                    bufs[st["out"]] = y.reshape(-1)
            else:
                ptrs = []
                for a in st["args"]:
                    if a not in bufs:
                        elems = self._elems(a, n, c, h, w_, y_shape)
                        bufs[a] = self._buf(a, elems)
                    ptrs.append(cupy.uint64(bufs[a].data_ptr()))
                with stream:
                    self.fns[st["kernel"]](tuple(st["grid"]), tuple(st["block"]), tuple(ptrs), shared_mem=st["smem"])
        out = bufs[self.v["output_buffer"]]
        p, q = y_shape[1][2], y_shape[1][3]
        cout = self.out_channels
        if self.v["output_layout"] == "nhwc":
            return out[: n * p * q * cout].view(n, p, q, cout).permute(0, 3, 1, 2)
        return out[: n * cout * p * q].view(n, cout, p, q)

    def _elems(self, name, n, c, h, w_, y_shape):
        if name == "x_nhwc":
            return n * c * h * w_
        if name == "w_krsc":
            return self.w_krsc.numel()
        ys = y_shape[1]
        if name == "out":  # the problem's output: (N, out_channels, P, Q)
            return ys[0] * self.out_channels * ys[2] * ys[3]
        return ys[0] * ys[1] * ys[2] * ys[3]
