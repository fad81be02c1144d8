"""Every command's --json and --csv output, checked against the published JSON Schema
(docs/schema/fusetune-output.schema.json) and the output convention (docs/commands.md: "Output"):
`--json` alone and `--json -` write to stdout and nothing else goes there; `--json FILE` writes the
file and leaves the table on stdout; `--csv` rows have the header's columns; both on stdout is bad
input (exit 2). GPU-free: tune runs against the fake worker (tests/fake_worker.cpp); `devices`
is checked only where a GPU answers.

    python3 tests/json_output_test.py --fusetune BIN --fake-worker BIN
"""
import argparse
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "docs", "schema", "fusetune-output.schema.json")))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SPEC = "conv2d(n=1,c=8,h=12,w=12,k=16,r=3) | relu | reduce_min"
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def run(args, env, code=0):
    p = subprocess.run(args, env=env, capture_output=True, text=True)
    if p.returncode != code:
        check(False, f"{' '.join(args[1:])}: exit {p.returncode}, want {code}: {p.stderr.strip()[:300]}")
    return p


def valid(doc, kind, what):
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    check(not errors, f"{what}: valid against the schema" + (f" ({errors[0].message[:300]} at {list(errors[0].path)})"
                                                             if errors else ""))
    check(doc.get("schema") == f"fusetune.{kind}/2", f"{what}: schema fusetune.{kind}/2")
    check(doc.get("versions", {}).get("fusetune"), f"{what}: names the fusetune version")


def stdout_json(args, env, kind, what, code=0):
    p = run(args, env, code)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        check(False, f"{what}: stdout is one JSON document ({e}; starts {p.stdout[:80]!r})")
        return None
    valid(doc, kind, what)
    return doc


def csv_rows(text, what, columns):
    rows = list(csv.reader(io.StringIO(text)))
    check(len(rows) >= 2 and rows[0][:len(columns)] == columns, f"{what}: CSV header starts {columns}")
    check(all(len(r) == len(rows[0]) for r in rows), f"{what}: every CSV row has the header's columns")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fusetune", required=True)
    ap.add_argument("--fake-worker", required=True)
    a = ap.parse_args()
    ft = a.fusetune
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FUSETUNE_DB=os.path.join(tmp, "t.db"), FUSETUNE_TEST_WORKER=a.fake_worker)

        doc = stdout_json([ft, "compile", SPEC, "-q", "--json"], env, "compile", "compile --json")
        if doc:
            check(all(isinstance(v["params"], dict) for v in doc["variants"]), "compile: params are objects")
        rows = csv_rows(run([ft, "compile", SPEC, "-q", "--csv", "-"], env).stdout, "compile --csv -",
                        ["candidate", "design", "name", "params"])
        check(doc is None or len(rows) - 1 == len(doc["variants"]), "compile: one CSV row per variant")

        # tune against the fake worker: the whole report, then the stored winner answering.
        tune_json = os.path.join(tmp, "tune.json")
        p = run([ft, "tune", SPEC, "-q", "--json", tune_json], env)
        check("winner" in p.stdout, "tune --json FILE: the table stays on stdout")
        doc = json.load(open(tune_json))
        valid(doc, "tune", "tune --json FILE")
        check(doc["stored"] is False and len(doc["results"]) > 0, "tune: results of this run, stored false")
        check(doc["shard"] is None, "tune: a whole run has shard null")
        check(doc["tie"] is None or doc["tie"]["with"] == doc["runner_up"], "tune: a tie names the runner-up")
        # One shard of the problem's variants: its share's best, the shard named.
        sharded = dict(env, FUSETUNE_DB=os.path.join(tmp, "shard.db"))
        doc = stdout_json([ft, "tune", SPEC, "-q", "--shard", "1/2", "--json", "-"], sharded, "tune",
                          "tune --shard 1/2 --json -")
        if doc:
            check(doc["shard"] == {"index": 1, "count": 2}, "tune --shard: the shard in the document")
        check(all(r["time_ms"] is None for r in doc["results"] if r["status"] != "ok"),
              "tune: every result that did not run has time_ms null")
        # Planted wrong results carry infinite error figures: null in JSON, empty in CSV.
        planted = dict(env, FUSETUNE_TEST_PLANT="wrong", FUSETUNE_DB=os.path.join(tmp, "planted.db"))
        doc = stdout_json([ft, "tune", SPEC, "-q", "--force", "--json", "-"], planted, "tune", "tune --json - (planted)")
        if doc:
            wrong = [r for r in doc["results"] if r["status"] == "wrong_result"]
            check(len(wrong) > 0, "tune (planted): wrong results are reported")
            check(all(r["time_ms"] is None and r["error"] is not None for r in wrong),
                  "tune (planted): a wrong result has error figures and no times")
        rows = csv_rows(run([ft, "tune", SPEC, "-q", "--force", "--csv", "-"], planted).stdout, "tune --csv (planted)",
                        ["role", "candidate", "name"])
        check(not any(c in ("inf", "-inf", "nan") for r in rows for c in r), "tune --csv: no inf/nan cells")
        doc = stdout_json([ft, "tune", SPEC, "-q", "--json", "-"], env, "tune", "tune --json - (stored winner)")
        if doc:
            check(doc["stored"] is True and doc["results"] == [], "tune: a stored winner answers, results empty")
        p = run([ft, "tune", SPEC, "-q", "--force", "--csv", "-"], env)
        csv_rows(p.stdout, "tune --csv -", ["role", "candidate", "name", "params", "status"])
        check("winner" in p.stderr, "tune --csv -: the table moves to stderr")
        run([ft, "tune", SPEC, "-q", "--json", "-", "--csv", "-"], env, code=2)

        # query: winners, then every result (the fresh database has the shipped H200 records too).
        doc = stdout_json([ft, "query", "--json"], env, "query", "query --json")
        if doc:
            check(len(doc["winners"]) >= 3, "query: the shipped winners and the fake one")
            check(all(w["params"] is None or isinstance(w["params"], dict) for w in doc["winners"]),
                  "query: winners' params are objects")
        doc = stdout_json([ft, "query", "--preset", "kernelbench-31", "--all", "--json", "-"], env, "query",
                          "query --all --json -")
        if doc:
            check(all(r["time_ms"] is None for r in doc["results"] if r["status"] != "ok"),
                  "query --all: a result that did not run has time_ms null")
        csv_rows(run([ft, "query", "--csv"], env).stdout, "query --csv", ["key", "problem", "math", "gpu"])
        # A database written by an older fusetune (figures NULL) or imported with text that is not
        # UTF-8: still valid JSON, figures null, the text replaced.
        old_db = os.path.join(tmp, "old.db")
        shutil.copy(env["FUSETUNE_DB"], old_db)
        con = sqlite3.connect(old_db)
        con.execute("UPDATE results SET worst_ratio = NULL, rel_l2_limit = NULL")
        con.execute("UPDATE results SET reason = CAST(X'62616481FF' AS TEXT) WHERE rowid = (SELECT MIN(rowid) FROM results)")
        con.commit()
        con.close()
        doc = stdout_json([ft, "query", "--all", "--db", old_db, "--json"], env, "query", "query --all --json (old db)")
        old = run([ft, "query", "--format", "json"], env).stdout
        check(json.loads(old).get("schema") == "fusetune.query/2", "query --format json (kept for old scripts)")

        # smoke: the GPU-free checks.
        smoke = os.path.join(tmp, "smoke.json")
        p = run([ft, "smoke", "--checks", "database", "--json", smoke], env)
        check("smoke:" in p.stdout, "smoke --json FILE: the check lines stay on stdout")
        valid(json.load(open(smoke)), "smoke", "smoke --json FILE")
        doc = stdout_json([ft, "smoke", "--checks", "database", "--json"], env, "smoke", "smoke --json")

        # Two documents cannot share stdout; no document replaces the database.
        run([ft, "smoke", "--checks", "database", "--json", "-", "--junit", "-"], env, code=2)
        run([ft, "query", "--json", env["FUSETUNE_DB"]], env, code=2)
        run([ft, "tune", SPEC, "--csv", "/dev/stdout", "--json", "-"], env, code=2)

        p = subprocess.run([ft, "devices", "--json"], env=env, capture_output=True, text=True)
        if p.returncode == 3:
            print("skip  devices --json: no GPU here (exit 3)")
        else:
            doc = json.loads(p.stdout)
            valid(doc, "devices", "devices --json")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
