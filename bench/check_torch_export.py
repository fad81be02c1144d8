"""Checks PyTorch modules written by `fusetune export --format torch` against the KernelBench
reference models, on a GPU.

    python3 bench/check_torch_export.py --m31 model31.py --m32 model32.py [--math tf32|fp32]
        [--tune-json-dir DIR] [--kernelbench CHECKOUT]

For each preset given: builds the reference model (KernelBench level 2, problems 31 and 32, read
from a KernelBench checkout: --kernelbench, else $KERNELBENCH, else .kernelbench; the repository
holds no copy), loads its state_dict() into the exported Model (same constructor, same parameter
names), runs both on the same torch.rand input of the preset's shape and compares:
    every element: |out - ref| <= tol + tol * |ref|     and     relative L2 error <= tol
with tol = 1e-2 under tf32 (the default: PyTorch's defaults, TF32 allowed for cuDNN convolutions)
and 1e-4 under --math fp32 (TF32 off for both models). It also checks that
  - the module runs its CUBIN with no compiler: importing CuPy or any NVRTC binding fails in this
    process, and no libnvrtc is mapped by the import and first call that was not mapped before;
  - torch.compile(model, fullgraph=True) traces through its custom op and gives the same output,
    and a CUDA graph captured after a warm-up call replays it on a new input with the same output;
  - the exported constructor refuses arguments the kernels were not generated for, a wrong input
    shape is refused, and a second call does not overwrite the first call's output;
  - with --tune-json-dir (the `tune --json` reports of the winners, tune-PRESET-MATH.json): the
    module's forward, timed like the other bench scripts (triton do_bench median), is within 5%
    of fusetune's own timing of the winner.

Exit status: 0 all passed, 1 a check failed, 77 skipped (no CUDA GPU, or torch missing).
"""
import argparse
import importlib.abc
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelbench_files  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SKIP = 77


class NoCompiler(importlib.abc.MetaPathFinder):
    """Fails every import of CuPy or an NVRTC binding: the modules must not compile anything."""

    def find_spec(self, name, path, target=None):
        if name == "cupy" or name.startswith("cupy.") or "nvrtc" in name:
            raise ImportError(f"fusetune's exported module imported {name}: it must run its CUBIN without a compiler")
        return None


def nvrtc_mapped():
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f if "nvrtc" in line}


def reference_model(checkout, number):
    """KernelBench's reference Model class, from its problem file in the checkout."""
    return kernelbench_files.load_problem(kernelbench_files.problem_file(checkout, number))["Model"]


def presets(checkout):
    """preset -> (reference class, KernelBench's get_init_inputs(), input shape, a wrong argument list)"""
    return {
        "kernelbench-31": (reference_model(checkout, 31), [64, 128, 3, 0.5, (128, 1, 1), 2.0],
                           (128, 64, 128, 128), [64, 128, 3, 0.25, (128, 1, 1), 2.0]),
        "kernelbench-32": (reference_model(checkout, 32), [64, 128, 3, 2.0], (64, 64, 256, 256),
                           [64, 128, 5, 2.0]),
    }


PRESETS = {}


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(preset, got, ref, tol):
    """Prints the errors; True when within the tolerance."""
    if tuple(got.shape) != tuple(ref.shape):
        print(f"{preset}: FAIL output shape {tuple(got.shape)}, reference {tuple(ref.shape)}")
        return False
    diff = (got.double() - ref.double()).abs()
    bound = tol + tol * ref.double().abs()
    max_abs = diff.max().item()
    worst = (diff / bound).max().item()  # <= 1 everywhere when the elementwise check passes
    rel_l2 = (torch.linalg.vector_norm(got.double() - ref.double()) / torch.linalg.vector_norm(ref.double())).item()
    nan = bool(torch.isnan(got).any().item())
    ok = not nan and worst <= 1.0 and rel_l2 <= tol
    print(f"{preset}: {'ok  ' if ok else 'FAIL'} max |diff| {max_abs:.3e} (worst diff/bound {worst:.3f}, "
          f"bound {tol:g} + {tol:g}*|ref|), relative L2 {rel_l2:.3e} (<= {tol:g}){', NaN in output' if nan else ''}")
    return ok


def check(preset, path, tol, own_ms):
    ref_cls, init_inputs, shape, wrong_inputs = PRESETS[preset]
    mapped_before = nvrtc_mapped()
    exported = load_module(path, "exported_" + preset.replace("-", "_"))
    ok = True
    if exported.get_init_inputs() != init_inputs:
        print(f"{preset}: FAIL get_init_inputs() {exported.get_init_inputs()}, KernelBench's {init_inputs}")
        ok = False
    try:
        exported.Model(*wrong_inputs)
        print(f"{preset}: FAIL Model{tuple(wrong_inputs)} was accepted")
        ok = False
    except ValueError as e:
        print(f"{preset}: ok   wrong constructor arguments refused: {e}")

    torch.manual_seed(0)
    ref = ref_cls(*init_inputs).cuda().eval()
    model = exported.Model(*init_inputs).cuda().eval()
    model.load_state_dict(ref.state_dict())  # strict: same parameter names and shapes

    x = torch.rand(*shape, device="cuda")
    x2 = torch.rand(*shape, device="cuda")
    with torch.no_grad():
        want = ref(x)
        got = model(x)
        got_copy = got.clone()
        got2 = model(x2)  # must not write into the first call's output
        got2 = got2.clone()
        torch.cuda.synchronize()
    new_nvrtc = nvrtc_mapped() - mapped_before
    if new_nvrtc:
        print(f"{preset}: FAIL importing and running the module mapped {sorted(new_nvrtc)}")
        ok = False
    else:
        print(f"{preset}: ok   no compiler: no CuPy or NVRTC import, no libnvrtc mapped by the module")
    ok = compare(preset, got, want, tol) and ok
    if not torch.equal(got, got_copy):
        print(f"{preset}: FAIL a second call changed the first call's output (buffers alias)")
        ok = False
    try:
        model(torch.rand(shape[0], shape[1], shape[2] + 1, shape[3], device="cuda"))
        print(f"{preset}: FAIL an input of another shape was accepted")
        ok = False
    except ValueError:
        pass

    # torch.compile traces through the custom op (fake implementation), with no graph break.
    try:
        compiled = torch.compile(model, fullgraph=True)
        with torch.no_grad():
            same = torch.equal(compiled(x), got)
        print(f"{preset}: {'ok  ' if same else 'FAIL'} torch.compile(fullgraph=True) "
              f"{'gives the same output' if same else 'gives another output'}")
        ok = ok and same
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        print(f"{preset}: FAIL torch.compile(fullgraph=True): {type(e).__name__}: {str(e).splitlines()[0]}")
        ok = False
    # A CUDA graph: warm-up call on a side stream, capture, replay on another input.
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_out = model(static_x)
    static_x.copy_(x2)
    graph.replay()
    torch.cuda.synchronize()
    same = torch.equal(static_out, got2)
    print(f"{preset}: {'ok  ' if same else 'FAIL'} captured in a CUDA graph, replayed on another input: "
          f"{'the same output as eager' if same else 'another output than eager'}")
    ok = ok and same

    if own_ms is not None:
        from bench_timing import bench  # noqa: E402 - needs triton, which the GPU machine has
        with torch.no_grad():
            t = bench(lambda: model(x))
            t_graph = bench(lambda: graph.replay())
        ratio = t / own_ms
        fast = ratio <= 1.05
        print(f"{preset}: {'ok  ' if fast else 'FAIL'} exported module {t:.3f} ms (from a CUDA graph "
              f"{t_graph:.3f} ms), fusetune's own timing of the winner {own_ms:.3f} ms: {ratio:.3f}x (<= 1.05)")
        ok = ok and fast
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m31", help="module exported for kernelbench-31")
    ap.add_argument("--m32", help="module exported for kernelbench-32")
    ap.add_argument("--math", choices=["tf32", "fp32"], default="tf32")
    ap.add_argument("--tune-json-dir", help="directory of the winners' `tune --json` reports (tune-PRESET-MATH.json)")
    ap.add_argument("--kernelbench", default=kernelbench_files.DEFAULT,
                    help="a KernelBench checkout (default: $KERNELBENCH, else .kernelbench)")
    args = ap.parse_args()
    if not (args.m31 or args.m32):
        ap.error("give --m31 and/or --m32")

    if torch is None or not torch.cuda.is_available():
        print("skip: no CUDA GPU (or no torch)")
        return SKIP
    PRESETS.update(presets(args.kernelbench))
    sys.meta_path.insert(0, NoCompiler())

    tf32 = args.math == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32  # tf32: PyTorch's default for cuDNN convolutions
    torch.backends.cuda.matmul.allow_tf32 = tf32
    tol = 1e-2 if tf32 else 1e-4
    ok = True
    for preset, path in (("kernelbench-31", args.m31), ("kernelbench-32", args.m32)):
        if path:
            own = None
            if args.tune_json_dir:
                report = os.path.join(args.tune_json_dir, f"tune-{preset}-{args.math}.json")
                own = json.load(open(report))["winner"]["time_ms"]["median"]
            ok = check(preset, path, tol, own) and ok
    print("all checks passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
