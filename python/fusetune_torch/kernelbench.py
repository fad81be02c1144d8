"""`fusetune kernelbench`: KernelBench's problems through fusetune, judged and timed by KernelBench's
own code (issue 50, item 1).

    fusetune kernelbench --kernelbench PATH [--level 2] [--problems 1-100] [--precision fp32]
        [--math auto] [--time-budget 120] [--db FILE] [--out DIR] [--json FILE] [--csv FILE]
        [--trials 5] [--seed 42] [--perf-trials 100] [--rounds 3] [--no-timing] [--force] [--table-only]

For each selected problem file of the checkout (KernelBench/level<L>/<N>_*.py; nothing of
KernelBench is copied anywhere):
  1. map:     fusetune from-torch FILE:Model --train (KernelBench builds its models without
              .eval(), so BatchNorm uses batch statistics) -> one spec, or the refusal's reason;
  2. tune:    fusetune tune SPEC (stored answers reused; --time-budget per problem);
  3. export:  fusetune export SPEC --format kernelbench -> ModelNew; for a model from-torch mapped
              whole (every main operator but a conv2d chain's), with --init OUT/level<L>/<N>_init.json:
              how the reference model makes its parameters, derived from it and checked by replay
              (init_recipe.py), so that ModelNew draws the same ones from KernelBench's seed;
  4. correct: KernelBench's eval_kernel_against_ref (src/kernelbench/eval.py of the checkout): its
              seed, --trials trials, its tolerance for the precision, TF32 as it leaves it;
              with --math auto (the default), a tf32 ModelNew that KernelBench judges incorrect is
              tuned, exported and judged again with --math fp32 (steps 2-4), and the record keeps
              both attempts (see MATHS below);
  5. time:    KernelBench's measure_ref_program_time (src/kernelbench/timing.py: CUDA events, its
              warmup and trial counts) for the reference model eager, under torch.compile in
              mode "max-autotune" and "max-autotune-no-cudagraphs", and for ModelNew, the four
              interleaved round by round (--rounds, each KernelBench's mean of --perf-trials runs).
Each problem's record is written to OUT/level<L>/<N>.json as soon as it is known, so a run that is
cut resumes where it stopped (--force redoes them), and --table-only makes the table of the
records in OUT without running anything. The table goes to the terminal, --json and --csv;
progress to stderr.

Exit status: 0 the run finished (whatever the problems' results); 2 bad usage (no checkout, a bad
selection); 3 no CUDA GPU for steps 2-5 (the mapping is still done and written, and the table says
which steps did not run).
"""
import argparse
import contextlib
import csv
import functools
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

from .init_recipe import InitRefused, derive_units, init_document  # torch is imported where it is used

USAGE, NO_GPU = 2, 3
COMPILE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")
# The math modes each --math tries, in order. KernelBench's fp32 tolerance is atol = rtol = 1e-4.
# Eager PyTorch runs its convs with TF32 (torch.backends.cudnn.allow_tf32 is True by default), and a
# tf32 winner sums its products in another order than cuDNN's algorithm: on most problems the
# two agree within 1e-4, but on some (KernelBench 57, 69, 71 and 87 on the H100, 2026-12-06)
# they differ by 3e-4 although both are within TF32's error of the exact answer. For those,
# auto falls back to fp32 (strict or 3xTF32, more work than eager does): a correct ModelNew
# first, its speed second.
MATHS = {"auto": ("tf32", "fp32"), "tf32": ("tf32",), "fp32": ("fp32",)}


class UsageError(Exception):
    pass


# Statuses decided without a GPU, kept by a GPU run that resumes a GPU-less one (--force redoes them).
SPEC_VERDICTS = ("refused", "not tunable yet", "not verifiable yet")


def parse_selection(text, lo=1, hi=100):
    """`1-100`, `31,32`, `1-10,40`: the problem numbers, sorted, each once."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UsageError(f"--problems: expected numbers and ranges such as 1-100 or 31,32, got '{part}'")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if a > b or a < lo or b > hi:
            raise UsageError(f"--problems: '{part}' is outside {lo}-{hi}")
        out.update(range(a, b + 1))
    return sorted(out)


def problem_files(kernelbench, level, numbers):
    """{number: path} of the checkout's problem files; UsageError without a checkout."""
    folder = os.path.join(kernelbench, "KernelBench", f"level{level}")
    if not os.path.isdir(folder):
        raise UsageError(f"no KernelBench checkout at '{kernelbench}' ({folder} is missing): give --kernelbench PATH")
    files = {}
    for n in numbers:
        found = sorted(glob.glob(os.path.join(folder, f"{n}_*.py")))
        if found:
            files[n] = found[0]
    return files


def last_line(text):
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def failed_tune_reason(doc, err):
    """Why a tune that ran ended without a verified winner. With --json -, tune's table goes to
    stderr and its last line is only the database's path; the document's results say, per
    variant, what failed (compile error, wrong result, fault, timeout...)."""
    rows = [r for r in (doc.get("results") or []) if isinstance(r, dict)]
    failed = [r for r in rows if not r.get("verified")]
    if rows:
        parts = [f"{r.get('name')}: {r.get('status')}" + (f" ({last_line(str(r['reason']))})" if r.get("reason") else "")
                 for r in failed[:4]]
        more = f"; {len(failed) - 4} more" if len(failed) > 4 else ""
        return f"{len(failed)} of {len(rows)} variants failed: " + "; ".join(parts) + more
    lines = [ln.strip() for ln in (err or "").splitlines() if ln.strip() and not ln.startswith("database ")]
    return lines[-1] if lines else ""


class Fusetune:
    """The fusetune binary, run as a user would run it."""

    def __init__(self, binary, db, time_budget):
        self.binary, self.db, self.time_budget = binary, db, time_budget

    def run(self, *args, timeout=None):
        p = subprocess.run([self.binary, *args], capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def map(self, path):
        """(spec, None, model) or (None, reason, None); model is from-torch's JSON entry for a model
        mapped whole (a version-2 problem: its export needs an init file), else None."""
        with tempfile.TemporaryDirectory() as tmp:
            doc_path = os.path.join(tmp, "from-torch.json")
            code, out, err = self.run("from-torch", f"{path}:Model", "--train", "-o", "-", "--json", doc_path)
            model = mapped_model(doc_path)
        # a spec line may end in a comment (the modules it comes from); '#' is never part of a spec
        specs = [ln.split("#", 1)[0].strip() for ln in out.splitlines()]
        specs = [sp for sp in specs if sp]
        if code != 0 or not specs:
            # from-torch's last line is a count; the reason is its "not mapped:" line
            why = [ln.strip() for ln in (err or "").splitlines() if "not mapped:" in ln]
            return None, (why[-1] if why else "") or last_line(err) or last_line(out) or f"from-torch exit {code}", None
        if len(specs) != 1:
            return None, f"from-torch wrote {len(specs)} specs for one model", None
        return specs[0], None, model

    def tune(self, spec, math):
        args = ["tune", spec, "--db", self.db, "--math", math, "--json", "-", "-q"]
        if self.time_budget:
            args += ["--time-budget", str(self.time_budget)]
        code, out, err = self.run(*args)
        try:
            doc = json.loads(out) if out.strip() else {}
        except json.JSONDecodeError:
            doc = {}
        return code, doc, err

    def export(self, spec, math, path, init=None):
        code, _, err = self.run("export", spec, "--db", self.db, "--math", math, "--format", "kernelbench",
                                "-o", path, *(["--init", init] if init else []))
        return code, last_line(err)


def mapped_model(doc_path):
    """from-torch's `model` entry when it mapped the model whole (a conv2d chain is written as a block
    and has none: its export needs no init file), else None; None too when the file is missing."""
    try:
        with open(doc_path) as f:
            model = json.load(f).get("model")
    except (OSError, ValueError, AttributeError):
        return None
    return model if isinstance(model, dict) and "spec" in model else None


def reference_model(ref_src, path):
    """The problem file's Model class and get_init_inputs(), run as KernelBench runs it (exec)."""
    ns = {"__name__": "fusetune_kernelbench_reference", "__file__": path}
    exec(compile(ref_src, path, "exec"), ns)  # noqa: S102 - KernelBench's own problem file, as its eval does
    return ns["Model"], list(ns["get_init_inputs"]())


def write_init(path, ref_src, model_doc, seed, init_path):
    """Derives the init file of the problem at `path` (init_recipe.py) and writes it to init_path:
    (init_path, None), or (None, the one-line reason it cannot be written)."""
    try:
        model_cls, init_inputs = reference_model(ref_src, path)
        doc = init_document(derive_units(model_cls, init_inputs, seed), model_doc)
    except InitRefused as e:
        return None, f"init file: {e.reason}"
    except Exception as e:  # noqa: BLE001 - the problem's code: its failure is the attempt's status
        return None, f"init file: {type(e).__name__}: {last_line(str(e))}"
    with open(init_path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(init_path + ".tmp", init_path)
    return init_path, None


def stand_in_llm_clients():
    """KernelBench's utils.py imports its LLM clients (openai, litellm, dotenv) when it loads; eval and
    timing never call them. Where they are not installed, empty stand-ins take their names, so the
    GPU machine needs no LLM client libraries. Nothing of KernelBench itself is changed."""
    import importlib.util  # noqa: PLC0415
    import types  # noqa: PLC0415
    names = {"openai": {"OpenAI": object}, "litellm": {"completion": None},
             "dotenv": {"load_dotenv": lambda *a, **k: None}}
    for name, attrs in names.items():
        if name in sys.modules or importlib.util.find_spec(name) is not None:
            continue
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module


def kernelbench_modules(kernelbench):
    """KernelBench's eval and timing modules from the checkout (src/kernelbench), or a reason."""
    src = os.path.join(kernelbench, "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    stand_in_llm_clients()
    try:
        import torch  # noqa: F401 - KernelBench's code needs it; say so plainly when it is missing
        from kernelbench import eval as kb_eval  # noqa: PLC0415
        from kernelbench import timing as kb_timing  # noqa: PLC0415
    except ImportError as e:
        return None, None, (f"KernelBench's eval does not import ({e}); it needs torch, numpy, pydantic, "
                            f"requests and tqdm (pip install -e {kernelbench})")
    return kb_eval, kb_timing, None


def cuda_available():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return False
    return torch.cuda.is_available()


def new_as_model(ref_src, new_src):
    """ModelNew's source in the shape KernelBench's timing loads (class Model, get_inputs,
    get_init_inputs): the reference's input functions, ModelNew under the name Model."""
    return new_src + "\n\n" + re.sub(r"^class Model\b", "class _ReferenceModel", ref_src, flags=re.M) + \
        "\n\nModel = ModelNew\n"


def median(values):
    v = sorted(values)
    n = len(v)
    return None if n == 0 else (v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2]))


def time_interleaved(kb_timing, name, ref_src, new_src, rounds, trials, precision, log):
    """{contender: [median ms of each round]}: eager, torch.compile in each mode, ModelNew, one
    after the other in every round, with KernelBench's measure_ref_program_time."""
    contenders = [("eager", ref_src, False, "default")]
    contenders += [(f"torch.compile {m}", ref_src, True, m) for m in COMPILE_MODES]
    if new_src:
        contenders.append(("fusetune", new_as_model(ref_src, new_src), False, "default"))
    times = {c[0]: [] for c in contenders}
    for r in range(rounds):
        for label, src, compiled, mode in contenders:
            try:
                # KernelBench prints its progress on stdout, where the table and documents go
                with contextlib.redirect_stdout(sys.stderr):
                    stats = kb_timing.measure_ref_program_time(name, src, num_trials=trials,
                                                               use_torch_compile=compiled,
                                                               torch_compile_options=mode, precision=precision)
                times[label].append(stats["mean"])  # KernelBench's figure: the mean of its trials, ms
            except Exception as e:  # noqa: BLE001 - one contender's failure is its result
                times[label].append(None)
                log(f"    {label}: round {r + 1} failed: {type(e).__name__}: {e}")
    return times


def geomean(values):
    v = [x for x in values if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def span(values):
    v = [x for x in values if x is not None]
    return (min(v), median(v), max(v)) if v else None


def summarize(records):
    rows = []
    for r in records:
        t = r.get("times") or {}
        fus = span(t.get("fusetune", []))
        row = {"problem": r["problem"], "name": r["name"], "mapped": r.get("spec") is not None,
               "verified": r.get("verified", False), "kernelbench_correct": r.get("correct"),
               "status": r["status"], "math": r.get("math")}
        for label in ["eager"] + [f"torch.compile {m}" for m in COMPILE_MODES] + ["fusetune"]:
            s = span(t.get(label, []))
            row[label + " ms"] = s
            if fus and s and label != "fusetune":
                row["x " + label] = s[1] / fus[1]
        rows.append(row)
    means = {}
    for key in ["x eager"] + [f"x torch.compile {m}" for m in COMPILE_MODES]:
        means[key] = geomean([row.get(key) for row in rows])
    return rows, means


def fmt_span(s):
    return "-" if not s else f"{s[0]:.3f}-{s[1]:.3f}-{s[2]:.3f}"


def print_table(rows, means, out):
    head = ["#", "problem", "mapped", "verified", "KB-correct", "math", "eager ms", "compile ms (max-autotune)",
            "fusetune ms", "x eager", "x compile"]
    print("  ".join(head), file=out)
    for row in rows:
        cells = [str(row["problem"]), row["name"][:40], "yes" if row["mapped"] else "no",
                 "yes" if row["verified"] else "no",
                 "-" if row["kernelbench_correct"] is None else ("yes" if row["kernelbench_correct"] else "no"),
                 row.get("math") or "-",
                 fmt_span(row["eager ms"]), fmt_span(row["torch.compile max-autotune ms"]), fmt_span(row["fusetune ms"]),
                 f"{row['x eager']:.2f}" if row.get("x eager") else "-",
                 f"{row['x torch.compile max-autotune']:.2f}" if row.get("x torch.compile max-autotune") else "-"]
        print("  ".join(cells), file=out)
    n = len(rows)
    mapped = sum(r["mapped"] for r in rows)
    verified = sum(r["verified"] for r in rows)
    correct = sum(1 for r in rows if r["kernelbench_correct"])
    print(f"{n} problems: {mapped} mapped, {verified} verified, {correct} KernelBench-correct", file=out)
    for key, value in means.items():
        print(f"geometric mean speedup {key[2:]}: {'-' if value is None else f'{value:.3f}'}", file=out)


def empty_cuda_cache():
    """Give PyTorch's cached GPU memory back between problems (each problem's models are gone)."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def kernelbench_check(args, ref_src, new_src):
    """KernelBench's correctness procedure on ModelNew: (correct, metadata, reason or None)."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            result = args.kb_eval.eval_kernel_against_ref(
                ref_src, new_src, seed_num=args.seed, num_correct_trials=args.trials, measure_performance=False,
                precision=args.kb_eval.get_torch_dtype_from_string(args.precision))
    except Exception as e:  # noqa: BLE001 -- one problem's failure is its record, and the run goes on
        return False, {}, f"KernelBench's eval raised {type(e).__name__}: {last_line(str(e))}"
    correct = bool(result and result.correctness)
    metadata = dict(result.metadata) if result else {}
    return correct, metadata, None if correct else "KernelBench's correctness procedure failed" + (
        f" (max difference {metadata['max_difference']})" if metadata.get("max_difference") else "")


def attempt(n, spec, ref_src, args, ft, math, init=None):
    """Steps 2-4 in one math mode: a dict with status (and reason), math, tune_exit, verified,
    winner, correct, kb_metadata, new_path as far as they got. init: None (from-torch wrote a conv2d
    chain block), or a function giving (the init file's path, None) or (None, why there is none)."""
    att = {"math": math, "verified": False, "correct": None}
    code, doc, full_err = ft.tune(spec, math)
    err = last_line(full_err)
    att["tune_exit"] = code
    # tune answers these from the spec alone, before it looks for a GPU: a machine without one
    # still learns which problems are tunable (and keeps that verdict, see main)
    if code == 2 and "no candidates" in err:
        return {**att, "status": "not tunable yet", "reason": err}
    if code == 2 and "float64 reference" in err:
        return {**att, "status": "not verifiable yet", "reason": err}
    if not args.gpu:
        return {**att, "status": "mapped", "reason": "no CUDA GPU: not tuned"}
    if code != 0:
        return {**att, "status": "no verified winner",
                "reason": failed_tune_reason(doc, full_err) or f"tune exit {code}"}
    att.update(verified=True, status="verified", winner=doc.get("winner"))
    new_path = os.path.join(args.out, f"level{args.level}", f"{n}_new.py" if math == "tf32" else f"{n}_new_{math}.py")
    # Without an init file the export of a version-2 problem fails, and the init's refusal is the reason; a
    # conv2d chain that from-torch mapped whole exports without it (export decides from the spec)
    init_path, init_refused = init() if init is not None else (None, None)
    code, err = ft.export(spec, math, new_path, init_path)
    if code != 0:
        return {**att, "status": "not exported", "reason": init_refused or err}
    att["new_path"] = new_path
    if args.kb_eval is None:
        return {**att, "reason": args.kb_reason}
    with open(new_path) as f:
        new_src = f.read()
    correct, metadata, reason = kernelbench_check(args, ref_src, new_src)
    att.update(correct=correct, kb_metadata=metadata,
               status="KernelBench-correct" if correct else "KernelBench-incorrect")
    if reason:
        att["reason"] = reason
    return att


def run_problem(n, path, args, ft, log):
    name = os.path.splitext(os.path.basename(path))[0]
    rec = {"problem": n, "name": name, "file": os.path.relpath(path, args.kernelbench), "status": "refused",
           "spec": None, "verified": False, "correct": None, "times": {}}
    spec, reason, model_doc = ft.map(path)
    if spec is None:
        rec["reason"] = reason
        return rec
    rec["spec"], rec["status"] = spec, "mapped"
    with open(path) as f:
        ref_src = f.read()
    # A whole-model mapping's export needs the init file: derived on the first export, once for every
    # math mode (building the model can take a while: KernelBench has 4 GB weights)
    init = None if model_doc is None else functools.cache(
        lambda: write_init(path, ref_src, model_doc, args.seed,
                           os.path.join(args.out, f"level{args.level}", f"{n}_init.json")))
    maths = MATHS[args.math]
    attempts = []
    for k, math in enumerate(maths):
        att = attempt(n, spec, ref_src, args, ft, math, init)
        attempts.append(att)
        # Only KernelBench's verdict on an exported ModelNew sends the problem to the next math mode:
        # every other outcome is the problem's, whatever the math.
        if att["status"] != "KernelBench-incorrect" or k + 1 == len(maths):
            break
        log(f"    {math}: {att['reason']}; again with --math {maths[k + 1]}")
    last = attempts[-1]
    for key in ("status", "reason", "tune_exit", "verified", "winner", "correct", "kb_metadata"):
        if key in last:
            rec[key] = last[key]
    rec["math"] = last["math"]
    if len(attempts) > 1:
        rec["attempts"] = [{k: v for k, v in a.items() if k != "new_path"} for a in attempts]
    if rec["status"] in ("KernelBench-correct", "KernelBench-incorrect") and not args.no_timing:
        with open(last["new_path"]) as f:
            new_src = f.read()
        try:
            rec["times"] = time_interleaved(args.kb_timing, name, ref_src, new_src if rec["correct"] else None,
                                            args.rounds, args.perf_trials, args.precision, log)
        except Exception as e:  # noqa: BLE001
            rec["reason"] = f"timing raised {type(e).__name__}: {last_line(str(e))}"
    empty_cuda_cache()
    return rec


@contextlib.contextmanager
def document(path):
    """A file to write, or standard output for "-" (left open)."""
    if path == "-":
        yield sys.stdout
        return
    with open(path, "w", newline="") as f:
        yield f


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fusetune kernelbench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", default=os.environ.get("KERNELBENCH", ".kernelbench"))
    ap.add_argument("--fusetune", default=os.environ.get("FUSETUNE_BIN", "fusetune"))
    ap.add_argument("--level", type=int, default=2, choices=[1, 2, 3, 4])
    ap.add_argument("--problems", default="1-100")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--math", default="auto", choices=list(MATHS))
    ap.add_argument("--time-budget", type=float, default=120.0)
    ap.add_argument("--db", default=None)
    ap.add_argument("--out", default="kernelbench-run")
    ap.add_argument("--json", default=None)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--perf-trials", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    try:
        if args.json == "-" and args.csv == "-":
            raise UsageError("only one document can go to standard output: give --json FILE or --csv FILE")
        if args.precision != "fp32":
            raise UsageError(f"--precision {args.precision}: fusetune's problems are fp32 until half precision "
                             "lands (issue 48)")
        if args.rounds < 1 or args.trials < 1 or args.perf_trials < 1:
            raise UsageError("--rounds, --trials and --perf-trials must be at least 1")
        if args.table_only and args.force:
            raise UsageError("--table-only runs nothing, --force redoes problems: give one of them")
        files = problem_files(args.kernelbench, args.level, parse_selection(args.problems))
    except UsageError as e:
        print(f"fusetune kernelbench: {e}", file=sys.stderr)
        return USAGE
    os.makedirs(os.path.join(args.out, f"level{args.level}"), exist_ok=True)
    db = args.db or os.path.join(args.out, "tuning.db")
    ft = Fusetune(args.fusetune, db, args.time_budget)
    args.gpu = False if args.table_only else cuda_available()
    args.kb_eval = args.kb_timing = None
    args.kb_reason = None
    if args.gpu:
        args.kb_eval, args.kb_timing, args.kb_reason = kernelbench_modules(args.kernelbench)
    elif not args.table_only:
        log("fusetune kernelbench: no CUDA GPU (or no torch): mapping only; tune, export, KernelBench's "
            "correctness and timing are not run")

    records = []
    for k, (n, path) in enumerate(sorted(files.items())):
        rec_path = os.path.join(args.out, f"level{args.level}", f"{n}.json")
        if args.table_only:
            if os.path.exists(rec_path):
                with open(rec_path) as f:
                    records.append(json.load(f))
            continue
        if os.path.exists(rec_path) and not args.force:
            with open(rec_path) as f:
                rec = json.load(f)
            # A refusal or a "not tunable yet" depends on the model and the binary, not on the GPU:
            # such records of a GPU-less run are kept (mapping 90 problems costs minutes of device time).
            if rec.get("gpu_run") or not args.gpu or rec.get("status") in SPEC_VERDICTS:
                log(f"[{k + 1}/{len(files)}] {os.path.basename(path)}: kept from {rec_path}")
                records.append(rec)
                continue
        log(f"[{k + 1}/{len(files)}] {os.path.basename(path)}")
        t0 = time.monotonic()
        rec = run_problem(n, path, args, ft, log)
        rec["gpu_run"] = args.gpu
        rec["seconds"] = round(time.monotonic() - t0, 1)
        log(f"    {rec['status']}" + (f": {rec['reason']}" if rec.get("reason") else ""))
        with open(rec_path + ".tmp", "w") as f:
            json.dump(rec, f, indent=1)
        os.replace(rec_path + ".tmp", rec_path)
        records.append(rec)

    rows, means = summarize(records)
    # the table is for people: on stderr when a document takes stdout
    print_table(rows, means, sys.stderr if "-" in (args.json, args.csv) else sys.stdout)
    doc = {"kernelbench": os.path.abspath(args.kernelbench), "level": args.level, "precision": args.precision,
           "math": args.math, "compile_modes": list(COMPILE_MODES), "rounds": args.rounds,
           "perf_trials": args.perf_trials, "problems": rows, "geomean": means, "records": records}
    if args.json:
        with document(args.json) as f:
            json.dump(doc, f, indent=1, default=list)
            f.write("\n")
    if args.csv:
        with document(args.csv) as f:
            w = csv.writer(f)
            keys = list(rows[0].keys()) if rows else []
            w.writerow(keys)
            for row in rows:
                w.writerow([fmt_span(row[k]) if isinstance(row[k], tuple) else row[k] for k in keys])
    return 0 if args.gpu or args.table_only else NO_GPU


if __name__ == "__main__":
    sys.exit(main())
