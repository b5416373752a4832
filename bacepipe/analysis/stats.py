"""Paired ratios to the reference scheduler, bootstrap confidence intervals, the per-point summary.

Every scheduler of a sweep point runs on the same topologies (SPEC §8), so comparisons are paired:
for each (point, topology) the ratio is value(scheduler) / value(reference), for avg JCT and total
cost; the reference is the scheduler of role ``paper`` (:mod:`bacepipe.analysis.roles`). A point
is one combination of the hive keys and ``seed``; its topologies are the sample. Ratios are never
formed across points, and no statistic pools points.

- the headline: the geometric mean of the ratios, exp(mean(log r)), with a 95 %
  percentile-bootstrap CI, computed by :func:`bacepipe.headline.gmean_ci` (the function the
  sweep's terminal summary calls too). It is symmetric: swapping the two schedulers inverts the
  mean and its CI (GM(B/A) = 1 / GM(A/B)), which the arithmetic mean of heavy-tailed ratios is
  not (``docs/model.md``, "Headline statistic"). Only positive ratios enter it;
- mean ratio (arithmetic) with a 95 % percentile-bootstrap CI, kept where a paper number is
  compared: resample the topologies with replacement ``n_resamples`` times and take the 2.5th /
  97.5th percentile of the resampled means;
- win rate: the share of topologies where bace_pipe's value is strictly lower (raw values compared,
  not the rounded ratio).

The bootstrap draws from a fresh ``numpy.random.default_rng(seed)`` for each (point, scheduler,
metric), so a point's interval never depends on which other points are in the data, and avg JCT
and cost are resampled with the same topology indices.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from bacepipe.analysis.roles import BASELINE, scheduler_order
from bacepipe.analysis.schema import (
    AXIS_DEFAULTS,
    EXTENSION_KEYS,
    METRICS,
    SUMMARY_VALUE_COLUMNS,
    point_columns,
)
from bacepipe.headline import N_RESAMPLES, SEED, gmean_ci, mean_ci


def paired_ratios(lf: pl.LazyFrame, baseline: str = BASELINE) -> pl.LazyFrame:
    """Result rows with their ratios to ``baseline`` on the same (point, topology).

    Parameters
    ----------
    lf : polars.LazyFrame
        Result rows as made by :func:`bacepipe.analysis.scan_runs`.
    baseline : str
        The scheduler to normalize to.

    Returns
    -------
    polars.LazyFrame
        ``lf`` without duplicate (point, topology, scheduler) rows (the first is kept), plus
        ``jct_ratio`` and ``cost_ratio`` (f64; null where the baseline is absent or its value is
        0) and ``jct_win`` / ``cost_win`` (bool: baseline strictly lower; null where absent).
    """
    point = point_columns(lf.collect_schema().names())
    keys = [*point, "topology"]
    lf = lf.unique(subset=[*keys, "scheduler"], keep="first", maintain_order=True)
    base = lf.filter(pl.col("scheduler") == baseline).select(
        *keys, pl.col("avg_jct_h").alias("_base_jct"), pl.col("total_cost").alias("_base_cost")
    )
    out = lf.join(base, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return out.with_columns(
        _ratio("avg_jct_h", "_base_jct").alias("jct_ratio"),
        _ratio("total_cost", "_base_cost").alias("cost_ratio"),
        (pl.col("_base_jct") < pl.col("avg_jct_h")).alias("jct_win"),
        (pl.col("_base_cost") < pl.col("total_cost")).alias("cost_win"),
    ).drop("_base_jct", "_base_cost")


def _ratio(value: str, base: str) -> pl.Expr:
    return pl.when(pl.col(base) != 0).then(pl.col(value) / pl.col(base))


def summarize(
    lf: pl.LazyFrame, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
    baseline: str = BASELINE,
) -> pl.DataFrame:
    """One row per sweep point and scheduler: means, medians, paired ratios, CIs, win rates.

    Parameters
    ----------
    lf : polars.LazyFrame
        Result rows as made by :func:`bacepipe.analysis.scan_runs`.
    n_resamples, seed : int
        Bootstrap resamples and generator seed (see :func:`bacepipe.headline.mean_ci`).
    baseline : str
        The scheduler ratios are normalized to.

    Returns
    -------
    polars.DataFrame
        The point columns (hive keys, ``seed``), ``scheduler``, then
        :data:`~bacepipe.analysis.schema.SUMMARY_VALUE_COLUMNS`: ``n_topologies``,
        ``n_duplicate_rows`` (rows dropped as repeats of a (point, topology, scheduler)),
        ``<metric>_mean`` for every metric, ``avg_jct_h_median``, ``total_cost_median``,
        ``n_pairs`` (topologies where the baseline ran too), and for ``jct`` and ``cost``:
        ``*_ratio_gmean`` with ``*_ratio_gmean_ci_low`` / ``_high`` (geometric mean of the
        positive ratios and its bootstrap CI, :func:`bacepipe.headline.gmean_ci`: the
        headline), ``*_ratio_mean``,
        ``*_ratio_median``, ``*_ratio_ci_low``, ``*_ratio_ci_high``, ``*_win_rate``. Ratio
        columns are null at a point without the baseline. Sorted by point, then scheduler in
        role order (:func:`~bacepipe.analysis.roles.scheduler_order`).
    """
    point = point_columns(lf.collect_schema().names())
    group = [*point, "scheduler"]
    raw_counts = lf.group_by(group).agg(pl.len().alias("_rows"))
    ratios, raw_counts = pl.collect_all([paired_ratios(lf, baseline), raw_counts])
    agg = ratios.group_by(group, maintain_order=True).agg(
        pl.len().alias("n_topologies"),
        *(pl.col(m).mean().alias(f"{m}_mean") for m in METRICS),
        pl.col("avg_jct_h").median().alias("avg_jct_h_median"),
        pl.col("total_cost").median().alias("total_cost_median"),
        pl.col("jct_win").is_not_null().sum().cast(pl.Int64).alias("n_pairs"),
        *(
            expr
            for q in ("jct", "cost")
            for expr in (
                pl.col(f"{q}_ratio").mean().alias(f"{q}_ratio_mean"),
                pl.col(f"{q}_ratio").median().alias(f"{q}_ratio_median"),
                pl.col(f"{q}_win").cast(pl.Float64).mean().alias(f"{q}_win_rate"),
                pl.col(f"{q}_ratio").drop_nulls().alias(f"_{q}_values"),
            )
        ),
    )
    ci = {}
    for q in ("jct", "cost"):
        values = [v.to_numpy() for v in agg[f"_{q}_values"]]
        bounds = [mean_ci(v, n_resamples, seed) for v in values]
        heads = [gmean_ci(v, n_resamples, seed) for v in values]
        columns = {"ci_low": [b[0] for b in bounds], "ci_high": [b[1] for b in bounds],
                   "gmean": [h.gmean for h in heads], "gmean_ci_low": [h.ci_low for h in heads],
                   "gmean_ci_high": [h.ci_high for h in heads]}
        for name, column in columns.items():
            ci[f"{q}_ratio_{name}"] = pl.Series(column, dtype=pl.Float64).fill_nan(None)
    agg = agg.with_columns(**ci).join(raw_counts, on=group, how="left", nulls_equal=True)
    agg = agg.with_columns(
        pl.col("n_topologies").cast(pl.Int64),
        (pl.col("_rows").cast(pl.Int64) - pl.col("n_topologies")).alias("n_duplicate_rows"),
    )
    rank = {name: i for i, name in enumerate(scheduler_order(agg["scheduler"].to_list()))}
    agg = agg.with_columns(
        pl.col("scheduler").replace_strict(rank, return_dtype=pl.Int64).alias("_r")
    )
    agg = agg.sort([*point, "_r"], nulls_last=True)
    return agg.select(*group, *SUMMARY_VALUE_COLUMNS)


def points(summary: pl.DataFrame) -> pl.DataFrame:
    """The distinct sweep points of ``summary`` (its point columns), sorted."""
    cols = point_columns(summary.columns)
    return summary.select(cols).unique().sort(cols, nulls_last=True)


def at_point(summary: pl.DataFrame, point: dict[str, object]) -> pl.DataFrame:
    """The rows of ``summary`` at ``point`` (null-safe equality on every given column)."""
    mask = pl.lit(True)
    for col, value in point.items():
        mask = mask & pl.col(col).eq_missing(pl.lit(value, dtype=summary.schema[col]))
    return summary.filter(mask)


#: Point columns that identify a run rather than set the model: never named in a title.
ID_KEYS = ("point",)


def is_default(key: str, value: object) -> bool:
    """Whether ``key=value`` is a default setting: null (a switch that is off), an axis at its
    :data:`~bacepipe.analysis.schema.AXIS_DEFAULTS` value, or seed 0. ``scenario`` has no
    default: it is always named."""
    if key == "seed":
        return value == 0
    return value is None or (key in AXIS_DEFAULTS and AXIS_DEFAULTS[key] == value)


def non_default(point: dict[str, object]) -> dict[str, object]:
    """The settings of ``point`` a reader must be told: not default, not an identifier."""
    return {k: v for k, v in point.items() if k not in ID_KEYS and not is_default(k, v)}


def describe_point(point: dict[str, object]) -> str:
    """``point`` as ``key=value, ...`` (the form report.md and stdout use)."""
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "(no axes)"


def varying_keys(summary: pl.DataFrame) -> list[str]:
    """The point columns of ``summary`` that tell its points apart: those whose value differs
    between points, in column order; the point id too when those alone do not (two runs of the
    same settings by other code). Empty with one point."""
    table = points(summary)
    keys = [c for c in table.columns if c not in ID_KEYS and table[c].n_unique() > 1]
    if table.height > 1 and (not keys or table.select(keys).unique().height < table.height):
        keys += [c for c in ID_KEYS if c in table.columns]
    return keys


def point_label(point: dict[str, object], keys: list[str]) -> str:
    """How the report names ``point`` (a row of :func:`points`): its values of ``keys``
    (:func:`varying_keys`), or with no keys (one point) its settings a reader must be told
    (:func:`non_default`)."""
    shown = {k: point[k] for k in keys} if keys else non_default(point)
    return describe_point(shown)


def topologies_sentence(counts: Iterable[int | None], varies: str = "as each row says"
                        ) -> list[str]:
    """The computed sentence (and a blank line) saying how many topologies per point a section's
    numbers were read from (``varies`` follows when there are several counts); nothing when
    ``counts`` is empty."""
    ns = sorted({int(n) for n in counts if n})
    if not ns:
        return []
    text = (str(ns[0]) if len(ns) == 1 else
            ", ".join(map(str, ns[:-1])) + f" or {ns[-1]}, {varies}")
    return [f"*Topologies per point read here: {text}.*", ""]


def with_topologies(section: list[str], counts: Iterable[int | None]) -> list[str]:
    """``section`` (its title, a blank line, then the rest) with :func:`topologies_sentence`
    after the title."""
    return [*section[:2], *topologies_sentence(counts), *section[2:]]


def world_filter(columns: list[str] | tuple[str, ...],
                 world: dict[str, object] | None = None) -> pl.Expr:
    """Rows of one SPEC §12 world: the switches of ``world`` at its values, every other
    extension key (:data:`~bacepipe.analysis.schema.EXTENSION_KEYS`) of ``columns`` null.

    ``world_filter(columns)`` (no switch) keeps the paper's world. Values are compared as text,
    since the loader types unknown hive keys as strings.
    """
    world = world or {}
    expr = pl.lit(True)
    for key in EXTENSION_KEYS:
        if key in world:
            text = pl.col(key).cast(pl.String) if key in columns else pl.lit(None, pl.String)
            expr = expr & text.eq_missing(str(world[key]))
        elif key in columns:
            expr = expr & pl.col(key).is_null()
    return expr


def _default_matches(point: dict[str, object]) -> int:
    # An extension switch that is off (null or absent) counts as a default: ties between the
    # paper's world and an extension world at the same axes go to the paper's world.
    return (sum(point.get(k) == v for k, v in AXIS_DEFAULTS.items())
            + sum(point.get(k) is None for k in EXTENSION_KEYS))


def reference_point(summary: pl.DataFrame) -> dict[str, object]:
    """The point Fig. 4, Fig. 8, the scatter and the CDF show.

    The point with the most axes at their SPEC defaults (bandwidth and GPU scale 1.0, 8 jobs, every
    SPEC §12 switch off), then the most schedulers, then the most topologies; ties go to the first
    in sorted order.
    """
    cols = point_columns(summary.columns)
    stats = (
        summary.group_by(cols)
        .agg(pl.len().alias("_k"), pl.col("n_topologies").max().alias("_n"))
        .sort(cols, nulls_last=True)
    )
    best, best_score = {}, None
    for row in stats.iter_rows(named=True):
        k, n = row.pop("_k"), row.pop("_n")
        score = (_default_matches(row), k, n)
        if best_score is None or score > best_score:
            best, best_score = row, score
    return best


def axis_slice(summary: pl.DataFrame, axis: str) -> tuple[pl.DataFrame | None, dict, str]:
    """Rows of ``summary`` along ``axis`` with every other point column fixed.

    Of the combinations of the other point columns, the one where ``axis`` takes the most values
    is kept; ties go to the most axes at their defaults, then the first in sorted order.

    Returns
    -------
    (frame, fixed, reason)
        ``frame`` is None when the axis has fewer than 2 values at any fixed combination; then
        ``reason`` says why (e.g. ``only bandwidth_scale=1.0 present``). ``fixed`` maps the other
        point columns to their values.
    """
    cols = point_columns(summary.columns)
    if axis not in cols:
        return None, {}, f"no {axis} axis in the results"
    present = summary[axis].drop_nulls().unique().sort().to_list()
    if len(present) < 2:
        shown = ", ".join(f"{axis}={v}" for v in present) or f"no {axis} value"
        return None, {}, f"only {shown} present"
    others = [c for c in cols if c != axis]
    if not others:
        return summary, {}, ""
    combos = (
        summary.group_by(others)
        .agg(pl.col(axis).drop_nulls().n_unique().alias("_k"))
        .sort(others, nulls_last=True)
    )
    best, best_score = {}, None
    for row in combos.iter_rows(named=True):
        k = row.pop("_k")
        score = (k, _default_matches(row))
        if best_score is None or score > best_score:
            best, best_score = row, score
    if best_score[0] < 2:
        return None, {}, f"{axis} never takes 2 or more values with the other axes fixed"
    return at_point(summary, best), best, ""
