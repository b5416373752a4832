"""Gaps to the yardsticks of SPEC §15: each scheduler's avg JCT ÷ the lower bound LB, and ÷ the
optimum OPT where a sweep computed it (``optimal=true``), per sweep point.

Both are paired per topology: a run's ``avg_jct_h`` divided by the ``lower_bound_h`` (or
``opt_avg_jct_h``) of the same topology. For LB the headline is the geometric mean of those
ratios with its 95 % percentile bootstrap CI (as the report's headline, ``docs/model.md``), the
arithmetic mean and the worst (largest) ratio beside it; a ratio is only formed where LB > 0.
For OPT only rows with ``opt_proven`` true count (an unproven OPT is only the best schedule
found): the mean and worst ratio, and the share of topologies *at the optimum*, i.e. with
ratio ≤ 1 + 1e-4 (OPT is computed on a whole-second grid, pessimistic by ~1 s per job: SPEC §15).
``docs/optimality.md`` says how to read them.

The columns (``schema.YARDSTICK_COLUMNS``) come with the rows of
:func:`bacepipe.analysis.scan_runs`, so every number here is recomputable from the Parquet rows.
Results without them (sweeps from before SPEC §15) give null gaps, said in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from bacepipe.analysis.roles import palette, role_of, scheduler_order
from bacepipe.analysis.schema import YARDSTICK_COLUMNS, point_columns
from bacepipe.analysis.stats import at_point, is_default
from bacepipe.headline import N_RESAMPLES, SEED, cell, gmean_ci, header

#: A run is at the optimum when avg JCT ≤ OPT · (1 + AT_OPTIMUM_REL) (SPEC §15's rounding).
AT_OPTIMUM_REL = 1e-4
#: Value columns of :func:`gap_table`, after the point columns and ``scheduler``.
GAP_COLUMNS = ("n_topologies", "n_lb", "lb_gap_gmean", "lb_gap_gmean_ci_low",
               "lb_gap_gmean_ci_high", "lb_gap_mean", "lb_gap_max", "n_opt", "n_proven",
               "opt_gap_mean", "opt_gap_max", "opt_at_optimum", "opt_below")
#: The contention axes of the gap figure: (column, axis label).
CONTENTION_AXES = (("gpu_scale", "GPU scale"), ("num_jobs", "number of jobs"))
FIGURE = "gap_to_lower_bound.png"
_VALUES = ("topology", "scheduler", "avg_jct_h", *YARDSTICK_COLUMNS)
_FONT = 9


def point_keys(columns: Iterable[str]) -> list[str]:
    """The point columns of a :func:`gap_table` frame: every column that is neither a value
    nor ``scheduler``."""
    skip = {*_VALUES, *GAP_COLUMNS}
    return [c for c in columns if c not in skip]


def gap_table(lf: pl.LazyFrame, *, n_resamples: int = N_RESAMPLES, seed: int = SEED
              ) -> pl.DataFrame:
    """One row per sweep point and scheduler: the gaps to LB and OPT (module docstring).

    Parameters
    ----------
    lf : polars.LazyFrame
        Rows as :func:`bacepipe.analysis.scan_runs` makes them, with ``avg_jct_h`` and the
        yardstick columns (a later duplicate of a (point, topology, scheduler) is dropped, as
        the report drops it).
    n_resamples, seed : bootstrap settings, as :func:`bacepipe.analysis.summarize` (a fresh
        generator per point and scheduler).

    Returns
    -------
    polars.DataFrame
        The point columns, ``scheduler``, then :data:`GAP_COLUMNS`: ``n_topologies``; ``n_lb``
        (runs with LB > 0), ``lb_gap_gmean`` with its CI, ``lb_gap_mean``, ``lb_gap_max``;
        ``n_opt`` (runs with an OPT value), ``n_proven``, over the proven ones ``opt_gap_mean``,
        ``opt_gap_max``, ``opt_at_optimum`` (share with ratio ≤ 1 + 1e-4) and ``opt_below``
        (runs below OPT by more than that: none if the optimum is right). Sorted by point,
        then scheduler in role order.
    """
    names = lf.collect_schema().names()
    keys = point_columns(names)
    lf = lf.with_columns(pl.lit(None, dtype=t).alias(c)
                         for c, t in YARDSTICK_COLUMNS.items() if c not in names)
    rows = (lf.unique([*keys, "topology", "scheduler"], keep="first", maintain_order=True)
            .with_columns(
                pl.when(pl.col("lower_bound_h") > 0)
                .then(pl.col("avg_jct_h") / pl.col("lower_bound_h")).alias("_lb"),
                pl.when(pl.col("opt_proven").fill_null(False) & (pl.col("opt_avg_jct_h") > 0))
                .then(pl.col("avg_jct_h") / pl.col("opt_avg_jct_h")).alias("_opt"))
            .collect())
    group = [*keys, "scheduler"]
    agg = rows.group_by(group, maintain_order=True).agg(
        pl.len().alias("n_topologies"),
        pl.col("_lb").is_not_null().sum().alias("n_lb"),
        pl.col("_lb").mean().alias("lb_gap_mean"),
        pl.col("_lb").max().alias("lb_gap_max"),
        pl.col("_lb").drop_nulls().alias("_lbs"),
        pl.col("opt_avg_jct_h").is_not_null().sum().alias("n_opt"),
        pl.col("_opt").is_not_null().sum().alias("n_proven"),
        pl.col("_opt").mean().alias("opt_gap_mean"),
        pl.col("_opt").max().alias("opt_gap_max"),
        (pl.col("_opt") <= 1 + AT_OPTIMUM_REL).filter(pl.col("_opt").is_not_null()).mean()
        .alias("opt_at_optimum"),
        (pl.col("_opt") < 1 - AT_OPTIMUM_REL).sum().alias("opt_below"),
    )
    heads = [gmean_ci(v.to_numpy(), n_resamples, seed) for v in agg["_lbs"]]
    agg = agg.with_columns(
        pl.Series("lb_gap_gmean", [h.gmean for h in heads], pl.Float64),
        pl.Series("lb_gap_gmean_ci_low", [h.ci_low for h in heads], pl.Float64),
        pl.Series("lb_gap_gmean_ci_high", [h.ci_high for h in heads], pl.Float64),
    ).with_columns(pl.col(c).fill_nan(None) for c in ("lb_gap_gmean", "lb_gap_gmean_ci_low",
                                                      "lb_gap_gmean_ci_high"))
    rank = {n: i for i, n in enumerate(scheduler_order(agg["scheduler"].to_list()))}
    agg = agg.with_columns(pl.col("scheduler").replace_strict(rank, return_dtype=pl.Int64)
                           .alias("_r")).sort([*keys, "_r"], nulls_last=True)
    return agg.select(*group, *(pl.col(c).cast(pl.Int64) if c.startswith("n_") or c ==
                                "opt_below" else pl.col(c) for c in GAP_COLUMNS))


# --------------------------------------------------------------------------- text


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _where(point: dict) -> str:
    shown = {k: v for k, v in point.items() if k != "point" and not is_default(k, v)}
    text = ", ".join(f"{k}={v}" for k, v in shown.items()) or "default settings"
    return text + (f" (point {point['point']})" if point.get("point") else "")


def gaps_markdown(table: pl.DataFrame, figure: str | None = None) -> list[str]:
    """The yardstick section of ``report.md``: per point, each scheduler's gap to LB (and to OPT
    where the point has proven optima); ``figure``: the gap figure's path relative to the
    report, or None."""
    md = ["## Gaps to the yardsticks (SPEC §15)", ""]
    if table.is_empty() or table["n_lb"].sum() == 0 and table["n_opt"].sum() == 0:
        return md + ["No `lower_bound_h` or `opt_avg_jct_h` column in the results (sweeps "
                     "from before SPEC §15): no gaps.", ""]
    md += ["Per topology, a scheduler's avg JCT ÷ the lower bound LB of that topology "
           "(`lower_bound_h`): geometric mean (GM) with its 95 % percentile-bootstrap CI, "
           "arithmetic mean and worst ratio. Where the sweep ran `optimal=true`: avg JCT ÷ OPT "
           f"over the topologies whose optimum is proven: mean, worst, and the share at the "
           f"optimum (ratio ≤ 1 + {AT_OPTIMUM_REL:g}: OPT is rounded up to whole seconds); "
           "*below OPT* counts runs under it by more than that (none if OPT is right). "
           "LB is a bound, not a schedule: a gap to LB is an upper bound on how far from "
           "optimal a scheduler is (`docs/optimality.md`).", ""]
    if figure:
        md += [f"![avg JCT ÷ LB by contention]({figure})", ""]
    keys = point_keys(table.columns)
    has_opt = table["n_opt"].sum() > 0
    head = ["scheduler", "role", "topologies", header("LB"), header("LB", "mean", ci=False),
            header("LB", "worst", ci=False)]
    if has_opt:
        head += ["proven / OPT runs", header("OPT", "mean", ci=False),
                 header("OPT", "worst", ci=False), "at optimum", "below OPT"]
    for point in table.select(keys).unique(maintain_order=True).iter_rows(named=True):
        here = at_point(table, point)
        md += [f"### {_where(point)}", "", _row(head),
               _row(["---", "---", *(["---:"] * (len(head) - 2))])]
        for r in here.iter_rows(named=True):
            gm = (cell(r["lb_gap_gmean"], r["lb_gap_gmean_ci_low"], r["lb_gap_gmean_ci_high"])
                  if r["lb_gap_gmean"] is not None else "—")
            cells = [f"`{r['scheduler']}`", role_of(r["scheduler"]), str(r["n_topologies"]),
                     gm, _num(r["lb_gap_mean"]), _num(r["lb_gap_max"])]
            if has_opt:
                share = r["opt_at_optimum"]
                cells += [f"{r['n_proven']} / {r['n_opt']}", _num(r["opt_gap_mean"], 4),
                          _num(r["opt_gap_max"], 4),
                          "—" if share is None else f"{100 * share:.0f} %", str(r["opt_below"])]
            md.append(_row(cells))
        md.append("")
    return md


# --------------------------------------------------------------------------- figure


def contention_slice(table: pl.DataFrame, axis: str) -> tuple[pl.DataFrame | None, dict, str]:
    """Rows of ``table`` with an LB gap along ``axis``, every other point column fixed (the
    point id aside): the combination where ``axis`` takes the most values, ties to the most
    settings at their defaults, then the first in sorted order. Where several points share an
    (axis value, scheduler), the one with the most runs is kept. ``(None, {}, why)`` when the
    axis has fewer than 2 values."""
    frame = table.filter(pl.col("lb_gap_gmean").is_not_null())
    keys = point_keys(table.columns)
    if axis not in keys or frame[axis].n_unique() < 2:
        return None, {}, f"fewer than 2 {axis} values with a lower bound"
    others = [k for k in keys if k not in (axis, "point")]
    combos = (frame.group_by(others).agg(pl.col(axis).n_unique().alias("_k"))
              .sort(others, nulls_last=True)) if others else None
    fixed: dict = {}
    if combos is not None:
        best = None
        for row in combos.iter_rows(named=True):
            k = row.pop("_k")
            score = (k, sum(is_default(c, v) for c, v in row.items()))
            if best is None or score > best[0]:
                best = (score, row)
        if best[0][0] < 2:
            return None, {}, f"{axis} never takes 2 values with the other settings fixed"
        fixed = best[1]
        frame = at_point(frame, fixed)
    frame = (frame.sort("n_lb", descending=True)
             .unique([axis, "scheduler"], keep="first", maintain_order=True).sort(axis))
    return frame, fixed, ""


def plot_gaps(table: pl.DataFrame, title: str):
    """avg JCT ÷ LB (geometric mean, 95 % CI bars) against each contention axis of
    :data:`CONTENTION_AXES` that has 2 or more values, one line per scheduler; None when no
    axis has."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    panels = []
    for axis, label in CONTENTION_AXES:
        frame, fixed, _ = contention_slice(table, axis)
        if frame is not None:
            panels.append((axis, label, frame, fixed))
    if not panels:
        return None
    names = scheduler_order(table["scheduler"].to_list())
    colors = palette(names)
    fig = Figure(figsize=(4.6 * len(panels) + 0.8, 4.8 + 0.06 * len(names)),
                 layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (axis, label, frame, fixed) in zip(axes, panels, strict=True):
        for name in names:
            rows = frame.filter(pl.col("scheduler") == name)
            if rows.is_empty():
                continue
            x = rows[axis].cast(pl.Float64).to_numpy()
            y = rows["lb_gap_gmean"].to_numpy()
            err = np.vstack([y - rows["lb_gap_gmean_ci_low"].to_numpy(),
                             rows["lb_gap_gmean_ci_high"].to_numpy() - y])
            ax.errorbar(x, y, yerr=err, color=colors[name][0], marker=colors[name][1], ms=4,
                        capsize=2, lw=1.0)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        values = frame[axis].unique().sort().to_list()
        ax.set_xticks([float(v) for v in values], [f"{v:g}" for v in values])
        ax.set_xlabel(label, fontsize=_FONT)
        ax.set_ylabel("avg JCT / lower bound (geometric mean)", fontsize=_FONT)
        shown = {k: v for k, v in fixed.items() if not is_default(k, v)}
        ax.set_title(", ".join(f"{k}={v}" for k, v in shown.items()) or "other settings at "
                     "defaults", fontsize=_FONT - 1, wrap=True)
    handles = [Line2D([], [], color=colors[n][0], marker=colors[n][1], ms=4, label=n)
               for n in names]
    handles.append(Line2D([], [], color="k", lw=0.8, ls="--", label="LB (= 1)"))
    fig.legend(handles=handles, loc="outside lower center", fontsize=_FONT - 1,
               ncols=max(1, min(len(handles), int(fig.get_figwidth() // 1.9))))
    fig.suptitle(title, fontsize=_FONT)
    return fig


__all__ = ["AT_OPTIMUM_REL", "FIGURE", "GAP_COLUMNS", "contention_slice", "gap_table",
           "gaps_markdown", "plot_gaps", "point_keys"]
