"""Runs a fusetune variant (a `variant` object of `fusetune tune --json`) from PyTorch.

The plan's cuDNN conv steps run through torch (cuDNN, same layouts); its generated kernels are
compiled from the variant's own source with NVRTC and launched on torch tensors with the plan's
launch shapes. Buffers come from the variant's own table (src/codegen/variant.hpp): inputs by
kind, scratch sized by the table.

Compiled as fusetune compiles them (src/gpu/compiler.cpp): -std=c++17 -default-device, and
--fmad=false under --math fp32. An arch-specific variant (fused-conv: wgmma, setmaxnreg) is
compiled for sm_XXa through cuda-python's NVRTC bindings, since CuPy compiles for the plain
architecture only, and loaded from its CUBIN. A step the plan marks untimed (the fused conv's
filter pack: the filters are parameters, packed once) runs on the first call only, as fusetune
runs it outside the timed region.
"""
import os
import tempfile

import cupy
import torch
import torch.nn.functional as F


def _options(math):
    return ("-std=c++17", "-default-device") + (("--fmad=false",) if math == "fp32" else ())


def _arch_specific_module(source, math):
    """A CuPy module of `source` compiled for this GPU's arch-specific target (sm_90a)."""
    from cuda.bindings import nvrtc
    major, minor = torch.cuda.get_device_capability()
    opts = [f"--gpu-architecture=sm_{major}{minor}a".encode()] + [o.encode() for o in _options(math)]

    def check(result, what):
        err = result[0]
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC {what}: {err}")
        return result[1:]

    (prog,) = check(nvrtc.nvrtcCreateProgram(source.encode(), b"fusetune.cu", 0, [], []), "create")
    err = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        (size,) = check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"NVRTC compile: {err}\n{log.decode(errors='replace')[-2000:]}")
    (size,) = check(nvrtc.nvrtcGetCUBINSize(prog), "CUBIN size")
    cubin = b" " * size
    check(nvrtc.nvrtcGetCUBIN(prog, cubin), "CUBIN")
    nvrtc.nvrtcDestroyProgram(prog)
    # CuPy loads a module from its file lazily (at the first get_function): the file stays until
    # the process ends.
    fd, path = tempfile.mkstemp(suffix=".cubin", prefix="fusetune-replay-")
    with os.fdopen(fd, "wb") as f:
        f.write(cubin)
    return cupy.RawModule(path=path)


class Replay:
    def __init__(self, variant, conv, chan, out_channels, math="tf32"):
        """variant: dict; conv: nn.Conv2d (weights); chan: 1-D float tensor [bias][param0]...;
        out_channels: channels of the problem's output (1 after a channel reduction)."""
        self.v = variant
        self.out_channels = out_channels
        self.conv = conv
        self.chan = chan.contiguous()
        self.fns = {}
        self.calls = 0
        if variant["source"]:
            if variant.get("arch_specific"):
                mod = _arch_specific_module(variant["source"], math)
            else:
                mod = cupy.RawModule(code=variant["source"], options=_options(math))
            for st in variant["plan"]:
                if st["kind"] == "kernel":
                    fn = mod.get_function(st["kernel"])
                    if st["smem"] > fn.max_dynamic_shared_size_bytes:
                        fn.max_dynamic_shared_size_bytes = st["smem"]
                    self.fns[st["kernel"]] = fn
        self.w = conv.weight.detach().contiguous()
        self.floats = {}
        for b in variant["buffers"]:
            n = 1
            for _, e in b["dims"]:
                n *= e
            self.floats[b["name"]] = n
        self.kinds = {b["name"]: b["kind"] for b in variant["buffers"]}
        self.input_nhwc = any(b["kind"] == "input" and b["layout"] == "nhwc" for b in variant["buffers"])
        self.scratch = {}

    def _scratch(self, name):
        t = self.scratch.get(name)
        if t is None:
            t = torch.empty(self.floats[name], device="cuda", dtype=torch.float32)
            self.scratch[name] = t
        return t

    def __call__(self, x):
        """x: (N,C,H,W) fp32, contiguous (torch.channels_last for an NHWC-input problem). Returns
        the output as an NCHW-shaped tensor (a view of NHWC memory for an NHWC-output plan)."""
        n, c, h, w_ = x.shape
        k = self.conv.out_channels
        r, s = self.conv.kernel_size
        # A channels-last problem's input buffer is NHWC memory: x in torch.channels_last, whose
        # (N, H, W, C) permutation is a view of that memory (no copy).
        flat = x.permute(0, 2, 3, 1).reshape(-1) if self.input_nhwc else x.reshape(-1)
        inputs = {"input": flat, "filters": self.w.reshape(-1), "channels": self.chan}
        # Scratch kept from earlier calls first: an untimed step (skipped after the first call)
        # wrote some of it, e.g. the filters a conv or kernel step reads.
        bufs = dict(self.scratch)
        bufs.update({name: inputs[kind] for name, kind in self.kinds.items() if kind in inputs})
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        (sh, sw), (ph, pw), (dh, dw) = self.conv.stride, self.conv.padding, self.conv.dilation
        p = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1  # no conv step in a fused conv's plan
        q = (w_ + 2 * pw - dw * (s - 1) - 1) // sw + 1
        first = self.calls == 0
        self.calls += 1
        for st in self.v["plan"]:
            if not st.get("timed", True) and not first:
                continue  # the filter pack: its output (scratch, kept) depends on the weights only
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


def replayable(variant):
    """False for a plan with a cuDNN graph step (cudnn-fused), which torch cannot run."""
    return not any(st["kind"] == "cudnn_graph" for st in variant["plan"])


def best_other(report):
    """The fastest verified solution of a `tune --json` report whose candidate is not the winner's."""
    win = report["winner"]
    others = [r for r in report["results"] if r["role"] == "solution" and r["verified"] and r["time_ms"]
              and r["candidate"] != win["candidate"]]
    return min(others, key=lambda r: r["time_ms"]["median"], default=None)
