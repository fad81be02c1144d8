#!/usr/bin/env python3
"""Moves the shipped winners (tuning_db/shipped/*.jsonl) onto a changed kernel template whose code
for them is unchanged (a comment, or a parameter their variants do not have):

    git show HEAD:kernel_templates/T.cu > /tmp/old.cu
    python3 scripts/resource_shipped_winners.py /tmp/old.cu kernel_templates/T.cu

Each winner's stored source has the old template text replaced by the new, nothing else: its plan,
CUBIN, PTX, times and templates hash stay. Then build and run `ctest -R TrustRecords`: the
provenance check compiles each stored source with NVRTC and compares the result with the stored
CUBIN and PTX, so it passes only where the new template makes byte-identical machine code (the
times are then the same code's). Where it fails, the winners need a re-tune on the GPU instead.
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old, new = (open(p).read() for p in sys.argv[1:3])
    root = os.path.join(os.path.dirname(__file__), "..", "tuning_db", "shipped")
    for path in sorted(glob.glob(os.path.join(root, "*.jsonl"))):
        lines, moved = open(path).read().split("\n"), 0
        for i, line in enumerate(lines):
            if not line or json.loads(line).get("table") != "winners":
                continue
            w = json.loads(line)
            v = json.loads(w["variant_json"])
            if v["source"].count(old) != 1:
                continue  # another template's winner
            v["source"] = v["source"].replace(old, new)
            w["variant_json"] = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
            lines[i] = json.dumps(w, separators=(",", ":"), ensure_ascii=False)
            moved += 1
        open(path, "w").write("\n".join(lines))
        print(f"{path}: {moved} winners moved onto the new template")


if __name__ == "__main__":
    main()
