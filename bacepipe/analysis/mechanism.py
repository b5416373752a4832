"""How the start rule (SPEC §13) acts, per job: GPUs at start ÷ K* and waiting time, per scheduler
and rule, from the per-job rows a sweep writes with ``save_jobs=true`` (``jobs/`` beside
``runs/``).

Rows are read at the paper's default point (bandwidth and GPU scale 1.0, 8 jobs), in the paper's
world (no SPEC §12 switch, one GPU type), per scenario. When several points hold a (rule,
scheduler) there (the fig4 and fig8 presets, a ``plan_slack`` curve), the one with the most
topologies is read, then the first by point id, and a point whose ``plan_slack`` (from the runs
rows) is not the default is never read: points are not pooled.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import polars as pl

from bacepipe.analysis.claims import DEFAULT_AXES, DEFAULT_MIX, DEFAULT_RULE
from bacepipe.analysis.load import find_runs, scan_dataset
from bacepipe.analysis.roles import palette, role_of, scheduler_order
from bacepipe.analysis.schema import AXIS_DEFAULTS, ID_COLUMNS
from bacepipe.analysis.stats import world_filter

JOBS_DIR = "jobs"
#: Per-job columns read (SPEC §10).
JOB_VALUES = {"job": pl.Int64(), "k_star": pl.Int64(), "gpus": pl.Int64(),
              "wait_h": pl.Float64(), "jct_h": pl.Float64(), "cost": pl.Float64()}
#: Per-job columns read when a file has them (null otherwise): the job's name, its path of
#: regions, its execution time and, per pipeline region in path order, the GPU count and type
#: (``8>2``, ``A100>H100``; SPEC §16).
OPTIONAL_JOB_VALUES = {"name": pl.String(), "path": pl.String(), "execution_h": pl.Float64(),
                       "path_gpus": pl.String(), "path_gpu_types": pl.String()}
FIGURE = "start_rule_mechanism.png"
_FONT = 9


def scan_jobs(paths: Iterable[str | os.PathLike[str]]) -> pl.LazyFrame | None:
    """Per-job rows of every result directory under ``paths`` (as
    :func:`bacepipe.analysis.find_runs` finds them), with their hive keys; None without any.

    Columns: the hive keys (as :func:`bacepipe.analysis.scan_runs` gives them), ``seed``,
    ``topology``, ``scheduler``, :data:`JOB_VALUES` and :data:`OPTIONAL_JOB_VALUES`.
    """
    values = {**ID_COLUMNS, **JOB_VALUES, **OPTIONAL_JOB_VALUES}
    required = (*ID_COLUMNS, *JOB_VALUES)
    frames = [lf for runs_dir in find_runs(paths)
              if (lf := scan_dataset(runs_dir.parent / JOBS_DIR, values, required)) is not None]
    return pl.concat(frames) if frames else None


def default_slack_points(runs: pl.LazyFrame) -> list[str]:
    """Point ids of ``runs`` (:func:`bacepipe.analysis.scan_runs`) whose ``plan_slack`` is the
    default (or null: a file without it)."""
    keep = runs.filter(pl.col("plan_slack").is_null()
                       | (pl.col("plan_slack") == AXIS_DEFAULTS["plan_slack"]))
    return keep.select(pl.col("point").unique()).collect()["point"].to_list()


def mechanism_rows(jobs: pl.LazyFrame, scenario: str,
                   points: list[str] | None = None) -> pl.DataFrame:
    """The per-job rows (:func:`scan_jobs`) of ``scenario`` at the default point, one point per
    (rule, scheduler), with ``gpu_share`` = gpus / k_star.

    ``points``: the point ids allowed (:func:`default_slack_points`); None allows every one.
    """
    names = jobs.collect_schema().names()
    where = ((pl.col("scenario") == scenario) & world_filter(names)
             & (pl.col("gpu_mix") == DEFAULT_MIX))
    for key, value in DEFAULT_AXES.items():
        where = where & (pl.col(key).cast(pl.Float64) == float(value))
    if points is not None:
        where = where & pl.col("point").is_in(points)
    rows = jobs.filter(where).collect()
    if rows.is_empty():
        return rows
    best = (rows.group_by("start_rule", "scheduler", "point")
            .agg(pl.col("topology").n_unique().alias("_n"))
            .sort(["_n", "point"], descending=[True, False])
            .unique(["start_rule", "scheduler"], keep="first"))
    rows = rows.join(best.select("start_rule", "scheduler", "point"),
                     on=["start_rule", "scheduler", "point"], how="semi")
    return rows.with_columns((pl.col("gpus") / pl.col("k_star")).alias("gpu_share"))


def mechanism_table(rows: pl.DataFrame) -> pl.DataFrame:
    """Per (scheduler, rule): jobs, topologies, mean GPUs at start ÷ K*, share of jobs below
    ½·K* and at K*, mean and median wait (h), mean JCT (h)."""
    table = rows.group_by("scheduler", "start_rule").agg(
        pl.len().alias("jobs"), pl.col("topology").n_unique().alias("topologies"),
        pl.col("gpu_share").mean().alias("gpu_share_mean"),
        (pl.col("gpu_share") < 0.5).mean().alias("below_half"),
        (pl.col("gpu_share") >= 1.0).mean().alias("at_kstar"),
        pl.col("wait_h").mean().alias("wait_h_mean"),
        pl.col("wait_h").median().alias("wait_h_median"),
        pl.col("jct_h").mean().alias("jct_h_mean"))
    rank = {n: i for i, n in enumerate(scheduler_order(table["scheduler"].to_list()))}
    return table.sort(pl.col("scheduler").replace_strict(rank, return_dtype=pl.Int64),
                      "start_rule")


def _ecdf(ax, values: np.ndarray, **kw) -> None:
    v = np.sort(values)
    ax.step(np.r_[v[0], v], np.r_[0.0, np.arange(1, v.size + 1) / v.size], where="post", **kw)


def plot_mechanism(rows: pl.DataFrame, title: str):
    """CDFs of GPUs at start ÷ K* (top) and of waiting time (bottom), one column per rule, one
    line per scheduler of every role but ``ablation`` (colours by role,
    :func:`bacepipe.analysis.palette`)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rules = sorted(rows["start_rule"].unique().to_list(), key=lambda r: (r != DEFAULT_RULE, r))
    # As Fig. 4: every role but the ablations (they draw on top of bace_pipe).
    names = [n for n in scheduler_order(rows["scheduler"].to_list())
             if role_of(n) != "ablation"]
    colors = palette(names)
    fig = Figure(figsize=(4.2 * len(rules) + 1.0, 7.2), layout="constrained")
    axes = np.asarray(fig.subplots(2, len(rules), sharex="row", sharey=True)).reshape(2, -1)
    for col, rule in enumerate(rules):
        for name in names:
            one = rows.filter((pl.col("start_rule") == rule) & (pl.col("scheduler") == name))
            if one.is_empty():
                continue
            style = {"color": colors[name][0], "lw": 1.2}
            _ecdf(axes[0, col], one["gpu_share"].to_numpy(), **style)
            _ecdf(axes[1, col], one["wait_h"].to_numpy(), **style)
        axes[0, col].set_title(f"start_rule = {rule}", fontsize=_FONT)
        axes[0, col].set_xlabel("GPUs at start ÷ K*", fontsize=_FONT)
        axes[1, col].set_xlabel("waiting time, h (symlog)", fontsize=_FONT)
        axes[1, col].set_xscale("symlog", linthresh=1.0)
    for row in axes:
        row[0].set_ylabel("share of jobs", fontsize=_FONT)
        for ax in row:
            ax.set_ylim(0.0, 1.02)
            ax.tick_params(labelsize=_FONT - 1)
    handles = [Line2D([], [], color=colors[n][0], lw=1.2, label=n) for n in names]
    fig.legend(handles=handles, loc="outside lower center", fontsize=_FONT - 1,
               ncols=min(4, len(handles)))
    fig.suptitle(title, fontsize=_FONT)
    return fig


def mechanism_markdown(tables: dict[str, pl.DataFrame], figures: dict[str, str]) -> list[str]:
    """Per scenario: the table of :func:`mechanism_table` and the figure (``figures``: scenario
    -> its path relative to the document); a line saying how to get per-job rows if none."""
    md = ["### The mechanism, per job (default point)", ""]
    if not tables:
        return md + ["No per-job rows at the default point: run the study with "
                     "`save_jobs=true` (per-job rows go under `jobs/`).", ""]
    md += ["GPUs a job starts on ÷ its K* and the time it waits (start − arrival), over every "
           "job of every topology, per scheduler and start rule; from the sweep's per-job rows "
           "(`save_jobs=true`).", ""]
    head = ["scheduler", "start rule", "jobs", "topologies", "mean GPUs ÷ K*", "< ½·K*",
            "at K*", "mean wait h", "median wait h", "mean JCT h"]
    for scenario, table in tables.items():
        md += [f"scenario = {scenario}:", "", "| " + " | ".join(head) + " |",
               "| " + " | ".join(["---", "---", *(["---:"] * (len(head) - 2))]) + " |"]
        for r in table.iter_rows(named=True):
            cells = [f"`{r['scheduler']}`", r["start_rule"], str(r["jobs"]), str(r["topologies"]),
                     f"{r['gpu_share_mean']:.3f}", f"{100 * r['below_half']:.1f} %",
                     f"{100 * r['at_kstar']:.1f} %", f"{r['wait_h_mean']:.2f}",
                     f"{r['wait_h_median']:.2f}", f"{r['jct_h_mean']:.1f}"]
            md.append("| " + " | ".join(cells) + " |")
        md.append("")
        if scenario in figures:
            title = f"GPUs at start ÷ K* and waiting time per scheduler and rule ({scenario})"
            md += [f"![{title}]({figures[scenario]})", ""]
    return md
