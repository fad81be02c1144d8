"""Where a patched model's time goes: the GPU's work against the host's (issue 14).

    python3 bench/profile_patch.py --patch PATCH.py [--patch OTHER.py ...] --model FILE.py:Class
        --input-shape N,C,H,W [--init-args JSON] [--math tf32|fp32] [--compile] [--trace OUT.json.gz]

PATCH.py is a module `fusetune export --format torch-patch` wrote for the model (several: compared
in one process). Prints, for the original in eager mode and the model patched with each:
  - the median ms of a forward (triton's do_bench, L2 flushed: what bench/patch_model.py reports);
  - the same forward replayed from a CUDA graph (the GPU's work alone, no host work);
  - the host's time to enqueue one forward (the call to its return, the GPU idle before it): when
    it comes near the GPU's time, the forward is host-bound;
  - each patched block's host time, measured the same way;
  - torch.profiler's table of the host's time per operation (top rows), and with --trace its
    Chrome trace.
No GPU (or no torch): exit 77.
"""
import argparse
import copy
import gzip
import os
import statistics
import sys
import time

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))


def host_us(fn, n=30):
    """Median microseconds of host time per call of fn: from the call to its return, the GPU idle
    before each call (so the launch queue never makes the host wait)."""
    times = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return statistics.median(times) * 1e6


def graph_of(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--patch", required=True, action="append", help="a torch-patch module (repeat to compare)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--input-shape", required=True)
    ap.add_argument("--init-args")
    ap.add_argument("--math", choices=["tf32", "fp32"], default="tf32")
    ap.add_argument("--trace", help="the last module's profile as a Chrome trace (.json or .json.gz)")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile(original, max-autotune-no-cudagraphs)")
    args = ap.parse_args()
    if torch is None or not torch.cuda.is_available():
        print("skip: no CUDA GPU (or no torch)")
        return 77
    sys.path.insert(0, HERE)
    from bench_timing import bench, torch_math  # noqa: E402
    from patch_model import build_model, load  # noqa: E402

    torch_math(args.math)
    shape = tuple(int(v) for v in args.input_shape.split(","))
    model = build_model(args.model, args.init_args).cuda().eval()
    x = torch.rand(*shape, device="cuda")

    def report(label, m):
        g = graph_of(lambda: m(x))
        print(f"{label}: do_bench {bench(lambda: m(x)):.3f} ms | CUDA graph {bench(lambda: g.replay()):.3f} ms"
              f" | host {host_us(lambda: m(x)):.0f} us per forward", flush=True)

    prof = None
    with torch.no_grad():
        report("original (eager)", model)
        if args.compile:
            compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
            compiled(x)
            print(f"torch.compile (max-autotune-no-cudagraphs): do_bench {bench(lambda: compiled(x)):.3f} ms")
        for i, path in enumerate(args.patch):
            patch_mod = load(path, f"fusetune_patch_{i}")
            patched = patch_mod.patch(copy.deepcopy(model))
            report(f"patched with {os.path.basename(path)}", patched)
            blocks = [(n, m) for n, m in patched.forward.__self__.named_children() if n.startswith("fusetune_block")]
            seen = {}  # each block alone, on the input it sees in the model
            hooks = [m.register_forward_pre_hook(lambda mod, inp, name=name: seen.__setitem__(name, inp[0]))
                     for name, m in blocks]
            patched(x)
            for h in hooks:
                h.remove()
            for name, m in blocks:
                xin = seen[name]
                g = graph_of(lambda: m(xin))
                layout = "NCHW" if xin.is_contiguous() else "NHWC"
                print(f"  {name} (input {layout}): do_bench {bench(lambda: m(xin)):.3f} ms | graph "
                      f"{bench(lambda: g.replay()):.3f} ms | host {host_us(lambda: m(xin)):.0f} us", flush=True)
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    patched(x)
                torch.cuda.synchronize()
            print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25, max_name_column_width=60))
    if args.trace and prof is not None:  # the last module's
        tmp = args.trace[:-3] if args.trace.endswith(".gz") else args.trace
        prof.export_chrome_trace(tmp)
        if tmp != args.trace:
            with open(tmp, "rb") as f, gzip.open(args.trace, "wb") as g:
                g.write(f.read())
            os.remove(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
