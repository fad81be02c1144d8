"""How the bench scripts run and time PyTorch, in one place: its math mode, the median of
triton.testing.do_bench (CUDA events, L2 flushed between runs, 50 ms of warm-up, 400 ms of
runs), and torch.compile's max-autotune-no-cudagraphs build of a model timed the same way."""
import sys
import time

import torch
import triton.testing


def torch_math(math):
    """PyTorch's cuDNN convs and matmuls on TF32 tensor cores (its default for convs) or strict
    fp32; cudnn.benchmark on, so eager runs cuDNN's fastest algorithm."""
    tf32 = math == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True


def bench(fn):
    return triton.testing.do_bench(fn, warmup=50, rep=400, return_mode="median")


def bench_compiled(model, x, label):
    """torch.compile(model, mode="max-autotune-no-cudagraphs") timed on x; its build time to stderr."""
    t0 = time.time()
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    compiled(x)
    torch.cuda.synchronize()
    print(f"{label}: torch.compile took {time.time() - t0:.0f} s", file=sys.stderr)
    return bench(lambda: compiled(x))
