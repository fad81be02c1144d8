"""Side by side on one GPU, for any problems (not only the presets): PyTorch eager, torch.compile
(max-autotune-no-cudagraphs) and fusetune's winner, all on the same inputs (torch.rand), in one
script; beside them the fastest verified solution of another candidate than the winner's, as the
tune timed both in one run.

    python3 bench/bench_problems.py --fusetune build/fusetune [--math tf32|fp32] [--json-dir DIR]
        [--reuse] [--no-compile] [--channels-last] [--spec-file FILE [--min-channels C] [--match TEXT]]
        [SPEC...]

--channels-last benches what a channels-last user runs: the model and its input in
torch.channels_last (eager and torch.compile take cuDNN's NHWC paths), against fusetune's tune of
the same spec with in=nhwc,out=nhwc (its winner replayed on the NHWC input, its output left NHWC).
Lines of a spec file that are not conv2d chains (a residual `add(input1)`) are skipped, named on
stderr.

For each spec (NCHW input): `fusetune tune SPEC --math M --force --json DIR/tune-<hash>-M.json`
(or that file, with --reuse), a PyTorch model of the spec (nn.Conv2d seeded by torch.manual_seed(0),
then the epilogue in PyTorch ops with seeded (K,1,1) parameters: bench/check_torch_export_spec.py's
parser and ops), the winner replayed from PyTorch on that model's
weights (bench/fusetune_replay.py), checked against eager's output (|d| <= tol + tol |ref| and
relative L2 <= tol, tol 1e-2 under tf32, 1e-4 under fp32), and every pipeline timed by
triton.testing.do_bench (median). A cuDNN-graph plan (cudnn-fused), which torch cannot replay,
shows fusetune's own timing, marked. Prints a markdown table; exit 1 if a replay did not match.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
from check_torch_export_spec import SpecError, _apply, compare, parse_spec  # noqa: E402
from bench_timing import bench, bench_compiled, torch_math  # noqa: E402
from fusetune_replay import Replay, best_other, replayable  # noqa: E402


def channels_last_spec(spec):
    """The spec with in=nhwc,out=nhwc: what a channels-last model's conv reads and writes."""
    head, sep, tail = spec.partition(")")
    return head + ",in=nhwc,out=nhwc" + sep + tail


class SpecModel(nn.Module):
    """The spec's problem in PyTorch ops, as a user's model would run it."""

    def __init__(self, conv, stages):
        super().__init__()
        self.conv = nn.Conv2d(conv["c"], conv["k"], (conv["r"], conv["s"]), conv["stride"], conv["pad"],
                              conv["dilation"], bias=conv["bias"])
        n_params = sum(1 for _, args in stages for a in args if isinstance(a, tuple))
        self.params = nn.ParameterList(nn.Parameter(torch.randn(conv["k"], 1, 1)) for _ in range(n_params))
        self.stages = stages

    def forward(self, x):
        y = self.conv(x)
        for op, args in self.stages:
            y = _apply(op, args, y, list(self.params))
        return y

    def chan(self):
        """fusetune's per-channel vector: the conv bias (when there is one), then each param[k]."""
        parts = ([self.conv.bias.detach()] if self.conv.bias is not None else []) + \
            [p.detach().flatten() for p in self.params]
        return torch.cat(parts) if parts else torch.zeros(1, device=self.conv.weight.device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*")
    ap.add_argument("--spec-file", help="more specs, one a line (# starts a comment), e.g. bench/problems.txt")
    ap.add_argument("--min-channels", type=int, default=1, help="only the spec file's problems with C >= this")
    ap.add_argument("--fusetune", default="build/fusetune")
    ap.add_argument("--math", default="tf32", choices=["tf32", "fp32"])
    ap.add_argument("--json-dir", default=".")
    ap.add_argument("--reuse", action="store_true", help="read an existing tune JSON instead of tuning")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--channels-last", action="store_true",
                    help="model and input in torch.channels_last; fusetune tunes the spec with in=nhwc,out=nhwc")
    ap.add_argument("--match", default="", help="only the spec file's lines containing this text (e.g. 'n=32,')")
    args = ap.parse_args()

    torch_math(args.math)
    tf32 = args.math == "tf32"
    tol = 1e-2 if tf32 else 1e-4
    specs = list(args.specs)
    if args.spec_file:
        for raw in open(args.spec_file):
            line = raw.split("#", 1)[0].strip()
            if not line or args.match not in raw:
                continue
            try:
                conv = parse_spec(line)[0]
            except SpecError as e:
                print(f"bench_problems: skipped {line}: {e}", file=sys.stderr)
                continue
            if conv["c"] >= args.min_channels:
                specs.append(line)
    if not specs:
        ap.error("no problem: give SPECs or --spec-file")
    rows, all_ok = [], True
    for spec in specs:
        conv, stages = parse_spec(spec)
        if conv["in"] != "nchw":
            sys.exit(f"bench_problems: {spec}: give NCHW specs (--channels-last makes the NHWC twin)")
        tuned = channels_last_spec(spec) if args.channels_last else spec
        layout = "nhwc" if args.channels_last else "nchw"
        json_path = os.path.join(args.json_dir,
                                 f"tune-{hashlib.sha1(tuned.encode()).hexdigest()[:12]}-{args.math}.json")
        if not (args.reuse and os.path.exists(json_path)):
            t0 = time.time()
            subprocess.run([args.fusetune, "tune", tuned, "--math", args.math, "--force", "--json", json_path],
                           check=True, stdout=subprocess.DEVNULL)
            print(f"{spec}: fusetune tune took {time.time() - t0:.0f} s", file=sys.stderr)
        report = json.load(open(json_path))
        torch.manual_seed(0)
        model = SpecModel(conv, stages).cuda().eval()
        x = torch.rand(conv["n"], conv["c"], conv["h"], conv["w"], device="cuda")
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        out_channels = 1 if any(op.startswith("reduce_") for op, _ in stages) else conv["k"]
        win, other = report["winner"], best_other(report)
        with torch.no_grad():
            ref = model(x)
            t_eager = bench(lambda: model(x))
            if replayable(win["variant"]):
                replay = Replay(win["variant"], model.conv, model.chan(), out_channels, args.math)
                ok, line = compare(replay(x), ref, tol)
                all_ok = all_ok and ok
                print(f"{spec}: winner {win['name']}: {line}", file=sys.stderr)
                t_win, check = bench(lambda: replay(x)), "match" if ok else "NO MATCH"
            else:
                t_win, check = win["time_ms"]["median"], "own timing (cuDNN graph)"
            t_comp = float("nan") if args.no_compile else bench_compiled(model, x, spec)
            t_eager2 = bench(lambda: model(x))  # eager again: drift check
        rows.append((tuned, t_eager, t_eager2, t_comp, t_win, win["name"], check, win["time_ms"]["median"],
                     other["name"] if other else "-", other["time_ms"]["median"] if other else float("nan")))

    print(f"\n| problem ({args.math}, {layout} input) | eager ms | torch.compile ms | fusetune winner ms | winner | check | "
          f"vs eager | vs compile | winner, own timing ms | best other candidate | its own timing ms | lead |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec, te, te2, tc, tw, wname, check, town, oname, to in rows:
        print(f"| `{spec}` | {te:.3f} ({te2:.3f}) | {tc:.3f} | {tw:.3f} | {wname} | {check} | {te / tw:.2f}x | "
              f"{tc / tw:.2f}x | {town:.3f} | {oname} | {to:.3f} | {to / town:.2f}x |")
    if not all_ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
