"""Tuning time, side by side on one GPU (issue 11, deliverable 6): fusetune's cold tune (empty
database, compile cache and driver JIT cache), warm tune (those caches kept, --force) and stored answer, per search
strategy, next to torch.compile(mode="max-autotune")'s compile time for the same problem, cold
(a fresh inductor cache in a fresh process), all in one run.

    python3 bench/bench_tuning_time.py --fusetune build/fusetune [--strategies exhaustive,model]
        [--spec SPEC ...] [--no-compile] [--json-dir DIR]

Problems: both presets and the first two lines of bench/problems.txt unless --spec is given.
Prints a markdown table: seconds of wall time per run, and each run's winner with its median.
The torch.compile figure is the first call of the compiled module (compilation and autotuning
included) minus one eager call, measured by a child process of this script.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS = {
    "kernelbench-31": "conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)",
    "kernelbench-32": "conv2d(n=64,c=64,h=256,w=256,k=128,r=3) | mul(2.0) | reduce_min(channel)",
}


def problems_txt(n):
    out = []
    with open(os.path.join(HERE, "problems.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out[:n]


def tune(fusetune, problem_args, db, strategy, force, json_path):
    cmd = [fusetune, "tune", *problem_args, "--db", db, "--strategy", strategy, "-q", "--json", json_path]
    if force:
        cmd.append("--force")
    # The driver's JIT cache (where cuDNN's runtime-compiled fused engines land) lives beside the
    # database, so a cold tune starts without it and the warm one has it, like the compile cache.
    env = dict(os.environ, CUDA_CACHE_PATH=os.path.join(os.path.dirname(db), "cuda-cache"))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    winner = "-"
    try:
        with open(json_path) as f:
            doc = json.load(f)
        w = doc.get("winner")
        if isinstance(w, dict):
            winner = f"{w.get('name')} {(w.get('time_ms') or {}).get('median') or 0:.3f} ms"
    except (OSError, ValueError):
        pass
    if p.returncode != 0:
        winner = f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}"
    return wall, winner


def torch_compile_one(spec):
    """Child process: compile time of torch.compile(max-autotune) for the spec, in seconds."""
    import torch
    sys.path.insert(0, HERE)
    from check_torch_export_spec import make_reference, parse_spec

    torch.backends.cudnn.allow_tf32 = True
    conv, stages = parse_spec(spec)
    n_params = sum(1 for _, a in stages for v in a if isinstance(v, tuple))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(conv["c"], conv["k"], (conv["r"], conv["s"]), conv["stride"], conv["pad"],
                                        conv["dilation"], bias=conv["bias"])
            for i in range(n_params):
                setattr(self, f"p{i}", torch.nn.Parameter(torch.randn(conv["k"], 1, 1)))
            self.ref = make_reference(conv, stages, self, [f"p{i}" for i in range(n_params)])

        def forward(self, x):
            return self.ref(x)

    dev = torch.device("cuda")
    model = Model().to(dev).eval()
    x = torch.rand(conv["n"], conv["c"], conv["h"], conv["w"], device=dev)
    with torch.no_grad():
        model(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(x)
        torch.cuda.synchronize()
        eager = time.perf_counter() - t0
        compiled = torch.compile(model, mode="max-autotune")
        t0 = time.perf_counter()
        compiled(x)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
    print(json.dumps({"compile_s": first - eager}))


def torch_compile_time(spec):
    cache = tempfile.mkdtemp(prefix="inductor-")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=os.path.join(cache, "triton"),
               PYTHONUNBUFFERED="1")
    try:
        p = subprocess.run([sys.executable, __file__, "--torch-compile-one", spec], capture_output=True, text=True,
                           env=env, timeout=900)
        for line in reversed(p.stdout.splitlines()):
            if line.startswith("{"):
                return json.loads(line)["compile_s"]
        return float("nan")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusetune", default="build/fusetune")
    ap.add_argument("--strategies", default="exhaustive,model")
    ap.add_argument("--spec", action="append", help="a problem (repeatable); default: presets + 2 of problems.txt")
    ap.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    ap.add_argument("--json-dir", default=None, help="keep each tune's --json report here")
    ap.add_argument("--torch-compile-one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_compile_one:
        torch_compile_one(args.torch_compile_one)
        return 0

    problems = [(p, ["--preset", p], s) for p, s in PRESETS.items()]
    if args.spec:
        problems = [(s, [s], s) for s in args.spec]
    else:
        problems += [(s, [s], s) for s in problems_txt(2)]
    out_dir = args.json_dir or tempfile.mkdtemp(prefix="tuning-time-")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for i, (label, pargs, spec) in enumerate(problems):
        for strategy in args.strategies.split(","):
            work = tempfile.mkdtemp(prefix="fusetune-tt-")
            db = os.path.join(work, "tuning.db")  # its compile cache lives beside it
            try:
                cold = tune(args.fusetune, pargs, db, strategy, True, os.path.join(out_dir, f"p{i}-{strategy}-cold.json"))
                warm = tune(args.fusetune, pargs, db, strategy, True, os.path.join(out_dir, f"p{i}-{strategy}-warm.json"))
                stored = tune(args.fusetune, pargs, db, strategy, False, os.path.join(out_dir, f"p{i}-{strategy}-stored.json"))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            rows.append((label, strategy, cold, warm, stored))
            print(f"{label} {strategy}: cold {cold[0]:.1f} s, warm {warm[0]:.1f} s, stored {stored[0]:.2f} s; "
                  f"winner {cold[1]} / {warm[1]}", flush=True)
    compile_s = {}
    if not args.no_compile:
        for label, _, spec in problems:
            compile_s[label] = torch_compile_time(spec)
            print(f"{label} torch.compile max-autotune: {compile_s[label]:.1f} s", flush=True)

    print("\n| problem | strategy | cold tune (s) | warm tune (s) | stored (s) | torch.compile max-autotune (s) | winner (cold) | winner (warm) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, strategy, cold, warm, stored in rows:
        tc = compile_s.get(label)
        tcs = f"{tc:.1f}" if tc is not None else "-"
        print(f"| {label} | {strategy} | {cold[0]:.1f} | {warm[0]:.1f} | {stored[0]:.2f} | {tcs} | {cold[1]} | {warm[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
