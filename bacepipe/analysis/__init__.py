"""Analysis of sweep results: Parquet in, tables and figures out (SPEC §10, issue 4).

Contract: this package reads the sweep engine's ``runs/`` datasets (hive-partitioned Parquet, one
row per sweep point, topology and scheduler) with polars, lazily, and never imports the simulator
(``bacepipe.core``). Every comparison is paired: a scheduler's value on a topology divided by the
reference scheduler's (role ``paper``, ``bace_pipe``) on the same topology; the headline is the
geometric mean of those ratios. Groupings, order and colours come from the scheduler roles of
:mod:`bacepipe.policies` (:mod:`bacepipe.analysis.roles`).

Typical use::

    lf = scan_runs(["outputs/results"])     # every runs/ dataset under the paths given
    summary = summarize(lf)                  # one row per point x scheduler
    print(format_summary_table(summary))
    write_report(summary, "report_dir", ratios=paired_ratios(lf).collect())

The results directory reads directly too, with the numeric sweep keys typed alike in each reader
(:data:`HIVE_SCHEMA` for polars, :data:`HIVE_PARTITIONING` for ``pyarrow.dataset``,
:data:`DUCKDB_HIVE_TYPES` for duckdb's ``hive_types``; see :mod:`bacepipe.analysis.schema`).
"""

from bacepipe.analysis.figures import FigureOutcome, make_figures, pareto_front
from bacepipe.analysis.load import find_runs, scan_runs
from bacepipe.analysis.roles import (
    ABLATIONS,
    BASELINE,
    BASELINES,
    SCHEDULERS,
    of_role,
    palette,
    scheduler_order,
)
from bacepipe.analysis.schema import DUCKDB_HIVE_TYPES, HIVE_PARTITIONING, HIVE_SCHEMA, METRICS
from bacepipe.analysis.stats import axis_slice, paired_ratios, reference_point, summarize
from bacepipe.analysis.tables import format_summary_table, write_report
from bacepipe.headline import bootstrap_ci, geometric_mean, gmean_ci, mean_ci

__all__ = [
    "ABLATIONS",
    "BASELINE",
    "BASELINES",
    "DUCKDB_HIVE_TYPES",
    "HIVE_PARTITIONING",
    "HIVE_SCHEMA",
    "METRICS",
    "SCHEDULERS",
    "FigureOutcome",
    "axis_slice",
    "bootstrap_ci",
    "find_runs",
    "format_summary_table",
    "geometric_mean",
    "gmean_ci",
    "make_figures",
    "mean_ci",
    "of_role",
    "palette",
    "paired_ratios",
    "pareto_front",
    "reference_point",
    "scan_runs",
    "scheduler_order",
    "summarize",
    "write_report",
]
