"""KernelBench's own problem files, read from a checkout the user gives (the repository holds no
copy of them): --kernelbench PATH, else $KERNELBENCH, else .kernelbench (git-ignored).
    python3 bench/kernelbench_files.py N    prints level-2 problem N's path (scripts/lib/gpu_common.sh)"""
import glob
import os
import sys

DEFAULT = os.environ.get("KERNELBENCH", ".kernelbench")


def problem_file(checkout, number, level=2):
    """KernelBench/level<level>/<number>_*.py of the checkout; exits with one line when absent."""
    folder = os.path.join(checkout, "KernelBench", f"level{level}")
    found = sorted(glob.glob(os.path.join(folder, f"{number}_*.py")))
    if not found:
        sys.exit(f"no KernelBench level-{level} problem {number} under {folder} (give --kernelbench PATH or "
                 "$KERNELBENCH: a checkout of github.com/ScalingIntelligence/KernelBench)")
    return found[0]


def load_problem(path):
    """The problem file's namespace (Model, get_inputs, get_init_inputs), executed as KernelBench does."""
    namespace = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), namespace)  # noqa: S102 - the user's KernelBench checkout
    return namespace


if __name__ == "__main__":
    print(problem_file(DEFAULT, sys.argv[1]))
