#!/usr/bin/env bash
# docs/cluster.md's Slurm job array, run for real on a one-node Slurm started here (issue 50,
# item 3): the page's own sweep.sbatch and merge.sbatch (read from the page, so the page cannot
# drift from what runs), 4 shards over 20 problems, the merge after every task succeeded; the
# merged database must hold every problem's winner exactly once and every record of every shard,
# verify clean, and render a report. The tuner's worker is tests/fake_worker.cpp (no GPU).
#   slurm_array_test.sh FUSETUNE FAKE_WORKER CLUSTER_MD
# Exit 77 (skipped, with the reason) without Slurm's daemons or without root (slurmd runs jobs as
# their user); FUSETUNE_REQUIRE_SLURM=1 (set by .ci/run) turns a skip into a failure.
set -uo pipefail
FUSETUNE=$(realpath "$1") FAKE_WORKER=$(realpath "$2") PAGE=$(realpath "$3")
skip() {
  if [ "${FUSETUNE_REQUIRE_SLURM:-0}" = 1 ]; then echo "FAIL (FUSETUNE_REQUIRE_SLURM=1): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
for t in slurmctld slurmd sbatch squeue scontrol; do command -v $t >/dev/null || skip "no $t (Debian: apt-get install slurm-wlm)"; done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"

W=$(mktemp -d /tmp/fusetune-slurm.XXXXXX)
cleanup() {
  [ -f "$W/slurmd.pid" ] && kill "$(cat "$W/slurmd.pid")" 2>/dev/null
  [ -f "$W/slurmctld.pid" ] && kill "$(cat "$W/slurmctld.pid")" 2>/dev/null
  sleep 1
  rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$W"/slurmctld.log "$W"/slurmd.log "$W"/job/*.log "$W"/job/slurm-*.out; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }

# A one-node cluster on localhost: no munge (auth/none), no cgroups, ports of its own.
port=$((20000 + $$ % 20000))
mkdir -p "$W/state" "$W/spool" "$W/job"
cat > "$W/slurm.conf" <<CONF
ClusterName=fusetune-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$W/slurm.conf
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N localhost || fail "slurmd did not start"
for _ in $(seq 60); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %t | grep -q idle || fail "the node never came up: $(sinfo 2>&1)"

# The page's two job scripts, as written there.
block_after() {  # the first ```bash block after the line holding $1
  awk -v m="$1" 'index($0, m) { f = 1; next } f && /^```bash$/ { on = 1; next } on && /^```$/ { exit } on { print }' "$PAGE"
}
block_after '`sweep.sbatch`, one array task per GPU:' > "$W/job/sweep.sbatch"
block_after '`merge.sbatch`, no GPU needed:' > "$W/job/merge.sbatch"
grep -q 'fusetune tune --spec-file layers.txt --shard' "$W/job/sweep.sbatch" || fail "no sweep.sbatch in $PAGE"
grep -q 'fusetune db merge' "$W/job/merge.sbatch" || fail "no merge.sbatch in $PAGE"

# 20 problems, one per line, as layers.txt.
for k in 3 4 5 6 7; do
  for op in relu "mul(2) | reduce_min(channel)" sigmoid "add(param[k]) | gelu"; do
    echo "conv2d(n=1,c=4,h=8,w=7,k=$k,r=3,pad=1) | $op"
  done
done > "$W/job/layers.txt"

# fusetune on PATH; the worker faked; what the tasks see comes with sbatch's default --export=ALL.
mkdir -p "$W/bin" && ln -s "$FUSETUNE" "$W/bin/fusetune"
export PATH="$W/bin:$PATH" FUSETUNE_TEST_WORKER=$FAKE_WORKER SWEEP_DIR=$W/job/sweep TMPDIR=$W/tmp
mkdir -p "$TMPDIR"
cd "$W/job" || exit 1
# What the page's header asks of a GPU cluster, scaled to this node: 4 tasks, no GPU, one core.
jobid=$(sbatch --parsable --array=0-3 --gres=none --cpus-per-task=1 sweep.sbatch) || fail "sbatch sweep"
merge=$(sbatch --parsable --dependency=afterok:"$jobid" merge.sbatch) || fail "sbatch merge"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$jobid,$merge" 2>/dev/null)" ] && break
  sleep 0.5
done
state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' '; }
[ "$(state "$jobid")" = "JobState=COMPLETED " ] || fail "sweep tasks: $(state "$jobid")"
[ "$(state "$merge")" = "JobState=COMPLETED " ] || fail "merge: $(state "$merge")"

# Every shard wrote its database; the merge holds each problem once and every shard record.
ls sweep/shard-{0,1,2,3}.db >/dev/null || fail "missing shard databases: $(ls sweep)"
for i in 0 1 2 3; do fusetune db dump --db "sweep/shard-$i.db" || fail "db dump of shard $i"; done > shards.jsonl
fusetune db dump --db sweep/merged.db > merged.jsonl || fail "db dump of the merged database"
# Every record of every shard is in the merge and nothing else is (an environment row once, with
# the created_at of the first shard merged: the one field that may differ).
records=$(python3 - shards.jsonl merged.jsonl <<'PY'
import json, sys
def rows(path):
    out = set()
    for line in open(path):
        j = json.loads(line)
        if "table" not in j:
            continue
        if j["table"] == "environments":
            j.pop("created_at", None)
        out.add(json.dumps(j, sort_keys=True))
    return out
shards, merged = rows(sys.argv[1]), rows(sys.argv[2])
print(len(shards), len(merged), len(shards - merged), len(merged - shards))
PY
) || fail "comparing the dumps"
read -r n_shards n_merged lost extra <<<"$records"
[ "$lost" = 0 ] && [ "$extra" = 0 ] || fail "merge: $lost shard records lost, $extra not from a shard ($n_shards distinct in the shards, $n_merged merged)"
shard_records=$n_merged
problems=$(fusetune query --db sweep/merged.db --json - | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["winners"] if not r["shipped"]]  # not the H200 records fusetune ships
keys = [r["key"] for r in rows]
print(len(keys), len(set(keys)))') || fail "query --json of the merged database"
[ "$problems" = "20 20" ] || fail "winners in the merged database (rows, distinct problems): $problems; expected 20 20"
grep -q "merged.db: ok" slurm-"$merge".out || fail "the merge job's db verify: $(cat slurm-"$merge".out)"
# Each problem's report renders from the merged database (what one would look at next).
n=0
while read -r spec; do
  n=$((n + 1))
  fusetune report "$spec" --db sweep/merged.db -o "report-$n.html" >/dev/null 2>report.err || fail "report of $spec: $(cat report.err)"
  grep -q "<svg" "report-$n.html" || fail "report of $spec has no chart"
done < layers.txt
echo "ok: 4 array tasks and the merge ran under Slurm; 20 problems, $shard_records records merged, $n reports"
