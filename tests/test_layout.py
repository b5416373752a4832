"""The results layout has a fixed depth (issue 11.4): polars, pyarrow and duckdb read a results
directory that mixes the paper's world and extension worlds directly, as the README shows, and
``bacepipe.analysis.scan_runs`` gives the analysis its view of the same rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest
from results_dirs import point_dir

from bacepipe.analysis import scan_runs
from bacepipe.analysis.schema import HIVE_SCHEMA, YARDSTICK_COLUMNS
from bacepipe.sweep import run_point, store, validate
from bacepipe.sweep.chunks import RUN_COLUMNS

TOPOLOGIES = 3
SCHEDULERS = ["bace_pipe", "lcf"]
#: The paper's world, and one point with every SPEC §12 switch that has a level value of its own.
POINTS = ({}, {"arrivals": "poisson", "arrival_rate_per_h": 0.5, "latency": "geo",
               "price_profile": "business"})


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("layout") / "results"
    for point in POINTS:
        run_point(validate({"topologies": TOPOLOGIES, "chunk_size": 2, "workers": 1,
                            "progress": False, "schedulers": SCHEDULERS,
                            "results_dir": str(root), **point}))
    return root


def _check(frame: pl.DataFrame) -> None:
    assert frame.height == len(POINTS) * TOPOLOGIES * len(SCHEDULERS)
    assert set(store.LEVELS) | {"point", "plan_slack"} <= set(frame.columns)
    worlds = frame.select("arrivals", "latency", "price_profile").unique().sort("arrivals")
    assert worlds.rows() == [("default", "default", "default"),
                             ("poisson-0.5", "geo", "business")]
    assert frame["bandwidth_scale"].cast(pl.Float64).unique().to_list() == [1.0]
    assert frame["start_rule"].unique().to_list() == ["greedy"]
    assert frame["gpu_mix"].unique().to_list() == ["none"]


def test_polars_reads_the_directory(results):
    _check(pl.scan_parquet(results / "runs", hive_partitioning=True).collect())


def test_pyarrow_reads_the_directory(results):
    table = ds.dataset(results / "runs", format="parquet", partitioning="hive").to_table()
    _check(pl.from_arrow(table))


def test_duckdb_reads_the_directory(results):
    with duckdb.connect() as con:
        frame = con.sql(f"SELECT * FROM read_parquet('{results}/runs/**/*.parquet', "
                        "hive_partitioning = true)").pl()
    _check(frame)


def test_polars_and_pyarrow_take_only_the_keys_below_runs(results, tmp_path):
    # A Hydra folder named like a key above the results (duckdb would read it: README).
    above = tmp_path / "bandwidth_scale=0.5"
    above.mkdir()
    (above / "results").symlink_to(results)
    runs = above / "results" / "runs"
    _check(pl.scan_parquet(runs, hive_partitioning=True).collect())
    _check(pl.from_arrow(ds.dataset(runs, format="parquet", partitioning="hive").to_table()))


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
