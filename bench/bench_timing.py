"""How the bench scripts run and time PyTorch, in one place: its math mode, the median of
triton.testing.do_bench (CUDA events, L2 flushed between runs, 50 ms of warm-up, 400 ms of
runs), torch.compile's max-autotune-no-cudagraphs build of a model timed the same way, and
interleaved rounds for figures that are compared with each other."""
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


def compile_model(model, x, label):
    """torch.compile(model, mode="max-autotune-no-cudagraphs"), built on x; its build time to stderr."""
    t0 = time.time()
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    compiled(x)
    torch.cuda.synchronize()
    print(f"{label}: torch.compile took {time.time() - t0:.0f} s", file=sys.stderr)
    return compiled


def bench_compiled(model, x, label):
    """torch.compile(model, mode="max-autotune-no-cudagraphs") timed on x; its build time to stderr."""
    compiled = compile_model(model, x, label)
    return bench(lambda: compiled(x))


INTERLEAVED_ROUNDS = 7  # bench_interleaved's default; the tables' captions quote it


def bench_interleaved(fns, rounds=INTERLEAVED_ROUNDS, rep=100):
    """{name: fn} timed in turn, round after round (do_bench's median of `rep` ms per turn), so
    that clock and power drift over the run fall on every contender alike instead of on whichever
    ran in a warm or cool spell (call 58, one contender after another: the exported module read
    1.200 ms and the replay of the same CUBIN 1.269 on kernelbench-31, 2.037 and 1.918 on
    kernelbench-32). Returns {name: (median of the rounds' medians, lowest, highest)}."""
    times = {name: [] for name in fns}
    for fn in fns.values():  # warm every contender once before the first round
        triton.testing.do_bench(fn, warmup=25, rep=25, return_mode="median")
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(triton.testing.do_bench(fn, warmup=10, rep=rep, return_mode="median"))
    out = {}
    for name, ts in times.items():
        s = sorted(ts)
        out[name] = (s[len(s) // 2], s[0], s[-1])
    return out
