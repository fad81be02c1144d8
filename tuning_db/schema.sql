-- fusetune tuning database, schema version 3 (src/db/schema.hpp: kSchemaVersion).
--
-- Changing anything here other than comments and whitespace changes the schema hash that
-- tests/db_schema_test.cpp pins: bump kSchemaVersion, add a migration from the previous
-- version to src/db/migrations.cpp, and add the new {version, hash} row to the test.
--
-- Times are milliseconds; created_at is UTC ISO 8601 with milliseconds
-- ("2026-11-29T12:34:56.789Z"), so text order is time order. REAL figures are nullable
-- because SQLite stores a NaN as NULL: NULL reads back as NaN.

-- What a result was measured on. fingerprint covers every column (a change makes stored
-- times stale); hardware_fingerprint only the chip and the kernel templates (same kernels,
-- maybe other library versions: re-verify and re-time the stored top-k, don't re-tune).
CREATE TABLE environments (
  id                   INTEGER PRIMARY KEY,
  fingerprint          TEXT    NOT NULL UNIQUE,
  hardware_fingerprint TEXT    NOT NULL,
  gpu_name             TEXT    NOT NULL,
  cc_major             INTEGER NOT NULL,
  cc_minor             INTEGER NOT NULL,
  sm_count             INTEGER NOT NULL,
  mem_bytes            INTEGER NOT NULL,
  driver               TEXT    NOT NULL,
  cuda_runtime         TEXT    NOT NULL,
  nvrtc                TEXT    NOT NULL,
  cudnn                TEXT    NOT NULL,
  templates_hash       TEXT    NOT NULL,
  created_at           TEXT    NOT NULL
);
CREATE INDEX environments_by_hardware ON environments (hardware_fingerprint);

-- key: FNV-1a of the canonical spec (README, "Canonical form and problem key").
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,
  canonical TEXT NOT NULL
);

-- Every variant ever measured, failed ones included (status, reason, log). The parameters
-- are part of the identity, so adding a parameter value to a search space adds rows and
-- never discards old ones.
CREATE TABLE results (
  id               INTEGER PRIMARY KEY,
  env_id           INTEGER NOT NULL REFERENCES environments (id),
  problem_id       INTEGER NOT NULL REFERENCES problems (id),
  math             TEXT    NOT NULL,
  candidate        TEXT    NOT NULL,
  variant_name     TEXT    NOT NULL,
  params_json      TEXT    NOT NULL,
  status           TEXT    NOT NULL,
  reason           TEXT    NOT NULL DEFAULT '',
  log_excerpt      TEXT    NOT NULL DEFAULT '',
  registers        INTEGER NOT NULL DEFAULT -1,
  spills           INTEGER NOT NULL DEFAULT 0,
  time_min_ms      REAL,
  time_median_ms   REAL,
  time_max_ms      REAL,
  time_count       INTEGER NOT NULL DEFAULT 0,
  kernel_median_ms REAL,
  gbps             REAL,
  pct_copy         REAL,
  max_abs          REAL,
  max_rel          REAL,
  rel_l2           REAL,
  created_at       TEXT    NOT NULL,
  -- version 2: which measurement the times are from ("first pass", "finalists",
  -- "confirmation"), and the error against the math mode's rule: the worst element's error
  -- over its tolerance, and the tf32 rule's rel-L2 limit.
  time_round       TEXT    NOT NULL DEFAULT '',
  worst_ratio      REAL,
  rel_l2_limit     REAL,
  -- version 3: the GPU (CUDA ordinal on the machine that tuned) whose figures the times are;
  -- -1 when not timed or not known (records older than version 3).
  gpu              INTEGER NOT NULL DEFAULT -1,
  UNIQUE (env_id, problem_id, math, variant_name, params_json)
);
CREATE INDEX results_by_problem ON results (problem_id, math);

-- The verified winner per (environment, problem, math), with everything export and re-runs
-- need without recompiling: the variant (source, plan, launch shapes), options, CUBIN, PTX.
-- shipped = 1: loaded from tuning_db/shipped; a measured winner replaces it.
CREATE TABLE winners (
  env_id            INTEGER NOT NULL REFERENCES environments (id),
  problem_id        INTEGER NOT NULL REFERENCES problems (id),
  math              TEXT    NOT NULL,
  candidate         TEXT    NOT NULL,
  variant_name      TEXT    NOT NULL,
  variant_json      TEXT    NOT NULL,
  compile_options   TEXT    NOT NULL DEFAULT '',
  cubin             BLOB    NOT NULL DEFAULT x'',
  ptx               TEXT    NOT NULL DEFAULT '',
  time_median_ms    REAL,
  time_spread       REAL,
  unfused_median_ms REAL,
  cudnn_median_ms   REAL,
  cudnn_algo        TEXT    NOT NULL DEFAULT '',
  shipped           INTEGER NOT NULL DEFAULT 0 CHECK (shipped IN (0, 1)),
  created_at        TEXT    NOT NULL,
  -- version 2: the cuDNN algorithm of each conv layout the winner was tuned with, as JSON
  -- ({"0": {"algo": 1, "math_type": 1, ...}}): a re-check runs the same configuration.
  conv_choices      TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (env_id, problem_id, math)
);
CREATE INDEX winners_by_problem ON winners (problem_id, math);
