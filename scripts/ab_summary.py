#!/usr/bin/env python3
"""Summarise cold tunes of two fusetune builds taking turns (scripts/gpu_check.sh step `cold` with
COLD_BINS="A B"): `scripts/ab_summary.py $R/cold`.

Reads DIR/tune-PRESET-bBUILD-RUN.json (tune --json), one per build, run and preset, and prints a
markdown table per preset: each build's winner per round, the winner's median (confirmation round),
`unfused` and the conv floor, and the tune's wall time; then each build's range (min-median-max over
its rounds) and whether the two builds' winner ranges overlap. Builds alternate round by round in
the same call, so the ranges are comparable.
"""
import glob
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        j = json.load(f)
    w = j.get("winner") or {}
    by_name = {r.get("name"): r for r in j.get("results", [])}

    def median(name):
        r = by_name.get(name) or {}
        t = r.get("time_ms") or {}
        return t.get("median") if isinstance(t, dict) else None

    wt = w.get("time_ms") or {}
    return {
        "winner": w.get("name", "-"),
        "winner_ms": wt.get("median") if isinstance(wt, dict) else None,
        "unfused_ms": median(j.get("baselines", {}).get("unfused")),
        "cudnn_ms": median(j.get("baselines", {}).get("cudnn")),
        "tune_s": sum((j.get("phases_s") or {}).values()),
    }


def rng(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{min(xs):.3f}-{statistics.median(xs):.3f}-{max(xs):.3f}"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    runs = {}
    for p in sorted(glob.glob(os.path.join(d, "tune-*-b*-*.json"))):
        m = re.match(r"tune-(?P<preset>.+)-b(?P<build>\d+)-(?P<round>\d+)\.json$", os.path.basename(p))
        if not m:
            continue
        try:
            runs.setdefault(m["preset"], {}).setdefault(m["build"], {})[int(m["round"])] = load(p)
        except (OSError, ValueError, KeyError) as e:
            print(f"ab_summary: {p}: {e}", file=sys.stderr)
    if not runs:
        print("ab_summary: no tune-PRESET-bN-RUN.json files", file=sys.stderr)
        return 1
    for preset, builds in sorted(runs.items()):
        print(f"### {preset}\n")
        print("| build | round | winner | winner ms | unfused ms | conv floor ms | tune s |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for build, rounds in sorted(builds.items()):
            for rnd, r in sorted(rounds.items()):
                f = lambda x: "-" if x is None else f"{x:.3f}"
                print(f"| {build} | {rnd} | {r['winner']} | {f(r['winner_ms'])} | {f(r['unfused_ms'])} | "
                      f"{f(r['cudnn_ms'])} | {r['tune_s']:.1f} |")
        print("\n| build | winner ms (min-median-max) | unfused ms | conv floor ms | tune s | winners |")
        print("| --- | --- | --- | --- | --- | --- |")
        spans = {}
        for build, rounds in sorted(builds.items()):
            rs = list(rounds.values())
            w = [r["winner_ms"] for r in rs if r["winner_ms"] is not None]
            spans[build] = (min(w), max(w)) if w else None
            names = sorted({r["winner"] for r in rs})
            print(f"| {build} | {rng(w)} | {rng([r['unfused_ms'] for r in rs])} | "
                  f"{rng([r['cudnn_ms'] for r in rs])} | {rng([r['tune_s'] for r in rs])} | {', '.join(names)} |")
        s = [v for v in spans.values() if v]
        if len(s) == 2:
            overlap = s[0][0] <= s[1][1] and s[1][0] <= s[0][1]
            print(f"\nwinner ranges {'overlap' if overlap else 'do NOT overlap'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
