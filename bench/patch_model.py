"""A PyTorch model through fusetune and back, measured in one script (issue 14's acceptance):

    python3 bench/patch_model.py --fusetune build/fusetune --model FILE.py:Class --input-shape N,C,H,W
        [--init-args JSON] [--math tf32|fp32] [--workdir DIR] [--tune-args "..."] [--json OUT]

1. `fusetune from-torch` finds the model's conv blocks (every conv must be matched);
2. `fusetune tune --spec-file` tunes them (a stored winner is reused, as tune does);
3. `fusetune export --format torch-patch` writes the module, and patch() swaps the blocks of a
   copy of the model for the tuned ops;
4. checks, against the model's own output in float64 (the model in double precision, on the GPU):
   the patched output's max |error| and relative L2 error are within 4x the original model's own
   under the same math (TF32 convs under tf32: PyTorch's default) plus 1e-6 -- each block's kernel
   was verified by fusetune's TF32/fp32 rule; this checks the blocks are put together right; the
   patched model under torch.compile and replayed from a captured CUDA graph gives the same
   output as the patched model; unpatch() gives the original output back;
5. times, in this one process, with triton's do_bench (median, L2 flushed): the original in eager
   mode, torch.compile(original, mode="max-autotune-no-cudagraphs"), the patched model in eager
   mode, under torch.compile, and replayed from a CUDA graph.
Passes when every check holds and the patched model (eager) is faster than both the original in
eager mode and torch.compile's build of it.

Exit status: 0 passed, 1 a check failed or it was not faster, 2 a step of fusetune failed,
77 no CUDA GPU or torch.
"""
import argparse
import copy
import importlib.util
import json
import os
import subprocess
import sys
import time

try:
    import torch
except ImportError:
    torch = None

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, what):
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(f"$ {' '.join(cmd)}  ({time.time() - t0:.1f} s, exit {r.returncode})", flush=True)
    if r.returncode != 0:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        raise SystemExit(f"{what} failed")
    return r


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # torch.compile looks modules up by name, as after an import
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module


def build_model(target, init_args):
    path, _, cls = target.rpartition(":")
    module = load(path, "user_model")
    if init_args is not None:
        parsed = json.loads(init_args)
        args, kwargs = (parsed, {}) if isinstance(parsed, list) else ([], parsed)
    else:
        args, kwargs = list(getattr(module, "get_init_inputs", lambda: [])()), {}
    torch.manual_seed(0)
    return getattr(module, cls)(*args, **kwargs)


def errors(got, ref64):
    d = (got.double() - ref64).abs()
    return d.max().item(), (torch.linalg.vector_norm(got.double() - ref64) / torch.linalg.vector_norm(ref64)).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusetune", default="build/fusetune")
    ap.add_argument("--model", required=True, help="FILE.py:Class")
    ap.add_argument("--input-shape", required=True)
    ap.add_argument("--init-args")
    ap.add_argument("--math", choices=["tf32", "fp32"], default="tf32")
    ap.add_argument("--workdir", default="patch-work")
    ap.add_argument("--tune-args", default="", help="more arguments for `fusetune tune` (e.g. --strategy model)")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile of the original (max-autotune)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    if torch is None or not torch.cuda.is_available():
        print("skip: no CUDA GPU (or no torch)")
        return SKIP
    sys.path.insert(0, HERE)
    from bench_timing import bench, torch_math  # noqa: E402

    os.makedirs(args.workdir, exist_ok=True)
    specs = os.path.join(args.workdir, "specs.txt")
    blocks_json = os.path.join(args.workdir, "blocks.json")
    patch_py = os.path.join(args.workdir, "patch.py")
    fr = [args.fusetune, "from-torch", args.model, "--input-shape", args.input_shape, "--math", args.math,
          "-o", specs, "--json", blocks_json] + (["--init-args", args.init_args] if args.init_args else [])
    run(fr, "from-torch")
    found = json.load(open(blocks_json))
    print(f"from-torch: {len(found['blocks'])} block(s), unmatched: {found['unmatched']}")
    for b in found["blocks"]:
        print(f"  {b['conv']}: {b['spec']}")
    ok = not found["unmatched"]
    if not ok:
        print("FAIL: from-torch left convs unmatched")
    t0 = time.time()
    run([args.fusetune, "tune", "--spec-file", specs, "--math", args.math, "-q"] + args.tune_args.split(), "tune")
    tune_s = time.time() - t0
    run([args.fusetune, "export", "--format", "torch-patch", "--spec-file", specs, "--math", args.math, "-o", patch_py],
        "export")
    patch_mod = load(patch_py, "fusetune_patch")

    torch_math(args.math)
    shape = tuple(int(v) for v in args.input_shape.split(","))
    model = build_model(args.model, args.init_args).cuda().eval()
    patched = patch_mod.patch(copy.deepcopy(model))
    n_blocks = sum(1 for name, _ in patched.forward.__self__.named_children() if name.startswith("fusetune_block"))
    x = torch.rand(*shape, device="cuda")
    with torch.no_grad():
        ref64 = copy.deepcopy(model).double()(x.double())
        out_orig = model(x)
        out_patch = patched(x).clone()
        torch.cuda.synchronize()
    e_orig, l2_orig = errors(out_orig, ref64)
    e_patch, l2_patch = errors(out_patch, ref64)
    acc_ok = e_patch <= 4 * e_orig + 1e-6 and l2_patch <= 4 * l2_orig + 1e-6 and not torch.isnan(out_patch).any()
    print(f"blocks patched: {n_blocks} of {len(found['blocks'])}")
    print(f"vs float64: original max|err| {e_orig:.3e} rel-L2 {l2_orig:.3e}; patched max|err| {e_patch:.3e} "
          f"rel-L2 {l2_patch:.3e} -> {'ok' if acc_ok else 'FAIL'} (bound: 4x the original's + 1e-6)")
    ok = ok and acc_ok and n_blocks == len(found["blocks"])

    # torch.compile of the patched model: traced through the custom ops (fullgraph: no graph break).
    try:
        compiled_patched = torch.compile(patched, fullgraph=True)
        with torch.no_grad():
            out_cp = compiled_patched(x)
    except Exception as e:  # noqa: BLE001 - reported, then tried with graph breaks allowed
        print(f"FAIL: torch.compile(patched, fullgraph=True): {type(e).__name__}: {str(e).splitlines()[0]}")
        ok = False
        torch._dynamo.reset()
        compiled_patched = torch.compile(patched)
        with torch.no_grad():
            out_cp = compiled_patched(x)
    cp_ok = torch.allclose(out_cp, out_patch, rtol=1e-5, atol=1e-6)
    print(f"patched under torch.compile(fullgraph=True): {'same output' if cp_ok else 'FAIL: differs'} "
          f"(max |diff| {(out_cp - out_patch).abs().max().item():.2e})")
    # A CUDA graph of the patched model: warm-up on a side stream, capture, replay on a new input.
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(2):
            patched(static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_out = patched(static_x)
    x2 = torch.rand(*shape, device="cuda")
    static_x.copy_(x2)
    graph.replay()
    with torch.no_grad():
        want2 = patched(x2)
    torch.cuda.synchronize()
    g_ok = torch.equal(static_out, want2)
    print(f"patched in a captured CUDA graph, replayed on a new input: {'same output' if g_ok else 'FAIL: differs'}")
    ok = ok and cp_ok and g_ok

    with torch.no_grad():
        t_eager = bench(lambda: model(x))
        t_patch = bench(lambda: patched(x))
        t_cp = bench(lambda: compiled_patched(x))
        t_graph = bench(lambda: graph.replay())
        t_comp = float("nan")
        if not args.no_compile:
            t1 = time.time()
            compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
            compiled(x)
            torch.cuda.synchronize()
            print(f"torch.compile(original, max-autotune-no-cudagraphs) built in {time.time() - t1:.0f} s")
            t_comp = bench(lambda: compiled(x))
        t_patch2 = bench(lambda: patched(x))  # again, after the compile: drift check
    patch_mod.unpatch(patched)
    with torch.no_grad():
        u_ok = torch.equal(patched(x), out_orig) and "forward" not in patched.__dict__
    print(f"unpatch(): {'the original output again' if u_ok else 'FAIL: not the original output'}")
    ok = ok and u_ok
    fast = t_patch < t_eager and (t_patch < t_comp or args.no_compile)
    print(f"\n| model ({args.math}) | input | blocks | eager ms | torch.compile ms | patched ms (again) | "
          f"patched+compile ms | patched graph ms | vs eager | vs compile |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.model} | {args.input_shape} | {n_blocks} | {t_eager:.3f} | {t_comp:.3f} | {t_patch:.3f} "
          f"({t_patch2:.3f}) | {t_cp:.3f} | {t_graph:.3f} | {t_eager / t_patch:.2f}x | {t_comp / t_patch:.2f}x |")
    if not fast:
        print("FAIL: the patched model is not faster than both the original eager and torch.compile")
    ok = ok and fast
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "input_shape": shape, "math": args.math, "blocks": found["blocks"],
                       "tune_s": tune_s, "err": {"original": [e_orig, l2_orig], "patched": [e_patch, l2_patch]},
                       "ms": {"eager": t_eager, "compile": t_comp, "patched": t_patch, "patched_again": t_patch2,
                              "patched_compiled": t_cp, "patched_graph": t_graph},
                       "checks": {"accuracy": acc_ok, "compile": cp_ok, "graph": g_ok, "unpatch": u_ok, "faster": fast},
                       "passed": ok}, f, indent=1)
    print("passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
