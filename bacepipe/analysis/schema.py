"""Names shared by the analysis modules: result columns, hive key types, schedulers, axis defaults.

Scheduler and metric names come from :mod:`bacepipe.policies` and :mod:`bacepipe.metrics`, the
hive keys, the setting columns, the axes' defaults and the switches from the settings' declaration
(:mod:`bacepipe.settings`); none of them loads the simulator: ``bacepipe.analysis`` reads Parquet
only and never imports the core.

The hive keys' types are given once (:data:`HIVE_SCHEMA`) and handed to each reader in its own
form, so that every reader sees ``bandwidth_scale`` and ``gpu_scale`` as Float64 and ``num_jobs``
as Int64 (without them pyarrow and duckdb read every key as a string)::

    pl.scan_parquet("outputs/results/runs", hive_partitioning=True, hive_schema=HIVE_SCHEMA)
    ds.dataset("outputs/results/runs", format="parquet", partitioning=HIVE_PARTITIONING)
    duckdb.sql("SELECT * FROM read_parquet('outputs/results/runs/**/*.parquet', "
               "hive_partitioning = true, hive_types = " + DUCKDB_HIVE_TYPES + ")")
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds

from bacepipe.metrics import METRICS
from bacepipe.policies import SCHEDULERS
from bacepipe.settings import COLUMNS, DEFAULTS, LEVELS, SWITCHES, TYPES

#: The scheduler every ratio is normalized to.
BASELINE = "bace_pipe"
#: SPEC §7 baselines, in the paper's order.
BASELINES = ("lcf", "ldf", "cr_lcf", "cr_ldf")
#: SPEC §7 / paper §IV-E ablations.
ABLATIONS = ("bace_pipe_no_priority", "bace_pipe_no_pathfinder", "bace_pipe_no_costmin")

#: Identity columns of one result row (besides the hive keys).
ID_COLUMNS: dict[str, pl.DataType] = {
    "seed": pl.Int64(),
    "topology": pl.Int64(),
    "scheduler": pl.String(),
}
#: Columns every result file must have (the other METRICS may be missing: read as null).
REQUIRED = ("seed", "topology", "scheduler", "avg_jct_h", "total_cost")

#: Polars types of the settings' declared Python types (a text key or column otherwise).
_POLARS: dict[object, pl.DataType] = {float: pl.Float64(), int: pl.Int64()}
#: The sweep engine's hive keys in path order, with their types: the settings declared as levels
#: (:data:`bacepipe.settings.LEVELS`, every one written by every point), then ``point``.
HIVE_SCHEMA: dict[str, pl.DataType] = {
    **{key: _POLARS.get(TYPES[key], pl.String()) for key in LEVELS}, "point": pl.String()}
#: Arrow and SQL (duckdb) names of the polars types of :data:`HIVE_SCHEMA`.
_READER_TYPES: dict[type[pl.DataType], tuple[pa.DataType, str]] = {
    pl.String: (pa.string(), "VARCHAR"),
    pl.Float64: (pa.float64(), "DOUBLE"),
    pl.Int64: (pa.int64(), "BIGINT"),
}
#: :data:`HIVE_SCHEMA` for ``pyarrow.dataset.dataset(..., partitioning=HIVE_PARTITIONING)``
#: (the ``jobs/`` datasets have the same keys).
HIVE_PARTITIONING = ds.partitioning(
    pa.schema([(key, _READER_TYPES[type(dtype)][0]) for key, dtype in HIVE_SCHEMA.items()]),
    flavor="hive")
#: :data:`HIVE_SCHEMA` as the SQL struct literal of duckdb's ``read_parquet(...,
#: hive_partitioning = true, hive_types = <this>)``: ``{'scenario': 'VARCHAR',
#: 'bandwidth_scale': 'DOUBLE', ...}``.
DUCKDB_HIVE_TYPES = "{" + ", ".join(f"'{key}': '{_READER_TYPES[type(dtype)][1]}'"
                                    for key, dtype in HIVE_SCHEMA.items()) + "}"
#: SPEC §15 yardsticks of the runs files, per topology (the same on every scheduler's row), with
#: their types: null where a file lacks one (older results, or a point swept without OPT).
YARDSTICK_COLUMNS: dict[str, pl.DataType] = {
    "lower_bound_h": pl.Float64(), "opt_avg_jct_h": pl.Float64(), "opt_proven": pl.Boolean()}
#: Columns of the runs files that are point settings, not per-row values (SPEC §14): the settings
#: declared as columns.
POINT_COLUMNS: dict[str, pl.DataType] = {key: _POLARS.get(TYPES[key], pl.String())
                                         for key in COLUMNS}
#: Default value of each sweep axis (SPEC §8, §13, §16): the slice figures prefer. The declared
#: defaults of the levels and columns but the switches (off: null) and the scenario (always
#: named).
AXIS_DEFAULTS: dict[str, object] = {key: DEFAULTS[key] for key in (*LEVELS, *COLUMNS)
                                    if key not in SWITCHES and key != "scenario"}
#: SPEC §12 switches: every point writes them (``default`` when left to the scenario), and
#: :func:`bacepipe.analysis.scan_runs` reads ``default`` as null, so a row whose extension keys
#: are all null (or absent) is the paper's world (SPEC §1-11).
EXTENSION_KEYS = SWITCHES
#: The switches that are hive levels, in path order.
SWITCH_LEVELS = tuple(key for key in LEVELS if key in SWITCHES)

#: Value columns of :func:`bacepipe.analysis.summarize`, one row per point x scheduler.
SUMMARY_VALUE_COLUMNS = (
    "n_topologies",
    "n_duplicate_rows",
    *(f"{m}_mean" for m in METRICS),
    "avg_jct_h_median",
    "total_cost_median",
    "n_pairs",
    *(
        f"{q}_{s}"
        for q in ("jct", "cost")
        for s in ("ratio_gmean", "ratio_gmean_ci_low", "ratio_gmean_ci_high", "ratio_mean",
                  "ratio_median", "ratio_ci_low", "ratio_ci_high", "win_rate")
    ),
)
#: Columns that are never a sweep-point axis.
NON_POINT = ("topology", "scheduler", "jct_ratio", "cost_ratio", *METRICS, *YARDSTICK_COLUMNS,
             *SUMMARY_VALUE_COLUMNS)


def point_columns(columns: list[str] | tuple[str, ...]) -> list[str]:
    """The sweep-point columns of a result or summary frame: every hive key, then ``seed``.

    Parameters
    ----------
    columns : sequence of str
        Column names of a frame made by :func:`bacepipe.analysis.scan_runs` or
        :func:`bacepipe.analysis.summarize`.
    """
    skip = set(NON_POINT) | {"seed"}
    keys = [c for c in columns if c not in skip and not c.startswith("_")]
    return [*keys, "seed"] if "seed" in columns else keys


def scheduler_order(names) -> list[str]:
    """``names`` sorted as SPEC §7 lists schedulers; unknown names follow, alphabetically."""
    rank = {name: i for i, name in enumerate(SCHEDULERS)}
    return sorted(set(names), key=lambda n: (rank.get(n, len(rank)), n))
