"""Side by side on one GPU, same inputs (torch.rand): PyTorch eager, torch.compile
(max-autotune-no-cudagraphs) and fusetune's tuned winner, for the KernelBench presets.

    python3 bench/bench_presets.py --fusetune build/fusetune [--math tf32|fp32] [--json-dir DIR]

Runs `fusetune tune --preset P --json F` (or reads F if given with --reuse), replays the winner
from PyTorch (bench/fusetune_replay.py) on the same inputs as the PyTorch models, checks its
output against eager's, and prints a markdown table of medians and ratios. With --export, the
winner is also exported (`fusetune export --format torch`: the CUBIN `tune` verified and timed,
in a PyTorch module with the model's parameters) and that module is timed beside them; the
ratios then come from it, the artifact a user runs, rather than from the replay, which
compiles the source again through CuPy. Unless --no-matmul, a cuBLAS matmul (torch.matmul, 8192 x
8192 x 8192, TF32 under --math tf32, strict fp32 under fp32) runs in the same interleaved rounds:
the tensor-core rate the library reaches in those conditions, beside each winner's conv rate.
"""
import importlib.util
import argparse
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from bench_timing import INTERLEAVED_ROUNDS, bench_interleaved, compile_model, torch_math  # noqa: E402
from fusetune_replay import Replay, best_other, replayable  # noqa: E402


class Model31(nn.Module):  # KernelBench level 2, problem 31: Conv2d_Min_Add_Multiply
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3)
        self.constant_value = 0.5
        self.bias = nn.Parameter(torch.randn(128, 1, 1))
        self.scaling_factor = 2.0

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, torch.tensor(self.constant_value, device=x.device))
        x = x + self.bias
        return x * self.scaling_factor

    def chan(self):
        return torch.cat([self.conv.bias.detach(), self.bias.detach().flatten()])


class Model32(nn.Module):  # KernelBench level 2, problem 32: Conv2d_Scaling_Min
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3)
        self.scale_factor = 2.0

    def forward(self, x):
        x = self.conv(x) * self.scale_factor
        return torch.min(x, dim=1, keepdim=True)[0]

    def chan(self):
        return self.conv.bias.detach().clone()


def shown_ms(t_export, t_replay, t_own):
    """The fusetune figure the ratios use: the exported module's, else the replay's, else (a cuDNN
    graph, which the replay cannot run) fusetune's own timing. NaN marks a figure not taken."""
    return t_export if t_export == t_export else t_replay if t_replay == t_replay else t_own


PRESETS = {
    "kernelbench-31": (Model31, (128, 64, 128, 128)),
    "kernelbench-32": (Model32, (64, 64, 256, 256)),
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
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--export", action="store_true", help="also time the winner's exported PyTorch module")
    ap.add_argument("--no-matmul", action="store_true", help="skip the cuBLAS matmul rate in the same rounds")
    args = ap.parse_args()

    torch_math(args.math)
    tf32 = args.math == "tf32"
    rows = []
    unfused_rows = []
    other_rows = []
    rate_rows = []
    if not args.no_matmul:
        mm_a, mm_b = (torch.rand(MATMUL_N, MATMUL_N, device="cuda") for _ in range(2))
        mm_c = torch.empty(MATMUL_N, MATMUL_N, device="cuda")
    for preset in args.presets.split(","):
        model_cls, shape = PRESETS[preset]
        torch.manual_seed(0)
        model = model_cls().cuda().eval()
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
        replay = Replay(win["variant"], model.conv, model.chan(), out_channels, args.math) \
            if replayable(win["variant"]) else None
        # The fastest verified solution of another candidate than the winner's: the winner's lead
        # over the rest of fusetune's space, from the tune's own timing of both in one run (the
        # report carries the winner's source only).
        other = best_other(report)
        # fusetune's `unfused` baseline (it stands in for eager, so it must not be slower than eager).
        unfused_v = report["baselines"].get("unfused_variant")
        unfused = Replay(unfused_v, model.conv, model.chan(), out_channels, args.math) if unfused_v else None
        unfused_own = next((r for r in report["results"] if r["name"] == report["baselines"]["unfused"]), None)

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

        with torch.no_grad():
            ref = model(x)
            if replay:
                got = replay(x)
                torch.cuda.synchronize()
                err = (got.float() - ref).abs().max().item()
                rel_l2 = (torch.linalg.vector_norm(got.double() - ref.double()) /
                          torch.linalg.vector_norm(ref.double())).item()
                tol_ok = bool(torch.all((got.float() - ref).abs() <= 1e-2 + 1e-2 * ref.abs()).item()) if tf32 else \
                    bool(torch.all((got.float() - ref).abs() <= 1e-4 + 1e-4 * ref.abs()).item())
            else:
                err, rel_l2, tol_ok = float("nan"), float("nan"), True
            exp_ok = True
            if exported is not None:
                got_e = exported(x)
                torch.cuda.synchronize()
                tol = 1e-2 if tf32 else 1e-4
                exp_ok = bool(torch.all((got_e.float() - ref).abs() <= tol + tol * ref.abs()).item())
            # Every contender in each round, in turn (bench_timing.bench_interleaved): the ratios
            # come from figures taken side by side, not one after another.
            fns = {"eager": lambda: model(x)}
            if not args.no_compile:
                compiled = compile_model(model, x, preset)
                fns["compile"] = lambda: compiled(x)
            if exported is not None:
                fns["export"] = lambda: exported(x)
            if replay:
                fns["replay"] = lambda: replay(x)
            if unfused:
                fns["unfused"] = lambda: unfused(x)
            if not args.no_matmul:
                fns["matmul"] = lambda: torch.matmul(mm_a, mm_b, out=mm_c)
            t = bench_interleaved(fns)
            nan = (float("nan"),) * 3
            t_eager, t_comp, t_export, t_fuse = (t.get(k, nan)[0] for k in ("eager", "compile", "export", "replay"))
            t_unfused = t.get("unfused", nan)[0]
            # The conv's FLOP (2 N K P Q C R S) at the winner's time; cuBLAS's rate in the same rounds.
            k_out, c_in, r, s = model.conv.weight.shape
            cv = model.conv
            p_out, q_out = ((x.shape[2 + d] + 2 * cv.padding[d] - cv.dilation[d] * (cv.kernel_size[d] - 1) - 1)
                            // cv.stride[d] + 1 for d in (0, 1))
            conv_gflop = 2 * x.shape[0] * k_out * p_out * q_out * c_in * r * s / 1e9
            t_mm = t.get("matmul", nan)[0]
            rate_rows.append((preset, win["name"], conv_gflop, shown_ms(t_export, t_fuse, win["time_ms"]["median"]),
                              2 * MATMUL_N ** 3 / 1e9 / t_mm if t_mm == t_mm else float("nan")))
            spread = "; ".join(f"{k} {lo:.3f}-{hi:.3f}" for k, (_, lo, hi) in t.items())
            print(f"{preset}: medians of {len(fns)} contenders over {INTERLEAVED_ROUNDS} interleaved rounds; ranges {spread}",
                  file=sys.stderr)
            t_eager2 = max(t["eager"][2] / t["eager"][1] - 1, 0) * 100  # eager's spread over the rounds, %
        rows.append((preset, t_eager, t_eager2, t_comp, t_fuse, win["time_ms"]["median"], win["name"],
                     err, rel_l2, tol_ok and exp_ok, t_export))
        other_rows.append((preset, win["name"], win["time_ms"]["median"],
                           other["name"] if other else "-", other["time_ms"]["median"] if other else float("nan")))
        unfused_rows.append((preset, t_eager, t_unfused, unfused_own["time_ms"]["median"] if unfused_own else float("nan"),
                             report["baselines"]["unfused"],
                             unfused_own["time_ms"].get("steps", []) if unfused_own else []))

    print(f"\n(medians of {INTERLEAVED_ROUNDS} interleaved rounds, each contender in turn; eager's spread over the rounds in "
          f"parentheses)")
    print(f"\n| preset ({args.math}) | eager ms | torch.compile ms | fusetune exported module ms | "
          f"fusetune (replayed from PyTorch) ms | fusetune (own timing) ms | vs eager | vs compile | winner | "
          f"max abs diff vs eager | rel L2 | match |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, te, te2, tc, tf, town, name, mx, rl2, ok, tx in rows:
        t = shown_ms(tx, tf, town)
        print(f"| {p} | {te:.3f} ({te2:.1f}%) | {tc:.3f} | {tx:.3f} | {tf:.3f} | {town:.3f} | {te / t:.2f}x | "
              f"{tc / t:.2f}x | {name} | {mx:.2e} | {rl2:.2e} | "
              f"{'yes' if (tf == tf or tx == tx) and ok else 'n/a (cuDNN graph: verified by fusetune)' if ok else 'NO'} |")
    print(f"\n| preset ({args.math}) | eager ms | fusetune unfused (replayed) ms | fusetune unfused (own timing) ms | "
          f"unfused / eager | baseline variant | its steps (own timing, ms) |")
    print("|---|---|---|---|---|---|---|")
    for p, te, tu, town, name, steps in unfused_rows:
        print(f"| {p} | {te:.3f} | {tu:.3f} | {town:.3f} | {tu / te:.2f} | {name} | "
              f"{' + '.join(f'{t:.3f}' for t in steps if t > 0)} |")
    print(f"\n| preset ({args.math}) | winner | own timing ms | best other candidate | own timing ms | "
          f"winner's lead |")
    print("|---|---|---|---|---|---|")
    for p, wname, tw, oname, to in other_rows:
        print(f"| {p} | {wname} | {tw:.3f} | {oname} | {to:.3f} | {to / tw:.2f}x |")
    if rate_rows and not args.no_matmul:
        print(f"\n| preset ({args.math}) | winner | conv GFLOP | winner ms (as above) | winner TFLOP/s | "
              f"cuBLAS matmul {MATMUL_N}^3 TFLOP/s, same rounds | winner / cuBLAS |")
        print("|---|---|---|---|---|---|---|")
        for p, wname, gflop, tw, mm in rate_rows:
            rate = gflop / tw
            print(f"| {p} | {wname} | {gflop:.1f} | {tw:.3f} | {rate:.0f} | {mm:.0f} | {rate / mm:.2f} |")
    if not all(r[9] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
