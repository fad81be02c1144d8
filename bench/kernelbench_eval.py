"""KernelBench's correctness check, re-implemented as one self-contained script.

    python3 bench/kernelbench_eval.py --ref REF.py --new NEW.py [--trials 5] [--seed 42]
        [--tf32 on|off|default] [--json OUT.json] [--atol X] [--rtol Y]
        [--precision fp32|fp16|bf16] [--backend cuda|triton|tilelang|cute|hip|thunderkittens]
        [--build-dir DIR] [--device N]

REF.py is a KernelBench problem (class Model, get_inputs(), get_init_inputs()); NEW.py defines
class ModelNew. The script answers the question KernelBench's eval asks ("does ModelNew
match Model on N seeded random inputs?") without needing the KernelBench package, so that a
candidate checked here passes or fails there for the same reasons.

Exit status: 0 every trial passed; 1 a trial failed, or NEW.py did not load, build or run;
2 bad usage (bad flags, unreadable files, a REF.py that does not load); 77 torch missing or
no CUDA GPU (the autotools "skipped" code, so CI can tell "not run" from "failed").

Upstream followed
-----------------
ScalingIntelligence/KernelBench, src/kernelbench/eval.py at commit
423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (2026-03-05): eval_kernel_against_ref(),
run_and_check_correctness(), set_seed(), load_original_model_and_inputs(), load_custom_model(),
load_custom_model_with_tempfile(), _process_input_tensor(), get_tolerance_for_precision().
(Before the 2025-12-27 packaging change the same code lived at src/eval.py.) The defaults of
the callers, scripts/run_and_check.py, scripts/eval_from_generations.py and
scripts/generate_and_eval_single_sample.py: 5 correctness trials, seed 42, precision fp32,
backend cuda. eval_kernel_against_ref() itself defaults to 1 trial; every script passes 5.

The procedure, step by step, as upstream does it:
  1. torch.cuda.set_device(device); torch.set_printoptions(precision=4, threshold=10,
     edgeitems=3, linewidth=80).
  2. REF source: compile(src, "<string>", "exec") as a syntax check, then exec(src, context)
     into a plain dict `context`; Model, get_inputs, get_init_inputs are taken from it.
  3. set_seed(seed) [torch.manual_seed + torch.cuda.manual_seed]; init_inputs =
     get_init_inputs(); every tensor in it is cast to the precision dtype and moved to the
     device (_process_input_tensor).
  4. Under torch.no_grad(): set_seed(seed); Model(*init_inputs). Parameters are created on the
     CPU (the default device) and so come from the CPU generator.
  5. os.environ["TORCH_USE_CUDA_DSA"] = "1"; NEW source is exec'd into the SAME `context` dict
     (backends cuda/hip/thunderkittens; with --build-dir two lines setting
     TORCH_EXTENSIONS_DIR are prepended first), or, for triton/tilelang/cute, written to a temp
     .py file and imported with importlib as module "temp_module" (those backends also get
     CUDA_VISIBLE_DEVICES set to the device index). torch.cuda.synchronize().
  6. Under torch.no_grad(): set_seed(seed); ModelNew(*init_inputs); then
     Model.to(device, dtype=precision) and ModelNew.to(device, dtype=precision); synchronize.
  7. torch.manual_seed(seed); trial seeds = [torch.randint(0, 2**32 - 1, (1,)).item()
     for each trial] (CPU generator).
  8. Under torch.no_grad(), per trial: set_seed(trial_seed); inputs = get_inputs() (REF's
     function), each tensor cast to precision and moved to the device; set_seed(trial_seed);
     Model.to(...); set_seed(trial_seed); ModelNew.to(...); output = Model(*inputs); sync;
     output_new = ModelNew(*inputs) (the same input tensors, not cloned); sync.
     Shape mismatch, or any exception from ModelNew's forward, ends the check at once
     (later trials do not run). Otherwise pass iff
     torch.allclose(output, output_new, atol=tol, rtol=tol) with tol from
     get_tolerance_for_precision(): fp32 1e-4, fp16 1e-2, bf16 1e-2. (KernelBench v0 / v0.1,
     up to commit e395e91, used atol = rtol = 1e-2 for everything; commit 2c3dbda, PR #80,
     2025-11-04, made fp32 1e-4.)
  9. On a failing trial upstream records max |output - output_new| and mean |output -
     output_new| as "%.6f" strings in metadata["max_difference"] / ["avg_difference"];
     at the end metadata["correctness_trials"] = "(pass / total)". Correct iff all pass.
TF32: nothing in KernelBench touches torch.backends.cuda.matmul.allow_tf32,
torch.backends.cudnn.allow_tf32 or torch.set_float32_matmul_precision, so upstream runs with
PyTorch's defaults (cuDNN convolutions in TF32, matmuls in full FP32). --tf32 default is
therefore the faithful setting and is this script's default. It matters for convolutions:
on an H200 (PyTorch 2.11) a Conv2d(64, 128, 3) reference under the defaults sat about 5e-4 from
a float64-accurate ModelNew, so an exact kernel failed every fp32 trial at 1e-4 and passed all
of them with --tf32 off (max difference 6e-7).

Upstream behaviour kept on purpose, though surprising:
  * Every input tensor is cast to the precision dtype, integer ones included (int64 class
    targets become float32). KernelBench issue #151 / PR #152 (open when read) report that this
    breaks CrossEntropyLoss-style problems; the script does the same so it fails where
    KernelBench fails.
  * REF and NEW share one namespace, so module-level names NEW.py (re)defines, such as
    batch_size, are what REF's get_inputs() and Model's methods see when they run after NEW.py
    was loaded (get_init_inputs() ran before it). NEW.py may also use names REF.py defined
    without importing them. A get_inputs defined in NEW.py is not called.
  * The reference runs first on each trial's inputs and they are not cloned, so an in-place
    write by Model.forward is seen by ModelNew.

Deviations, and why:
  * Max and mean absolute difference are computed and printed for passing trials as well
    (upstream records them only for failing ones); they are computed after allclose and use no
    random numbers, so the verdict is unaffected. The upstream-shaped metadata is in the JSON
    under "upstream_metadata".
  * The --tf32 flag (upstream has none) sets the backend flags before anything is built, to
    tell TF32-caused mismatches from real ones; only "default" matches upstream.
  * --atol / --rtol override the precision's tolerance (upstream has a "@todo" for that); left
    out, both equal the upstream value.
  * No timing, no "excessive speedup" check, no static kernel checker and no GPU-vendor check:
    those run after, or beside, the correctness verdict and do not change it.
  * A compile error whose text mentions "lock" or "No such file or directory" makes upstream
    return None ("please retry"); here it is a load failure (exit 1) with that hint printed.
  * Upstream catches only RuntimeError from ModelNew's construction (others escape to the
    calling script, which records them as a failure); here any exception is a failure.
  * No graceful_eval_cleanup() (CUDA cache emptying, peak-memory reset): the process ends
    right after the check. The temp module file of triton/tilelang/cute is still deleted at
    the end, as upstream does.
"""

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import traceback

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77

UPSTREAM = ("ScalingIntelligence/KernelBench src/kernelbench/eval.py @ "
            "423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (eval_kernel_against_ref + "
            "run_and_check_correctness; trial count and seed from scripts/run_and_check.py)")

# get_tolerance_for_precision() at the commit above; used for both atol and rtol.
UPSTREAM_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2}

# Backends upstream loads through a temp file + importlib ("compile / exec do not play well
# with the @triton.jit decorator"); all others are exec'd into the shared context.
TEMPFILE_BACKENDS = ("triton", "tilelang", "cute")
BACKENDS = ("cuda", "triton", "tilelang", "cute", "hip", "thunderkittens")

try:
    import torch
    _TORCH_IMPORT_ERROR = None
except Exception as exc:  # any failure to import means we cannot run, not that NEW.py is wrong
    torch = None
    _TORCH_IMPORT_ERROR = exc


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="KernelBench correctness check (re-implementation of eval.py's procedure)")
    p.add_argument("--ref", required=True, help="KernelBench problem file (class Model)")
    p.add_argument("--new", required=True, help="candidate file (class ModelNew)")
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--tf32", choices=("on", "off", "default"), default="default")
    p.add_argument("--json", metavar="OUT.json")
    p.add_argument("--atol", type=float)
    p.add_argument("--rtol", type=float)
    p.add_argument("--precision", choices=tuple(UPSTREAM_TOLERANCE), default="fp32")
    p.add_argument("--backend", choices=BACKENDS, default="cuda")
    p.add_argument("--build-dir", help="TORCH_EXTENSIONS_DIR prepended to NEW.py, as upstream's "
                                       "build_dir (run_and_check.py passes test_build/<hash>)")
    p.add_argument("--device", type=int, help="CUDA device index (default: current device)")
    args = p.parse_args(argv)
    if args.trials < 1:
        p.error("--trials must be at least 1")
    if args.backend == "tilelang" and args.precision == "fp32":
        # upstream asserts this before doing anything else
        p.error("--backend tilelang needs --precision fp16 or bf16")
    if args.seed < 0:
        p.error("--seed must be non-negative (torch.manual_seed)")
    return args


def read_source(path):
    with open(path, "r", encoding="utf-8") as f:
        return f.read()


def set_seed(seed):
    torch.manual_seed(seed)
    # Redundant with manual_seed on current PyTorch, kept because upstream calls both.
    torch.cuda.manual_seed(seed)


def process_input(x, device, dtype):
    # Upstream casts every tensor, integer ones too (issue #151); kept for parity.
    if not isinstance(x, torch.Tensor):
        return x
    return x.to(dtype=dtype).to(device=device)


def load_ref(src, context):
    try:
        compile(src, "<string>", "exec")
    except SyntaxError as e:
        return None, f"syntax error in REF: {e}"
    try:
        exec(src, context)
    except Exception as e:
        return None, f"error executing REF: {e}"
    got = (context.get("Model"), context.get("get_init_inputs"), context.get("get_inputs"))
    missing = [n for n, v in zip(("Model", "get_init_inputs", "get_inputs"), got) if v is None]
    if missing:
        return None, "REF defines no " + ", ".join(missing)
    return got, None


def load_new_exec(src, context, build_dir):
    if build_dir:
        context["BUILD_DIRECTORY"] = build_dir
        src = ("import os\n" f"os.environ['TORCH_EXTENSIONS_DIR'] = '{build_dir}'\n") + src
    try:
        compile(src, "<string>", "exec")
        # The source text, not the code object, is exec'd: this is what upstream does, and it
        # keeps the shared-namespace behaviour described in the docstring.
        exec(src, context)
    except SyntaxError as e:
        print(f"Syntax Error in custom generated code or Compilation Error {e}")
        return None
    return context.get("ModelNew")


def load_new_tempfile(src):
    with tempfile.NamedTemporaryFile(mode="w", suffix=".py", delete=False) as tmp:
        tmp.write(src)
        path = tmp.name
    spec = importlib.util.spec_from_file_location("temp_module", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        os.remove(path)
        raise
    # getattr without default, as upstream: a missing ModelNew raises (a load failure).
    return getattr(module, "ModelNew"), path


def apply_tf32(mode):
    if mode == "default":
        return
    flag = mode == "on"
    torch.backends.cuda.matmul.allow_tf32 = flag
    torch.backends.cudnn.allow_tf32 = flag


def tf32_state():
    return {"matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32)}


def error_name(e):
    return f"{e.__class__.__module__}.{e.__class__.__name__}"


def run(args, ref_src, new_src, report, temp_files):
    """Returns the exit status; fills `report` as it goes; temp_files gets paths for the
    caller to delete after the trials (upstream deletes the temp module only in its final
    cleanup, in case a DSL re-reads its source lazily)."""
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    device = torch.device("cuda", args.device if args.device is not None
                          else torch.cuda.current_device())
    trials = report["trials"]
    meta = report["upstream_metadata"]

    def stop(status, msg, code=EXIT_FAIL):
        report["status"] = status
        report["error"] = msg
        print(f"kernelbench-eval: {status}: {msg}")
        return code

    # TF32 flags go in before any model exists so construction-time and forward-time
    # behaviour both see them.
    apply_tf32(args.tf32)
    report["tf32_effective"] = tf32_state()

    torch.set_printoptions(precision=4, threshold=10, edgeitems=3, linewidth=80)
    torch.cuda.set_device(device)
    report["hardware"] = torch.cuda.get_device_name(device)
    report["device"] = str(device)

    if args.backend in TEMPFILE_BACKENDS:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device.index)

    context = {}
    loaded, err = load_ref(ref_src, context)
    if loaded is None:
        return stop("ref_error", err, EXIT_USAGE)
    Model, get_init_inputs, get_inputs = loaded

    try:
        set_seed(args.seed)
        init_inputs = [process_input(x, device, dtype) for x in get_init_inputs()]
        with torch.no_grad():
            set_seed(args.seed)
            original_model = Model(*init_inputs)
            assert hasattr(original_model, "forward")
    except Exception as e:
        traceback.print_exc()
        return stop("ref_error", f"building Model failed: {error_name(e)}: {e}", EXIT_USAGE)

    try:
        os.environ["TORCH_USE_CUDA_DSA"] = "1"
        if args.backend in TEMPFILE_BACKENDS:
            ModelNew, path = load_new_tempfile(new_src)
            temp_files.append(path)
        else:
            ModelNew = load_new_exec(new_src, context, args.build_dir)
        torch.cuda.synchronize(device=device)
    except Exception as e:
        traceback.print_exc()
        meta["compilation_error_name"] = error_name(e)
        meta["compilation_error"] = str(e)
        hint = ""
        if "lock" in str(e) or "No such file or directory" in str(e):
            hint = " (upstream treats this as a build-lock race and asks to retry)"
        return stop("compile_error", f"{error_name(e)}: {e}{hint}")
    if ModelNew is None:
        meta["compilation_error_name"] = "SyntaxError"
        return stop("compile_error", "syntax error in NEW, or NEW defines no ModelNew")

    try:
        with torch.no_grad():
            set_seed(args.seed)
            custom_model = ModelNew(*init_inputs)
            assert hasattr(custom_model, "forward")
            original_model = original_model.to(device=device, dtype=dtype)
            custom_model = custom_model.to(device=device, dtype=dtype)
            torch.cuda.synchronize(device=device)
    except Exception as e:
        traceback.print_exc()
        meta["runtime_error_name"] = error_name(e)
        meta["runtime_error"] = str(e)
        return stop("runtime_error", f"building ModelNew failed: {error_name(e)}: {e}")

    # The trial seeds come from the CPU generator seeded once; upstream's list, exactly.
    torch.manual_seed(args.seed)
    trial_seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(args.trials)]

    atol, rtol = report["atol"], report["rtol"]
    pass_count = 0
    with torch.no_grad():
        for trial, trial_seed in enumerate(trial_seeds):
            rec = {"trial": trial, "seed": trial_seed, "passed": False,
                   "max_abs_diff": None, "avg_abs_diff": None}
            trials.append(rec)
            try:
                set_seed(trial_seed)
                inputs = [process_input(x, device, dtype) for x in get_inputs()]
                set_seed(trial_seed)
                model = original_model.to(device=device, dtype=dtype)
                set_seed(trial_seed)
                model_new = custom_model.to(device=device, dtype=dtype)
                output = model(*inputs)
                torch.cuda.synchronize(device=device)
            except Exception as e:
                # Upstream: outside the per-trial try, caught by the caller as a runtime error.
                traceback.print_exc()
                rec["status"] = "ref_runtime_error"
                rec["error"] = f"{error_name(e)}: {e}"
                meta["runtime_error_name"] = error_name(e)
                meta["runtime_error"] = str(e)
                print(f"trial {trial}: ERROR (reference) seed={trial_seed} {rec['error']}")
                return stop("runtime_error", "reference forward failed: " + rec["error"])

            try:
                output_new = model_new(*inputs)
                torch.cuda.synchronize(device=device)
                if output.shape != output_new.shape:
                    msg = (f"Output shape mismatch: Expected {output.shape}, "
                           f"got {output_new.shape}")
                    rec["status"] = "shape_mismatch"
                    rec["error"] = msg
                    meta["correctness_issue"] = msg
                    meta["correctness_issue_name"] = "correctness_issue"
                    print(f"trial {trial}: FAIL seed={trial_seed} {msg}")
                    return stop("shape_mismatch", msg)
                ok = bool(torch.allclose(output, output_new, atol=atol, rtol=rtol))
                if not ok:
                    # Inside the try as upstream: if even the difference cannot be formed, it
                    # is a runtime error there too.
                    diff = torch.abs(output - output_new)
                    max_diff = torch.max(diff).item()
                    avg_diff = torch.mean(diff).item()
            except Exception as e:
                traceback.print_exc()
                rec["status"] = "runtime_error"
                rec["error"] = f"{error_name(e)}: {e}"
                meta["runtime_error_name"] = error_name(e)
                meta["runtime_error"] = (str(e)[:197] + "...") if len(str(e)) > 200 else str(e)
                print(f"trial {trial}: ERROR seed={trial_seed} {rec['error']}")
                return stop("runtime_error", "ModelNew forward failed: " + rec["error"])

            if ok:
                # Extra to upstream, for the printout only; a failure here changes nothing.
                try:
                    diff = torch.abs(output - output_new)
                    max_diff = torch.max(diff).item()
                    avg_diff = torch.mean(diff).item()
                except Exception:
                    max_diff = avg_diff = float("nan")
            rec["max_abs_diff"] = max_diff
            rec["avg_abs_diff"] = avg_diff
            rec["passed"] = ok
            rec["status"] = "pass" if ok else "mismatch"
            if ok:
                pass_count += 1
            else:
                meta.setdefault("max_difference", []).append(f"{max_diff:.6f}")
                meta.setdefault("avg_difference", []).append(f"{avg_diff:.6f}")
                meta["correctness_issue"] = "Output mismatch"
            print(f"trial {trial}: {'PASS' if ok else 'FAIL'} seed={trial_seed} "
                  f"max_abs_diff={max_diff:.6g} avg_abs_diff={avg_diff:.6g}")

    meta["correctness_trials"] = f"({pass_count} / {args.trials})"
    report["status"] = "correct" if pass_count == args.trials else "incorrect"
    return EXIT_PASS if pass_count == args.trials else EXIT_FAIL


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        ref_src = read_source(args.ref)
        new_src = read_source(args.new)
    except OSError as e:
        print(f"kernelbench-eval: cannot read input: {e}", file=sys.stderr)
        return EXIT_USAGE

    tol = UPSTREAM_TOLERANCE[args.precision]
    report = {"ref": args.ref, "new": args.new, "tf32": args.tf32, "trials": [],
              "passed": 0, "total": args.trials, "procedure": UPSTREAM,
              "seed": args.seed, "precision": args.precision, "backend": args.backend,
              "atol": tol if args.atol is None else args.atol,
              "rtol": tol if args.rtol is None else args.rtol,
              "upstream_metadata": {}}

    skip = None
    if torch is None:
        skip = f"torch is not importable ({_TORCH_IMPORT_ERROR})"
    elif not torch.cuda.is_available():
        skip = "no CUDA GPU available (torch.cuda.is_available() is False)"
    if skip is not None:
        print(f"kernelbench-eval: skipped: {skip}")
        report.update(status="skipped", error=skip)
        code = EXIT_SKIP
    else:
        report["torch_version"] = torch.__version__
        temp_files = []
        try:
            code = run(args, ref_src, new_src, report, temp_files)
        finally:
            for path in temp_files:
                os.remove(path)
        report["passed"] = sum(1 for t in report["trials"] if t["passed"])
        print(f"kernelbench-eval: {report['passed']}/{report['total']} trials passed "
              f"(tf32={args.tf32}, atol={report['atol']:g}, rtol={report['rtol']:g})")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, default=str)
            f.write("\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
