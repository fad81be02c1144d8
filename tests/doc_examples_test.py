#!/usr/bin/env python3
"""Every fusetune example in the README and docs/*.md runs, so the pages cannot drift from the tool.

Usage: doc_examples_test.py FUSETUNE [--root DIR] [--pages FILE...] [--expect-fail] [-v]

An example is a line of a ```sh, ```bash, ```shell or ```console block that starts with
`fusetune `, `build/fusetune ` or `./build/fusetune ` (after a console's `$ `). Each one is run
with FUSETUNE_PARSE_ONLY=1, which parses the whole command line (flags, choices, numeric ranges,
the spec grammar stays for run time) and exits 0 without running anything: that works without a
GPU for every command. Those that need neither a GPU nor files of the reader's own (query, export
of a preset, completion, --version) are also run for real, in a fresh directory with a fresh
database (which holds the shipped records), and must exit 0 or the code a trailing comment names
(`# exits 4`). compile is parsed only: a preset's full compile takes minutes on CI's two cores, and
readme_examples_test compiles the documented specs already.

Lines with placeholders (`[...]`, `(SPEC | --preset NAME)`, `tf32|fp32`, `...`, an ALL-CAPS word
such as FILE) are usage synopses, not examples: skipped, and listed with -v.

--expect-fail is the self-test (tests/data/doc_examples_planted.md): it passes only when every
example whose comment says `planted` fails and every other example passes.
Python's standard library only; no GPU.
"""
import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

PREFIXES = ("fusetune", "build/fusetune", "./build/fusetune")
SHELL_INFOS = {"sh", "bash", "shell", "console"}
SKIPPED_PAGES = {"perf-notes.md"}  # a lab notebook of GPU runs, not instructions
EXECUTED = {"query", "completion"}  # plus `export --preset` and `--version`, below
TIMEOUT_S = 60

# Shell variables of the documented scripts (docs/cluster.md's job scripts), with values that make
# their commands parse: a shard index below the count, paths in the example's own directory.
# A variable not listed here fails the example with a message saying to add it.
SAMPLES = {
    "i": "0",
    "n": "4",
    "SLURM_ARRAY_TASK_ID": "0",
    "SLURM_ARRAY_TASK_COUNT": "4",
    "JOB_COMPLETION_INDEX": "0",
    "SWEEP_DIR": "{tmp}/sweep",
    "local_db": "{tmp}/shard-0.db",
    "TMPDIR": "{tmp}",
    "HOME": "{tmp}",
    "jobid": "1",
}


class Example:
    def __init__(self, page, line, text):
        self.page, self.line, self.text = page, line, text
        self.command = ""  # the fusetune part: before a comment, `;`, `&&`, `||`, a pipe, a redirection
        self.comment = ""
        self.synopsis = ""  # why it is a usage synopsis, not an example ("" for an example)

    def where(self):
        return f"{self.page}:{self.line}"


def shell_blocks(path):
    """(line number, text, whether the block is a console's) of each line inside a shell-like
    fenced block of the page."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if fence is None:
            m = re.match(r"(`{3,}|~{3,})\s*([\w+-]*)", stripped)
            if m:
                info = m.group(2).lower()
                fence = (m.group(1), info in SHELL_INFOS, info == "console")
            continue
        if stripped.startswith(fence[0]) and stripped.strip(fence[0][0]) == "":
            fence = None
            continue
        if fence[1]:
            yield number, line, fence[2]


def logical_lines(lines):
    """Joins lines that end in a backslash; the number is the first line's."""
    start, pending, console = None, "", False
    for number, line, console in lines:
        if start is None:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line, console
        start, pending = None, ""
    if pending:
        yield start, pending, console


def examples_of(path, label):
    for number, line, console in logical_lines(shell_blocks(path)):
        text = line.strip()
        if text.startswith("$ "):
            text = text[2:].lstrip()
        elif console:
            continue  # a console's output, not a command (`fusetune 0.1.0` after `$ fusetune --version`)
        if any(text == p or text.startswith(p + " ") for p in PREFIXES):
            ex = Example(label, number, text)
            split_shell(ex)
            yield ex


def split_shell(ex):
    """Sets ex.command, ex.comment and ex.synopsis from ex.text, minding quotes and $(...)."""
    text = ex.text
    quote, depth, i, unquoted = None, 0, 0, []
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                i += 1
            i += 1
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "\\":
            i += 1
        elif text.startswith("$(", i) or text.startswith("${", i):
            depth += 1
            i += 1
        elif depth and ch in ")}":
            depth -= 1
        elif depth:
            pass
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            ex.comment = text[i + 1:].strip()
            break
        elif text.startswith(("&&", "||"), i) or ch in ";&<>":
            ex.command = text[:i]
            if ch in "<>":  # `2>file`: the descriptor's digits belong to the redirection
                ex.command = re.sub(r"\s\d+$", "", ex.command)
            rest_comment = re.search(r"\s#(.*)$", text[i:])
            ex.comment = rest_comment.group(1).strip() if rest_comment else ""
            break
        elif ch == "|":
            if i > 0 and not text[i - 1].isspace() and i + 1 < len(text) and not text[i + 1].isspace():
                ex.synopsis = "alternatives a|b"
            ex.command = text[:i]
            break
        else:
            unquoted.append((i, ch))
        i += 1
    else:
        ex.command = text
    if not ex.command:
        ex.command = text[:i]
    ex.command = ex.command.strip()
    bare = "".join(ch for _, ch in unquoted)
    if not ex.synopsis:
        if "[" in bare or "]" in bare:
            ex.synopsis = "optional part [...]"
        elif "..." in bare:
            ex.synopsis = "repetition ..."
        elif "(" in bare:
            ex.synopsis = "group (A | B)"
        else:
            word = re.search(r"(?<![$\w{])[A-Z][A-Z0-9_]{2,}\b", bare)
            if word:
                ex.synopsis = f"placeholder {word.group(0)}"


def expand(command, tmp):
    """The shell's expansions, with SAMPLES' values: $(...) becomes a fresh directory."""
    used = []

    def substitution(_):
        used.append("$(...)")
        return tempfile.mkdtemp(dir=tmp)

    def variable(m):
        name, default = m.group(1) or m.group(3), m.group(2)
        used.append("$" + name)
        if name in SAMPLES:
            return SAMPLES[name].format(tmp=tmp)
        if default is not None:
            return default
        raise KeyError(name)

    out = re.sub(r"\$\([^)]*\)", substitution, command)
    out = re.sub(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)", variable, out)
    return out, used


def expected_code(comment):
    m = re.search(r"\bexits?\s+(?:with\s+)?(?:code\s+)?(\d+)\b", comment)
    return int(m.group(1)) if m else 0


def executes(args):
    """Whether the example runs for real: GPU-free and needing no file of the reader's."""
    if args == ["--version"]:
        return True
    sub = next((a for a in args if not a.startswith("-")), "")
    if sub in EXECUTED:
        return True
    if sub == "export" and "--preset" in args:
        return "torch-patch" not in args and "--spec-file" not in args
    return False


def run(binary, args, tmp, parse_only):
    env = dict(os.environ)
    env.pop("FUSETUNE_PARSE_ONLY", None)
    env["FUSETUNE_DB"] = os.path.join(tmp, "tuning.db")
    env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    if parse_only:
        env["FUSETUNE_PARSE_ONLY"] = "1"
    try:
        p = subprocess.run([binary] + args, cwd=tmp, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_S} s"
    return p.returncode, p.stderr.decode("utf-8", "replace").strip()


def check(ex, binary, verbose):
    """Runs one example; returns (failure text or "", whether it was executed)."""
    with tempfile.TemporaryDirectory(prefix="fusetune-doc-example-") as tmp:
        try:
            command, used = expand(ex.command, tmp)
        except KeyError as e:
            return (f"uses the shell variable ${e.args[0]}: give it a sample value in SAMPLES "
                    f"(tests/doc_examples_test.py)"), False
        try:
            args = shlex.split(command)[1:]
        except ValueError as e:
            return f"cannot split it as the shell would ({e})", False
        code, err = run(binary, args, tmp, parse_only=True)
        if code != 0:
            return f"does not parse (FUSETUNE_PARSE_ONLY=1): exit {code}: {err}", False
        if used or not executes(args):
            if verbose:
                print(f"  parsed    {ex.where()}: {ex.command}")
            return "", False
        want = expected_code(ex.comment)
        code, err = run(binary, args, tmp, parse_only=False)
        if code != want:
            return f"exit {code}, the page expects {want}: {err}", True
        if verbose:
            print(f"  executed  {ex.where()}: {ex.command} (exit {code})")
        return "", True


def default_pages(root):
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    return [p for p in pages if p.exists() and p.name not in SKIPPED_PAGES]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fusetune", help="the built fusetune binary")
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--pages", type=pathlib.Path, nargs="+", help="these pages instead of README.md, docs/*.md")
    parser.add_argument("--expect-fail", action="store_true",
                        help="self-test: examples marked `planted` must fail, all others pass")
    parser.add_argument("-v", "--verbose", action="store_true")
    opts = parser.parse_args()
    binary = os.path.abspath(opts.fusetune)
    pages = opts.pages or default_pages(opts.root)

    examples = []
    for page in pages:
        label = os.path.relpath(page, opts.root) if page.is_absolute() else str(page)
        examples.extend(examples_of(page, label))

    failures, executed, parsed, skipped, wrong = [], 0, 0, 0, []
    for ex in examples:
        if ex.synopsis:
            skipped += 1
            if opts.verbose:
                print(f"  synopsis  {ex.where()}: {ex.text}  [{ex.synopsis}]")
            continue
        failure, ran = check(ex, binary, opts.verbose)
        executed += ran
        parsed += not ran
        planted = "planted" in ex.comment
        if failure:
            failures.append(ex)
            print(f"FAIL {ex.where()}: {ex.command}\n     {failure}")
        if opts.expect_fail and planted != bool(failure):
            wrong.append(ex)

    total = executed + parsed
    print(f"doc examples: {total} examples, {executed} executed, {parsed} parse-only, "
          f"{skipped} skipped as synopses ({len(pages)} pages)")
    if opts.expect_fail:
        planted = [ex for ex in examples if "planted" in ex.comment]
        for ex in wrong:
            print(f"SELF-TEST {ex.where()}: {'a planted break passed' if 'planted' in ex.comment else 'a good example failed'}"
                  f": {ex.command}")
        if not planted:
            print("SELF-TEST: the page has no example marked `planted`")
        return 1 if wrong or not planted else 0
    if total == 0:
        print("FAIL: no fusetune example found; the scanner no longer matches the pages")
        return 1
    if failures:
        print(f"{len(failures)} example(s) failed: fix the page, or the command if the page is right")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
