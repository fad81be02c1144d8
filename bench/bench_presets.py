"""Side by side on one GPU, same inputs (torch.rand, as KernelBench draws them): KernelBench's own
reference model (read from a KernelBench checkout) in PyTorch eager, channels-last eager,
torch.compile in both autotuning modes (named: `max-autotune-no-cudagraphs`, `max-autotune`),
channels-last torch.compile (`max-autotune-no-cudagraphs`), and fusetune's tuned winner, for the
KernelBench presets.

    python3 bench/bench_presets.py --fusetune build/fusetune [--math tf32|fp32] [--json-dir DIR]
        [--kernelbench CHECKOUT] [--runs N]

Runs `fusetune tune --preset P --json F` (or reads F if given with --reuse), replays the winner
from PyTorch (bench/fusetune_replay.py) on the same inputs as the PyTorch models, checks its
output against eager's, and prints markdown tables. Every contender is timed in each of --runs
(default 3) runs of interleaved rounds; each figure is quoted as the min-median-max of the runs'
medians, and each ratio likewise from the runs' side-by-side ratios. With --export, the winner is
also exported (`fusetune export --format torch`: the CUBIN `tune` verified and timed, in a PyTorch
module with the model's parameters) and that module is timed beside them; the ratios then come
from it, the artifact a user runs, rather than from the replay, which compiles the source again
through CuPy. Beside them, from the tune's own timing: cuDNN's NHWC conv followed by fusetune's
best epilogue (what a channels-last user gets from the unfused designs). Unless --no-matmul, a
cuBLAS matmul (torch.matmul, 8192 x 8192 x 8192, TF32 under --math tf32, strict fp32 under fp32)
runs in the same interleaved rounds: the tensor-core rate the library reaches in those
conditions, beside each winner's conv rate. TF32 is set through the settings torch 2.9+ reads
(bench_timing.torch_math), so Inductor's Triton templates are built with it too.
"""
import argparse
import copy
import importlib.util
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import kernelbench_files  # noqa: E402
from bench_timing import COMPILE_MODES, INTERLEAVED_ROUNDS, bench_runs, compile_model, span, torch_math  # noqa: E402
from fusetune_replay import Replay, best_other, replayable  # noqa: E402


def chan_31(model):  # the conv bias, then the model's own per-channel bias (the spec's param[k])
    return torch.cat([model.conv.bias.detach(), model.bias.detach().flatten()])


def chan_32(model):
    return model.conv.bias.detach().clone()


# preset -> (KernelBench level-2 problem, input shape, the per-channel values fusetune's kernels read)
PRESETS = {
    "kernelbench-31": (31, (128, 64, 128, 128), chan_31),
    "kernelbench-32": (32, (64, 64, 256, 256), chan_32),
}

# The matmul whose rate stands for cuBLAS's: large enough to run at its peak (1.1 TFLOP, about
# 3 ms in TF32 on an H200), three 256 MiB fp32 matrices.
MATMUL_N = 8192


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fusetune", default="build/fusetune")
    ap.add_argument("--math", default="tf32", choices=["tf32", "fp32"])
    ap.add_argument("--json-dir", default=".")
    ap.add_argument("--reuse", action="store_true", help="read existing tune JSON instead of tuning")
    ap.add_argument("--presets", default="kernelbench-31,kernelbench-32")
    ap.add_argument("--kernelbench", default=kernelbench_files.DEFAULT,
                    help="a KernelBench checkout (default: $KERNELBENCH, else .kernelbench)")
    ap.add_argument("--runs", type=int, default=3, help="runs of interleaved rounds; figures are ranges over them")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--export", action="store_true", help="also time the winner's exported PyTorch module")
    ap.add_argument("--no-matmul", action="store_true", help="skip the cuBLAS matmul rate in the same rounds")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    torch_math(args.math)
    tf32 = args.math == "tf32"
    tol = 1e-2 if tf32 else 1e-4
    results = []
    if not args.no_matmul:
        mm_a, mm_b = (torch.rand(MATMUL_N, MATMUL_N, device="cuda") for _ in range(2))
        mm_c = torch.empty(MATMUL_N, MATMUL_N, device="cuda")
    for preset in args.presets.split(","):
        number, shape, chan = PRESETS[preset]
        problem = kernelbench_files.load_problem(kernelbench_files.problem_file(args.kernelbench, number))
        torch.manual_seed(0)
        model = problem["Model"](*problem["get_init_inputs"]()).cuda().eval()
        x = torch.rand(*shape, device="cuda")
        json_path = os.path.join(args.json_dir, f"tune-{preset}-{args.math}.json")
        if not (args.reuse and os.path.exists(json_path)):
            t0 = time.time()
            subprocess.run([args.fusetune, "tune", "--preset", preset, "--math", args.math, "--json", json_path],
                           check=True, stdout=subprocess.DEVNULL)
            print(f"{preset}: fusetune tune took {time.time() - t0:.0f} s", file=sys.stderr)
        report = json.load(open(json_path))
        win = report["winner"]
        out_channels = 1 if preset == "kernelbench-32" else 128
        # A cudnn-fused winner runs cuDNN's fused graph, which the replay (torch convs + CuPy
        # kernels) cannot: its figure is then fusetune's own timing, verified by fusetune.
        replay = Replay(win["variant"], model.conv, chan(model), out_channels, args.math) \
            if replayable(win["variant"]) else None
        # The fastest verified solution of another candidate than the winner's: the winner's lead
        # over the rest of fusetune's space, from the tune's own timing of both in one run.
        other = best_other(report)
        # fusetune's `unfused` baseline (it stands in for eager, so it must not be slower than eager).
        unfused_v = report["baselines"].get("unfused_variant")
        unfused = Replay(unfused_v, model.conv, chan(model), out_channels, args.math) if unfused_v else None
        unfused_own = next((r for r in report["results"] if r["name"] == report["baselines"]["unfused"]), None)
        # What a channels-last user gets from fusetune without its fused conv: cuDNN's NHWC conv,
        # then the fastest verified epilogue after it (the tune's own timing).
        nhwc = [r for r in report["results"] if r.get("status") == "ok" and r["name"].startswith("epilogue.nhwc")]
        nhwc_best = min(nhwc, key=lambda r: r["time_ms"]["median"]) if nhwc else None

        exported = None
        if args.export:
            mod_path = os.path.join(args.json_dir, f"export-{preset}-{args.math}.py")
            subprocess.run([args.fusetune, "export", "--preset", preset, "--math", args.math, "--format", "torch",
                            "-o", mod_path], check=True, stdout=subprocess.DEVNULL)
            spec = importlib.util.spec_from_file_location("exported_" + preset.replace("-", "_"), mod_path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            exported = module.Model(*module.get_init_inputs()).cuda().eval()
            exported.load_state_dict(model.state_dict())  # strict: KernelBench's parameter names

        # The same model and input channels-last (PyTorch's advice for tensor cores): what a user
        # who keeps activations NHWC runs.
        model_cl = copy.deepcopy(model).to(memory_format=torch.channels_last)
        x_cl = x.contiguous(memory_format=torch.channels_last)

        def close(got):
            torch.cuda.synchronize()
            return bool(torch.all((got.float() - ref).abs() <= tol + tol * ref.abs()).item())

        with torch.no_grad():
            ref = model(x)
            fns = {"eager": lambda: model(x), "eager-cl": lambda: model_cl(x_cl)}
            checks = {"eager-cl": close(model_cl(x_cl))}
            if not args.no_compile:
                for mode in COMPILE_MODES:
                    compiled = compile_model(model, x, preset, mode)
                    fns[f"compile {mode}"] = (lambda c: lambda: c(x))(compiled)
                    checks[f"compile {mode}"] = close(compiled(x))
                compiled_cl = compile_model(model_cl, x_cl, preset + " channels-last", COMPILE_MODES[0])
                fns["compile-cl"] = lambda: compiled_cl(x_cl)
                checks["compile-cl"] = close(compiled_cl(x_cl))
            err, rel_l2 = float("nan"), float("nan")
            if replay:
                got = replay(x)
                checks["replay"] = close(got)
                err = (got.float() - ref).abs().max().item()
                rel_l2 = (torch.linalg.vector_norm(got.double() - ref.double()) /
                          torch.linalg.vector_norm(ref.double())).item()
                fns["replay"] = lambda: replay(x)
            if exported is not None:
                checks["export"] = close(exported(x))
                fns["export"] = lambda: exported(x)
            if unfused:
                fns["unfused"] = lambda: unfused(x)
            if not args.no_matmul:
                fns["matmul"] = lambda: torch.matmul(mm_a, mm_b, out=mm_c)
            # Every contender in each round, in turn, and --runs runs of rounds: the ratios come
            # from figures taken side by side, and each figure is a range over the runs.
            runs = bench_runs(fns, args.runs)
        print(f"{preset}: {len(fns)} contenders, {args.runs} runs of {INTERLEAVED_ROUNDS} interleaved rounds; "
              + "; ".join(f"{k} {span(v)}" for k, v in runs.items()), file=sys.stderr)
        own = win["time_ms"]["median"]
        # fusetune's figure per run: the exported module's, else the replay's, else its own timing.
        fuse = runs.get("export") or runs.get("replay") or [own] * args.runs
        cv = model.conv
        k_out, c_in, r, s_ = cv.weight.shape
        p_out, q_out = ((x.shape[2 + d] + 2 * cv.padding[d] - cv.dilation[d] * (cv.kernel_size[d] - 1) - 1)
                        // cv.stride[d] + 1 for d in (0, 1))
        results.append(dict(preset=preset, runs=runs, fuse=fuse, own=own, win=win["name"], err=err, rel_l2=rel_l2,
                            checks=checks, other=other, unfused_own=unfused_own, nhwc_best=nhwc_best,
                            unfused_name=report["baselines"]["unfused"],
                            conv_gflop=2 * x.shape[0] * k_out * p_out * q_out * c_in * r * s_ / 1e9,
                            fuse_source="exported module" if "export" in runs else
                            "replay" if "replay" in runs else "fusetune's own timing"))

    print_tables(args, results)
    if not all(all(r["checks"].values()) for r in results):
        sys.exit(1)


def ratios(num, den):
    return [a / b for a, b in zip(num, den)]


def print_tables(args, results):
    """The markdown tables: figures as min-median-max of the runs' medians."""
    print(f"\n(each figure: min-median-max over {args.runs} runs of the run's median of {INTERLEAVED_ROUNDS} "
          f"interleaved rounds, every contender in each round; math {args.math}; ratios per run, side by side)")
    contenders = [("eager", "eager"), ("eager-cl", "eager channels-last")]
    if not args.no_compile:
        contenders += [(f"compile {m}", f"torch.compile {m}") for m in COMPILE_MODES]
        contenders += [("compile-cl", f"torch.compile {COMPILE_MODES[0]} channels-last")]
    print("\n| contender | " + " | ".join(f"{r['preset']} ms" for r in results) + " | "
          + " | ".join(f"{r['preset']}: fusetune's speedup" for r in results) + " | output within tolerance |")
    print("|---" * (2 + 2 * len(results)) + "|")
    for key, label in contenders:
        figures = [span(r["runs"][key]) for r in results]
        speedups = [span(ratios(r["runs"][key], r["fuse"])) for r in results]
        ok = all(r["checks"].get(key, True) for r in results)
        print(f"| {label} | " + " | ".join(figures) + " | " + " | ".join(speedups) + f" | {'yes' if ok else 'NO'} |")
    print("| **fusetune** | " + " | ".join(f"{span(r['fuse'])} ({r['fuse_source']})" for r in results) + " | "
          + " | ".join("-" for _ in results) + " | "
          + ("yes" if all(r["checks"].get("export", True) and r["checks"].get("replay", True) for r in results)
             else "NO") + " |")
    print(f"\n| preset ({args.math}) | winner | fusetune own timing ms | max abs diff vs eager | rel L2 |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['preset']} | {r['win']} | {r['own']:.3f} | {r['err']:.2e} | {r['rel_l2']:.2e} |")
    print(f"\n| preset ({args.math}) | eager ms | fusetune unfused (replayed) ms | fusetune unfused (own timing) ms | "
          f"baseline variant | cuDNN NHWC conv + best epilogue (own timing) ms |")
    print("|---|---|---|---|---|---|")
    for r in results:
        u, n = r["unfused_own"], r["nhwc_best"]
        nhwc = f"{n['time_ms']['median']:.3f} ({n['name']})" if n else "-"
        print(f"| {r['preset']} | {span(r['runs']['eager'])} | {span(r['runs'].get('unfused', []))} | "
              f"{u['time_ms']['median'] if u else float('nan'):.3f} | {r['unfused_name']} | {nhwc} |")
    print(f"\n| preset ({args.math}) | winner | own timing ms | best other candidate | own timing ms | "
          f"winner's lead |")
    print("|---|---|---|---|---|---|")
    for r in results:
        o = r["other"]
        to = o["time_ms"]["median"] if o else float("nan")
        print(f"| {r['preset']} | {r['win']} | {r['own']:.3f} | {o['name'] if o else '-'} | {to:.3f} | "
              f"{to / r['own']:.2f}x |")
    if not args.no_matmul:
        print(f"\n| preset ({args.math}) | winner | conv GFLOP | winner TFLOP/s | "
              f"cuBLAS matmul {MATMUL_N}^3 TFLOP/s, same rounds | winner / cuBLAS |")
        print("|---|---|---|---|---|---|")
        for r in results:
            rate = [r["conv_gflop"] / t for t in r["fuse"]]
            mm = [2 * MATMUL_N ** 3 / 1e9 / t for t in r["runs"]["matmul"]]
            print(f"| {r['preset']} | {r['win']} | {r['conv_gflop']:.1f} | {span(rate)} | {span(mm)} | "
                  f"{span(ratios(rate, mm))} |")


if __name__ == "__main__":
    main()
