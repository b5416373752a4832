"""Text output: the compact per-scheduler table for stdout, and ``report.md`` with its figures.

``report.md`` holds, in order: the sources, the notes (missing schedulers, points without
bace_pipe, duplicate rows), a pooled per-scheduler table, the figures (or why each was skipped),
and one table per sweep point. ``summary.csv`` beside it holds the full summary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from bacepipe.analysis.figures import make_figures
from bacepipe.analysis.schema import BASELINE, SCHEDULERS, scheduler_order
from bacepipe.analysis.stats import at_point, describe_point, points

REPORT_FILE = "report.md"
SUMMARY_FILE = "summary.csv"
_NA = "n/a"


def _num(value: float | None, digits: int) -> str:
    return _NA if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return _NA if value is None or math.isnan(value) else f"{100 * value:.0f} %"


def _ratio(row: dict, q: str, with_ci: bool) -> str:
    mean = _num(row[f"{q}_ratio_mean"], 3)
    if not with_ci or mean == _NA:
        return mean
    return f"{mean} [{_num(row[f'{q}_ratio_ci_low'], 3)}, {_num(row[f'{q}_ratio_ci_high'], 3)}]"


def pooled(summary: pl.DataFrame) -> pl.DataFrame:
    """Per scheduler over every point: means over all topology runs, ratios over all pairs.

    ``avg_jct_h_mean`` / ``total_cost_mean`` are weighted by ``n_topologies``; ratio means and win
    rates by ``n_pairs`` (so they are the mean and share over every paired topology). With one
    point the CI columns are that point's; with several they are null (CIs are per point).
    """
    one_point = points(summary).height == 1

    def weighted(col: str, weight: str) -> pl.Expr:
        w = pl.col(weight).cast(pl.Float64)
        total = (pl.col(col) * w).sum() / pl.when(pl.col(col).is_not_null()).then(w).sum()
        return pl.when(pl.col(col).is_not_null().any()).then(total).alias(col)

    ci = [f"{q}_ratio_ci_{s}" for q in ("jct", "cost") for s in ("low", "high")]
    out = summary.group_by("scheduler").agg(
        pl.len().alias("n_points"),
        pl.col("n_topologies").sum(),
        pl.col("n_pairs").sum(),
        weighted("avg_jct_h_mean", "n_topologies"),
        weighted("total_cost_mean", "n_topologies"),
        *(
            weighted(f"{q}_{s}", "n_pairs")
            for q in ("jct", "cost")
            for s in ("ratio_mean", "win_rate")
        ),
        *((pl.col(c).first() if one_point else pl.lit(None, pl.Float64)).alias(c) for c in ci),
    )
    order = scheduler_order(out["scheduler"].to_list())
    return out.sort(pl.col("scheduler").replace_strict({n: i for i, n in enumerate(order)}))


def format_summary_table(summary: pl.DataFrame) -> str:
    """A compact per-scheduler table of ``summary`` for stdout, pooled over its points.

    Columns: mean avg JCT (h) and its ratio to bace_pipe, mean total cost ($) and its ratio, the
    win rates of bace_pipe, and the number of topology runs. With one point the ratios carry their
    95 % bootstrap CI. Lines end without trailing blanks; no trailing newline.
    """
    if summary.is_empty():
        return "no results"
    table = pooled(summary)
    n_points = points(summary).height
    with_ci = n_points == 1
    head = (
        f"{n_points} point(s), {int(summary['n_topologies'].sum())} topology runs; "
        f"x {BASELINE} = mean over topologies of value / {BASELINE}"
        + (" [95 % CI]" if with_ci else "")
        + f"; win = share of topologies where {BASELINE} is strictly better"
    )
    cells = [
        (
            "scheduler",
            "avg JCT h",
            f"x {BASELINE}",
            "cost $",
            f"x {BASELINE}",
            "JCT win",
            "cost win",
            "runs",
        )
    ]
    for row in table.iter_rows(named=True):
        cells.append(
            (
                row["scheduler"],
                _num(row["avg_jct_h_mean"], 3),
                _ratio(row, "jct", with_ci),
                _num(row["total_cost_mean"], 2),
                _ratio(row, "cost", with_ci),
                _pct(row["jct_win_rate"]),
                _pct(row["cost_win_rate"]),
                str(row["n_topologies"]),
            )
        )
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = [head]
    for r in cells:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    if table["n_pairs"].sum() == 0:
        lines.append(f"{BASELINE} absent: no ratios")
    return "\n".join(line.rstrip() for line in lines)


def report_notes(summary: pl.DataFrame) -> list[str]:
    """What the reader must know about the data: missing schedulers, points without bace_pipe,
    duplicate rows dropped."""
    notes = []
    present = set(summary["scheduler"].to_list())
    gone = [n for n in SCHEDULERS if n not in present]
    if gone:
        notes.append(f"schedulers not present in any result: {', '.join(gone)}")
    for point in points(summary).iter_rows(named=True):
        here = at_point(summary, point)
        if BASELINE not in here["scheduler"].to_list():
            notes.append(
                f"{BASELINE} absent at {describe_point(point)}: normalized columns are empty there"
            )
        dups = int(here["n_duplicate_rows"].sum())
        if dups:
            notes.append(
                f"{dups} duplicate row(s) at {describe_point(point)} (same topology and "
                "scheduler in more than one file): the first found was kept"
            )
    return notes


def _md_table(header: Sequence[str], rows: list[Sequence[str]]) -> list[str]:
    align = ["---"] + ["---:"] * (len(header) - 1)
    return ["| " + " | ".join(r) + " |" for r in (header, align, *rows)]


def _point_table(frame: pl.DataFrame) -> list[str]:
    header = (
        "scheduler",
        "topologies",
        "avg JCT h mean",
        "avg JCT h median",
        "JCT ratio mean [95 % CI]",
        "JCT ratio median",
        "JCT win",
        "cost $ mean",
        "cost $ median",
        "cost ratio mean [95 % CI]",
        "cost ratio median",
        "cost win",
        "wait h",
        "GPUs/job",
        "multi-region",
        "GPU util",
    )
    rows = []
    for r in frame.iter_rows(named=True):
        rows.append(
            (
                r["scheduler"],
                str(r["n_topologies"]),
                _num(r["avg_jct_h_mean"], 3),
                _num(r["avg_jct_h_median"], 3),
                _ratio(r, "jct", True),
                _num(r["jct_ratio_median"], 3),
                _pct(r["jct_win_rate"]),
                _num(r["total_cost_mean"], 2),
                _num(r["total_cost_median"], 2),
                _ratio(r, "cost", True),
                _num(r["cost_ratio_median"], 3),
                _pct(r["cost_win_rate"]),
                _num(r["mean_wait_h_mean"], 3),
                _num(r["mean_gpus_mean"], 2),
                _pct(r["multi_region_share_mean"]),
                _pct(r["gpu_utilization_mean"]),
            )
        )
    return _md_table(header, rows)


def _pooled_table(summary: pl.DataFrame) -> list[str]:
    table = pooled(summary)
    with_ci = points(summary).height == 1
    header = (
        "scheduler",
        "points",
        "topology runs",
        "avg JCT h mean",
        "JCT ratio mean",
        "JCT win",
        "cost $ mean",
        "cost ratio mean",
        "cost win",
    )
    rows = [
        (
            r["scheduler"],
            str(r["n_points"]),
            str(r["n_topologies"]),
            _num(r["avg_jct_h_mean"], 3),
            _ratio(r, "jct", with_ci),
            _pct(r["jct_win_rate"]),
            _num(r["total_cost_mean"], 2),
            _ratio(r, "cost", with_ci),
            _pct(r["cost_win_rate"]),
        )
        for r in table.iter_rows(named=True)
    ]
    return _md_table(header, rows)


def write_report(
    summary: pl.DataFrame,
    out_dir: str | Path,
    *,
    ratios: pl.DataFrame | None = None,
    sources: Sequence[Path] = (),
    echo: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write ``report.md``, ``summary.csv`` and the figures into ``out_dir``.

    Parameters
    ----------
    summary : polars.DataFrame
        As made by :func:`bacepipe.analysis.summarize`.
    out_dir : path-like
        Created if missing. Figures go to ``out_dir/figures/``.
    ratios : polars.DataFrame, optional
        Collected :func:`bacepipe.analysis.paired_ratios`, for the CDF figure.
    sources : sequence of Path
        The ``runs/`` datasets read, listed in the report.
    echo : callable, optional
        Receives one line per note and per figure written or skipped (the CLI passes ``print``).

    Returns
    -------
    list of Path
        ``report.md``, ``summary.csv``, then every figure written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    say = echo or (lambda _line: None)
    notes = report_notes(summary)
    outcomes = make_figures(summary, out_dir, ratios)
    for line in notes:
        say(f"note: {line}")
    for outcome in outcomes:
        say(outcome.line())

    md = ["# bacepipe report", ""]
    if sources:
        md += ["Results read from:", "", *(f"- `{s}`" for s in sources), ""]
    md += [
        f"Ratios are per topology, value / `{BASELINE}` on the same topology, then averaged; "
        "95 % CIs are percentile bootstraps over topologies; win = share of topologies where "
        f"`{BASELINE}` is strictly better. Full numbers: `{SUMMARY_FILE}`.",
        "",
    ]
    if notes:
        md += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    md += ["## All points pooled", "", *_pooled_table(summary), ""]
    md += ["## Figures", ""]
    for o in outcomes:
        if o.path is None:
            md += [f"- {o.label} skipped: {o.note}", ""]
        else:
            rel = o.path.relative_to(out_dir).as_posix()
            md += [f"**{o.label}**: {o.title} ({o.note})", "", f"![{o.label}]({rel})", ""]
    md += ["## Per point", ""]
    everywhere = scheduler_order(summary["scheduler"].to_list())
    for point in points(summary).iter_rows(named=True):
        frame = at_point(summary, point)
        gone = [n for n in everywhere if n not in frame["scheduler"].to_list()]
        md += [f"### {describe_point(point)}", ""]
        if gone:
            md += [f"Not present here: {', '.join(gone)}.", ""]
        md += [*_point_table(frame), ""]
    report = out_dir / REPORT_FILE
    report.write_text("\n".join(md), encoding="utf-8")
    csv = out_dir / SUMMARY_FILE
    summary.write_csv(csv)
    return [report, csv, *(o.path for o in outcomes if o.path is not None)]
