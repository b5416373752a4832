"""CI smoke sweep: a small multirun through the command line, then its Parquet checked.

Runs ``python -m bacepipe.sweep -m bandwidth_scale=0.5,1.0 topologies=50 validate=true`` into a
temporary results directory (every simulated schedule replayed against the invariants of SPEC §4;
a violation fails the sweep with exit status 3) and reads it back as docs/usage.md does
(``pl.scan_parquet(runs, hive_partitioning=True)``): 2 × 50 × (default schedulers) rows, every
hive level and column with its type, no nulls (but the OPT columns, null without
``optimal=true``), finite metrics, 0 < lower_bound_h <= avg_jct_h, one row per (point, topology,
scheduler).
Exits 1 with one clear message on the first failure. Usage: ``python .ci/smoke_sweep.py`` (from
the repository root).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from bacepipe.analysis.schema import HIVE_SCHEMA, POINT_COLUMNS
from bacepipe.metrics import METRICS
from bacepipe.policies import SCHEDULERS as DEFAULT_SCHEDULERS

SCALES = (0.5, 1.0)
TOPOLOGIES = 50
SCHEDULERS = len(DEFAULT_SCHEDULERS)
#: Every column and its type as polars infers them (the hive keys typed as the declaration of
#: the settings says, bacepipe.settings).
COLUMNS = {"seed": pl.Int64, "topology": pl.Int64, "scheduler": pl.String,
           **{m: pl.Float64 for m in METRICS}, **POINT_COLUMNS,
           "lower_bound_h": pl.Float64, "opt_avg_jct_h": pl.Float64, "opt_proven": pl.Boolean,
           **HIVE_SCHEMA}
OPT_COLUMNS = ["opt_avg_jct_h", "opt_proven"]


def fail(message: str) -> None:
    print(f"smoke_sweep: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bacepipe-smoke-") as tmp:
        root = Path(tmp)
        cmd = [sys.executable, "-m", "bacepipe.sweep", "-m",
               f"bandwidth_scale={','.join(map(str, SCALES))}", f"topologies={TOPOLOGIES}",
               "chunk_size=20", "validate=true", f"results_dir={root / 'results'}",
               f"hydra.sweep.dir={root / 'multirun'}"]
        tic = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            fail(f"sweep exited {proc.returncode}: {tail}")
        runs = root / "results" / "runs"
        files = sorted(runs.rglob("*.parquet"))
        if not files:
            fail(f"no Parquet files under {runs}")
        df = pl.scan_parquet(runs, hive_partitioning=True).collect()
        expected = len(SCALES) * TOPOLOGIES * SCHEDULERS
        if df.height != expected:
            fail(f"{df.height} rows, expected {expected} (2 scales × {TOPOLOGIES} × "
                 f"{SCHEDULERS})")
        for name, dtype in COLUMNS.items():
            if name not in df.columns:
                fail(f"column {name!r} missing (have {', '.join(df.columns)})")
            if df.schema[name] != dtype:
                fail(f"column {name!r} is {df.schema[name]}, expected {dtype}")
        # OPT columns are null without optimal=true (SPEC §15); nothing else may be.
        nulls = {c: n for c, n in df.null_count().row(0, named=True).items()
                 if n and c not in OPT_COLUMNS}
        if nulls:
            fail(f"null values: {nulls}")
        if df.select(OPT_COLUMNS).null_count().row(0) != (df.height,) * len(OPT_COLUMNS):
            fail("OPT columns filled without optimal=true")
        bad = df.select(pl.sum_horizontal(~pl.col(*METRICS).is_finite()).sum()).item()
        if bad:
            fail(f"{bad} non-finite metric values")
        if sorted(df["bandwidth_scale"].unique().to_list()) != list(SCALES):
            fail(f"bandwidth_scale partitions {df['bandwidth_scale'].unique().to_list()}")
        keys = ["bandwidth_scale", "point", "topology", "scheduler"]
        if df.select(keys).is_duplicated().any():
            fail("duplicate (point, topology, scheduler) rows")
        if df["scheduler"].n_unique() != SCHEDULERS:
            fail(f"{df['scheduler'].n_unique()} schedulers, expected {SCHEDULERS}")
        if (df["avg_jct_h"] <= 0).any() or (df["total_cost"] <= 0).any():
            fail("a run with avg_jct_h or total_cost <= 0")
        if not ((df["lower_bound_h"] > 0) & (df["lower_bound_h"] <= df["avg_jct_h"])).all():
            fail("a run whose lower_bound_h is not in (0, avg_jct_h] (SPEC §15)")
        print(f"smoke_sweep: OK: {df.height} rows in {len(files)} files, "
              f"{time.perf_counter() - tic:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
