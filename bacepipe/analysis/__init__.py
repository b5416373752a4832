"""Analysis of sweep results: Parquet in, tables and figures out (SPEC §10, issue 4).

Contract: this package reads the sweep engine's ``runs/`` datasets (hive-partitioned Parquet, one
row per sweep point, topology and scheduler) with polars, lazily, and never imports the simulator
(``bacepipe.core``). Every comparison is paired: a scheduler's value on a topology divided by the
reference scheduler's (role ``paper``, ``bace_pipe``) on the same topology; the headline is the
geometric mean of those ratios. Groupings, order and colours come from the scheduler roles of
:mod:`bacepipe.policies` (:mod:`bacepipe.analysis.roles`).

Typical use::

    lf = scan_runs(["outputs/multirun/2026-11-29"])
    summary = summarize(lf)                  # one row per point x scheduler
    print(format_summary_table(summary))
    write_report(summary, "report_dir", ratios=paired_ratios(lf).collect())
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
from bacepipe.analysis.schema import METRICS
from bacepipe.analysis.stats import (
    axis_slice,
    bootstrap_ci,
    geometric_mean,
    paired_ratios,
    reference_point,
    summarize,
)
from bacepipe.analysis.tables import format_summary_table, pooled, write_report

__all__ = [
    "ABLATIONS",
    "BASELINE",
    "BASELINES",
    "METRICS",
    "SCHEDULERS",
    "FigureOutcome",
    "axis_slice",
    "bootstrap_ci",
    "find_runs",
    "format_summary_table",
    "geometric_mean",
    "make_figures",
    "of_role",
    "palette",
    "paired_ratios",
    "pareto_front",
    "pooled",
    "reference_point",
    "scan_runs",
    "scheduler_order",
    "summarize",
    "write_report",
]
