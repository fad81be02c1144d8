"""`fusetune from-torch --train` on every KernelBench level-2 problem of a checkout: one table row per
problem (mapped with its spec, or refused with the reason from-torch gives), and with --fusetune,
each spec parsed by that binary (`fusetune query SPEC` on an empty database: exit 4 means it parsed).

    python3 bench/kernelbench_specs.py [--kernelbench PATH] [--fusetune build/fusetune] [--markdown FILE] [--jobs N]

--train: KernelBench builds its models without .eval(), so BatchNorm uses batch statistics and
dropout is active; from-torch's default (eval mode) would map a different function. The Python
that runs from-torch is $FUSETUNE_PYTHON or this one; it needs torch (no GPU: shapes are propagated
on the meta device). Exit status: 0 when every mapped spec parsed, 1 otherwise."""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kernelbench_files import DEFAULT  # noqa: E402

PACKAGE = os.path.join(HERE, "..", "python")


def problems(checkout):
    folder = os.path.join(checkout, "KernelBench", "level2")
    files = glob.glob(os.path.join(folder, "*_*.py"))
    if not files:
        sys.exit(f"no KernelBench level-2 problems under {folder} (give --kernelbench PATH or $KERNELBENCH: a checkout "
                 "of github.com/ScalingIntelligence/KernelBench)")
    return sorted(files, key=lambda f: int(os.path.basename(f).split("_")[0]))


def from_torch(python, path, tmp):
    """(status, spec or reason) for one problem file."""
    tmp = tempfile.mkdtemp(dir=tmp)
    out, js = os.path.join(tmp, "specs.txt"), os.path.join(tmp, "model.json")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PACKAGE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([python, "-m", "fusetune_torch.from_torch", f"{path}:Model", "--train", "-o", out,
                        "--json", js], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode == 2 or not os.path.exists(js):
        return "error", (r.stderr.strip().splitlines() or ["no output"])[-1]
    doc = json.load(open(js))
    model = doc.get("model")
    if model and model.get("spec"):
        return "mapped", model["spec"]
    if model is None and len(doc["blocks"]) == 1:  # today's conv2d block, the whole model
        return "mapped", doc["blocks"][0]["spec"]
    return "refused", (model or {}).get("refused") or "; ".join(u["reason"] for u in doc["unmatched"]) or "no block"


def parses(fusetune, spec, tmp):
    r = subprocess.run([fusetune, "query", spec, "--db", os.path.join(tmp, "empty.db")], capture_output=True,
                       text=True)
    return r.returncode in (0, 4), r.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", default=DEFAULT, help="a KernelBench checkout (default $KERNELBENCH or .kernelbench)")
    ap.add_argument("--fusetune", help="check each spec with this fusetune binary's parser")
    ap.add_argument("--python", default=os.environ.get("FUSETUNE_PYTHON", sys.executable),
                    help="the python with torch that runs from-torch")
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    ap.add_argument("--only", help="comma-separated problem numbers")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="problems run at once (default: the CPUs)")
    args = ap.parse_args()
    rows, bad = [], 0
    only = {int(x) for x in args.only.split(",")} if args.only else None
    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in problems(args.kernelbench) if not only or int(os.path.basename(p).split("_")[0]) in only]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(lambda p: from_torch(args.python, p, tmp), paths))
        for path, (status, text) in zip(paths, results):
            number = int(os.path.basename(path).split("_")[0])
            check = ""
            if status == "mapped" and args.fusetune:
                ok, err = parses(args.fusetune, text, tmp)
                check = "parsed" if ok else f"PARSE ERROR: {err}"
                bad += not ok
            rows.append((number, os.path.basename(path)[:-3], status, text, check))
            print(f"{number:3d} {status:8s} {text}" + (f"  [{check}]" if check else ""), flush=True)
    mapped = sum(r[2] == "mapped" for r in rows)
    print(f"{mapped} of {len(rows)} mapped" + (f"; {bad} failed to parse" if args.fusetune else ""))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| # | problem | status | spec, or why not |\n| --- | --- | --- | --- |\n")
            for number, name, status, text, check in rows:
                cell = re.sub(r"\|", r"\\|", text)
                f.write(f"| {number} | {name} | {status} | `{cell}` |\n" if status == "mapped" else
                        f"| {number} | {name} | **{status}** | {cell} |\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
