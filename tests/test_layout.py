"""The results layout has a fixed depth (issue 11.4): polars, pyarrow and duckdb read a results
directory that mixes the paper's world and extension worlds directly, each with its one-line read
of docs/usage.md, and see the numeric sweep keys as numbers (issue 48.4); and
``bacepipe.analysis.scan_runs`` gives the analysis its view of the same rows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest
from results_dirs import point_dir

import bacepipe.analysis
from bacepipe.analysis import HIVE_SCHEMA, scan_runs
from bacepipe.analysis.schema import YARDSTICK_COLUMNS
from bacepipe.sweep import run_point, store, validate
from bacepipe.sweep.chunks import JOB_COLUMNS, RUN_COLUMNS

TOPOLOGIES = 3
SCHEDULERS = ["bace_pipe", "lcf"]
#: The paper's world, and one point with every SPEC §12 switch that has a level value of its own,
#: at other numeric keys (and with its per-job rows).
POINTS = ({}, {"arrivals": "poisson", "arrival_rate_per_h": 0.5, "latency": "geo",
               "price_profile": "business", "bandwidth_scale": 0.5, "gpu_scale": 1.5,
               "num_jobs": 6, "save_jobs": True})
#: (bandwidth_scale, gpu_scale, num_jobs, arrivals) of each point, as every reader must give them.
KEYS = [(0.5, 1.5, 6, "poisson-0.5"), (1.0, 1.0, 8, "default")]
NUMERIC = {"bandwidth_scale": pl.Float64, "gpu_scale": pl.Float64, "num_jobs": pl.Int64}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory) -> Path:
    """A working directory whose ``outputs/results`` holds the points (the documented reads
    name that folder)."""
    cwd = tmp_path_factory.mktemp("layout")
    for point in POINTS:
        run_point(validate({"topologies": TOPOLOGIES, "chunk_size": 2, "workers": 1,
                            "progress": False, "schedulers": SCHEDULERS,
                            "results_dir": str(cwd / "outputs" / "results"), **point}))
    return cwd


@pytest.fixture
def results(cwd) -> Path:
    return cwd / "outputs" / "results"


def _check(frame: pl.DataFrame) -> None:
    assert frame.height == len(POINTS) * TOPOLOGIES * len(SCHEDULERS)
    assert set(RUN_COLUMNS) <= set(frame.columns)
    # Every key typed as HIVE_SCHEMA says: the numeric ones as numbers, with their values.
    assert {k: frame.schema[k] for k in HIVE_SCHEMA} == dict(HIVE_SCHEMA)
    assert frame.select(*NUMERIC, "arrivals").unique().sort("bandwidth_scale").rows() == KEYS
    worlds = frame.select("arrivals", "latency", "price_profile").unique().sort("arrivals")
    assert worlds.rows() == [("default", "default", "default"),
                             ("poisson-0.5", "geo", "business")]
    assert frame["start_rule"].unique().to_list() == ["greedy"]
    assert frame["gpu_mix"].unique().to_list() == ["none"]


def _documented_reads() -> dict[str, str]:
    """The code blocks of docs/usage.md's "Reading results", by the reader they import."""
    text = (Path(__file__).parents[1] / "docs" / "usage.md").read_text(encoding="utf-8")
    section = text.split("### Reading results", 1)[1].split("\n#", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return {block.split()[1].split(".")[0]: block for block in blocks}


def test_docs_show_one_read_per_reader():
    assert sorted(_documented_reads()) == ["duckdb", "polars", "pyarrow"]


@pytest.mark.parametrize("reader", ["polars", "pyarrow", "duckdb"])
def test_each_documented_read_types_the_keys(cwd, monkeypatch, reader):
    """The read of docs/usage.md, run verbatim in a folder holding ``outputs/results``."""
    monkeypatch.chdir(cwd)
    scope: dict = {}
    exec(_documented_reads()[reader], scope)
    runs = scope["runs"]
    _check(runs if isinstance(runs, pl.DataFrame) else pl.from_arrow(runs))


def test_every_reader_types_the_jobs_dataset_alike(results):
    """``jobs/`` has the levels of ``runs/``: the same schema, partitioning and types apply."""
    jobs = results / "jobs"
    frames = [
        pl.scan_parquet(jobs, hive_partitioning=True,
                        hive_schema=bacepipe.analysis.HIVE_SCHEMA).collect(),
        pl.from_arrow(ds.dataset(jobs, format="parquet",
                                 partitioning=bacepipe.analysis.HIVE_PARTITIONING).to_table()),
        duckdb.sql(f"SELECT * FROM read_parquet('{jobs}/**/*.parquet', hive_partitioning = "
                   f"true, hive_types = {bacepipe.analysis.DUCKDB_HIVE_TYPES})").pl(),
    ]
    for frame in frames:
        assert set(HIVE_SCHEMA) | set(JOB_COLUMNS) <= set(frame.columns)
        assert {k: frame.schema[k] for k in NUMERIC} == NUMERIC
        assert frame.select(*NUMERIC, "arrivals").unique().rows() == [KEYS[0]]
        assert frame.select("topology", "scheduler").unique().height == TOPOLOGIES * 2


def test_the_readers_types_come_from_hive_schema_without_the_simulator():
    assert bacepipe.analysis.HIVE_PARTITIONING.schema.names == list(HIVE_SCHEMA)
    code = ("import sys, bacepipe.analysis; "
            "sys.exit(any(m == 'numba' or m.startswith('bacepipe.core') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_polars_and_pyarrow_take_only_the_keys_below_runs(results, tmp_path):
    # A Hydra folder named like a key above the results (duckdb would read it: docs/usage.md).
    above = tmp_path / "bandwidth_scale=0.5"
    above.mkdir()
    (above / "results").symlink_to(results)
    runs = above / "results" / "runs"
    _check(pl.scan_parquet(runs, hive_partitioning=True, hive_schema=HIVE_SCHEMA).collect())
    _check(pl.from_arrow(ds.dataset(runs, format="parquet",
                                    partitioning=bacepipe.analysis.HIVE_PARTITIONING).to_table()))


def test_scan_runs_gives_the_analysis_view(results):
    frame = scan_runs([results]).collect()
    assert frame.height == len(POINTS) * TOPOLOGIES * len(SCHEDULERS)
    worlds = frame.select("arrivals", "arrival_rate_per_h", "latency", "memory_model",
                          "price_profile").unique().sort("arrivals", nulls_last=True)
    # A switch left to the scenario is null (off); the Poisson rate is its own column.
    assert worlds.rows() == [("poisson", "0.5", "geo", None, "business"),
                             (None, None, None, None, None)]
    assert frame["plan_slack"].unique().to_list() == [0.2]


def test_scan_runs_has_the_yardsticks_typed_and_null_where_a_file_lacks_them(results, tmp_path):
    assert RUN_COLUMNS[-len(YARDSTICK_COLUMNS):] == tuple(YARDSTICK_COLUMNS)
    frame = scan_runs([results]).collect()
    assert frame.columns[-len(YARDSTICK_COLUMNS):] == list(YARDSTICK_COLUMNS)
    assert {frame.schema[c] for c in YARDSTICK_COLUMNS} <= {pl.Float64, pl.Boolean}
    assert frame["lower_bound_h"].null_count() == 0
    # A file without them (written before they were) reads as null.
    own = [c for c in RUN_COLUMNS if c not in YARDSTICK_COLUMNS]
    frame.select(own).head(2).write_parquet(point_dir(tmp_path) / "chunk.parquet")
    again = scan_runs([tmp_path]).collect()
    assert all(again[c].null_count() == 2 for c in YARDSTICK_COLUMNS)


def test_the_analysis_reads_the_keys_the_sweep_writes():
    assert list(HIVE_SCHEMA) == [*store.LEVELS, "point"]
