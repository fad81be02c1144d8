"""Where a stored answer's 0.2 s goes (call 53): the parent's start, the worker's start, its
device reply, the parent's output, the parent's exit and the worker's exit, each timed from the
parent's launch. The worker is run through a wrapper (FUSETUNE_TEST_WORKER, the test hook that
names the worker executable) that stamps its start and its end.

    python3 stored_probe.py FUSETUNE DB_DIR PROBLEM_ARGS...
"""
import os
import subprocess
import sys
import tempfile
import time

fusetune, db = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
stamps = tempfile.mktemp(prefix="stamps-")
wrapper = tempfile.mktemp(prefix="wrap-", suffix=".sh")
with open(wrapper, "w") as f:
    f.write(f"""#!/bin/bash
echo "worker-start $(date +%s.%N)" >> {stamps}
"{os.path.abspath(fusetune)}" "$@"
echo "worker-end $(date +%s.%N)" >> {stamps}
""")
os.chmod(wrapper, 0o755)


def run(cmd, env=None, label=""):
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    first = None
    while True:
        chunk = p.stdout.read(1)
        if first is None and chunk:
            first = time.time()
        if not chunk:
            break
        p.stdout.read()
        break
    eof = time.time()
    p.wait()
    end = time.time()
    print(f"{label}: first output {((first or eof) - t0) * 1e3:.0f} ms, stdout closed {(eof - t0) * 1e3:.0f} ms, "
          f"exit {(end - t0) * 1e3:.0f} ms (rc {p.returncode})")
    return t0


for i in range(3):
    run([fusetune, "--help"], label="fusetune --help")
for i in range(3):
    run([fusetune, "--version"], label="fusetune --version (dlopen libcuda, cuInit)")
for i in range(3):
    run([fusetune, "tune", *args, "--db", db, "-q"], label="stored answer")
for i in range(3):
    run([fusetune, "tune", *args, "--db", db, "-q", "--json", stamps + ".json"], label="stored answer, --json")
for i in range(3):
    if os.path.exists(stamps):
        os.remove(stamps)
    t0 = run([fusetune, "tune", *args, "--db", db, "-q"], env=dict(os.environ, FUSETUNE_TEST_WORKER=wrapper),
             label="stored answer, worker wrapped")
    time.sleep(1.0)
    if not os.path.exists(stamps):
        print("    no worker started")
        continue
    with open(stamps) as f:
        for line in f:
            what, t = line.split()
            print(f"    {what} {(float(t) - t0) * 1e3:.0f} ms")
