"""Where fusetune's own figure of a winner and its exported module's part: an exported module
(`fusetune export --format torch`, a .py or .py.gz) timed per call between CUDA events with the GPU
kept busy while the host enqueues (torch.cuda._sleep before each start event, as fusetune's spin),
in four regimes:

    python3 bench/diag_timing_regimes.py MODULE.py[.gz]...

Written for kernelbench-31's 3xTF32 winner (fusetune 2.529 ms, its module 2.76-2.83 ms back to
back: docs/perf-notes.md, "Timing: what the figures predict"); not yet run. The regimes:
  alone      the call, back to back, 60 samples;
  mixed      each call followed by a 6 ms memory-bound copy (as fusetune's rounds put the unfused
             plan and cuDNN's conv between the winner's samples);
  idle       each call followed by 5 ms of host sleep (the GPU idles);
  fusetune-x alone, with x drawn as fusetune draws it (odd multiples of 2^-25 in (0, 1)).
Needs a CUDA GPU and torch."""
import gzip
import importlib.util
import os
import statistics
import sys
import time

import torch


def load(i, given):
    path = given
    if given.endswith(".gz"):
        path = f"/tmp/diag_timing_module_{os.getpid()}_{i}.py"
        with gzip.open(given) as f, open(path, "wb") as g:
            g.write(f.read())
    spec = importlib.util.spec_from_file_location(f"diag_module_{i}", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m  # torch.compile and the custom op find modules by name
    spec.loader.exec_module(m)
    return m


def timed(fn, after=None, n=60):
    out = []
    for _ in range(n):
        torch.cuda._sleep(1000000)  # ~0.5 ms of GPU work: the host's enqueue never reaches the events
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record()
        if after:
            after()
        out.append((a, b))
    torch.cuda.synchronize()
    t = [a.elapsed_time(b) for a, b in out]
    return statistics.median(t), min(t)


big_a = torch.empty(int(1.5e9) // 4, device="cuda")
big_b = torch.empty_like(big_a)
with torch.no_grad():
    for i, given in enumerate(sys.argv[1:]):
        m = load(i, given)
        torch.manual_seed(0)
        model = m.Model(*m.get_init_inputs()).cuda().eval()
        x = torch.rand(*m.INPUT_SHAPE, device="cuda")
        k = torch.randint(0, 2 ** 24, m.INPUT_SHAPE, device="cuda", dtype=torch.int64)
        x_ft = ((2 * k + 1).double() * 2.0 ** -25).float()
        del k
        run = lambda: model(x)  # noqa: E731
        for _ in range(20):
            run()
        rows = {
            "alone": timed(run),
            "mixed": timed(run, after=lambda: big_b.copy_(big_a)),
            "idle": timed(run, after=lambda: (torch.cuda.synchronize(), time.sleep(0.005))),
            "alone again": timed(run),
            "fusetune-x": timed(lambda: model(x_ft)),
        }
        print(f"{os.path.basename(given)} ({m.MATH}): " + " | ".join(f"{k} median {v[0]:.3f} min {v[1]:.3f}" for k, v in rows.items()), flush=True)
