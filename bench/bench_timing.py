"""How the bench scripts run and time PyTorch, in one place: its math mode, the median of
triton.testing.do_bench (CUDA events, L2 flushed between runs, 50 ms of warm-up, 400 ms of
runs), torch.compile's builds of a model (both autotuning modes, named) timed the same way,
interleaved rounds for figures that are compared with each other, and ranges over repeated runs."""
import sys
import time

import torch
import triton.testing


def torch_math(math):
    """PyTorch's cuDNN convs and matmuls on TF32 tensor cores (its default for convs) or strict
    fp32; cudnn.benchmark on, so eager runs cuDNN's fastest algorithm. Through the settings torch
    2.9+ reads (`fp32_precision`: Inductor's Triton conv and matmul templates take ALLOW_TF32 from
    them; set only the old `allow_tf32` flags and its autotune logs of torch 2.11 said
    ALLOW_TF32=False), else the old flags. What PyTorch then reports goes to stderr, so a run's log
    shows the mode every contender ran in."""
    tf32 = math == "tf32"
    precision = "tf32" if tf32 else "ieee"
    if hasattr(torch.backends.cuda.matmul, "fp32_precision") and hasattr(torch.backends.cudnn, "conv"):
        torch.backends.cuda.matmul.fp32_precision = precision
        torch.backends.cudnn.conv.fp32_precision = precision
        shown = (f"cuda.matmul.fp32_precision={torch.backends.cuda.matmul.fp32_precision} "
                 f"cudnn.conv.fp32_precision={torch.backends.cudnn.conv.fp32_precision}")
    else:
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        shown = (f"cudnn.allow_tf32={torch.backends.cudnn.allow_tf32} "
                 f"cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}")
    torch.backends.cudnn.benchmark = True
    print(f"torch {torch.__version__} math {math}: {shown}", file=sys.stderr)


def bench(fn):
    return triton.testing.do_bench(fn, warmup=50, rep=400, return_mode="median")


# torch.compile's two autotuning modes, by their names: max-autotune adds CUDA graphs, which
# hide launch overheads a model run op by op pays; the tables name the mode of each figure.
COMPILE_MODES = ("max-autotune-no-cudagraphs", "max-autotune")


def compile_model(model, x, label, mode="max-autotune-no-cudagraphs"):
    """torch.compile(model, mode=mode), built on x; its build time to stderr."""
    t0 = time.time()
    compiled = torch.compile(model, mode=mode)
    compiled(x)
    torch.cuda.synchronize()
    print(f"{label}: torch.compile(mode={mode!r}) took {time.time() - t0:.0f} s", file=sys.stderr)
    return compiled


def bench_compiled(model, x, label, mode="max-autotune-no-cudagraphs"):
    """torch.compile(model, mode=mode) timed on x; its build time to stderr."""
    compiled = compile_model(model, x, label, mode)
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


def bench_runs(fns, runs=3, rounds=INTERLEAVED_ROUNDS):
    """bench_interleaved `runs` times: {name: [each run's median]} (the figures the tables quote
    as min-median-max ranges: one run's median is one reading, never the result)."""
    out = {name: [] for name in fns}
    for _ in range(runs):
        for name, (med, _lo, _hi) in bench_interleaved(fns, rounds).items():
            out[name].append(med)
    return out


def span(values):
    """min-median-max of a list of figures, as the tables print them."""
    s = sorted(v for v in values if v == v)
    if not s:
        return "-"
    return f"{s[0]:.3f}-{s[len(s) // 2]:.3f}-{s[-1]:.3f}"
