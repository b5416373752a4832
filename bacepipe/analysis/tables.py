"""Text output: the compact per-scheduler table for stdout, and ``report.md`` with its figures.

``report.md`` holds, in order: the sources, the notes (missing schedulers, points without the
reference scheduler, duplicate rows), a pooled per-scheduler table, the figures (or why each was
skipped), the gaps to the yardsticks of SPEC §15 (:mod:`bacepipe.analysis.yardsticks`), the
share of GPU-hours, energy and cost per GPU type on a mixed fleet (SPEC §16,
:mod:`bacepipe.analysis.fleets`, from per-job rows), and one table per sweep point.
``summary.csv`` beside it holds the full summary. Every
table lists schedulers by role (:mod:`bacepipe.analysis.roles`) and leads with the geometric mean
of the paired ratios and its 95 % CI; the arithmetic mean follows. Files are written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from bacepipe.analysis.figures import FIGURE_DIR, FigureOutcome, make_figures
from bacepipe.analysis.fleets import FIGURE as TYPE_FIGURE
from bacepipe.analysis.fleets import fleet_point, type_shares_markdown, write_type_figure
from bacepipe.analysis.roles import BASELINE, SCHEDULERS, role_of, scheduler_order
from bacepipe.analysis.stats import at_point, describe_point, points
from bacepipe.analysis.yardsticks import FIGURE as GAP_FIGURE
from bacepipe.analysis.yardsticks import gaps_markdown, plot_gaps
from bacepipe.io import atomic_write, atomic_write_text

REPORT_FILE = "report.md"
SUMMARY_FILE = "summary.csv"
_NA = "n/a"


def _num(value: float | None, digits: int) -> str:
    return _NA if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return _NA if value is None or math.isnan(value) else f"{100 * value:.0f} %"


def _ratio(row: dict, q: str, with_ci: bool, kind: str = "gmean") -> str:
    """``q``'s ratio as ``value [low, high]``: ``kind`` ``gmean`` (the headline) or ``mean``."""
    ci = "gmean_ci" if kind == "gmean" else "ci"
    value = _num(row[f"{q}_ratio_{kind}"], 3)
    if not with_ci or value == _NA:
        return value
    low, high = (_num(row[f"{q}_ratio_{ci}_{side}"], 3) for side in ("low", "high"))
    return f"{value} [{low}, {high}]"


def pooled(summary: pl.DataFrame) -> pl.DataFrame:
    """Per scheduler over every point: means over all topology runs, ratios over all pairs.

    ``avg_jct_h_mean`` / ``total_cost_mean`` are weighted by ``n_topologies``; ratio means and win
    rates by ``n_pairs`` (so they are the mean and share over every paired topology), geometric
    means by ``n_pairs`` in log space (so they are the geometric mean over every paired
    topology). With one point the CI columns are that point's; with several they are null (CIs
    are per point). Rows in role order, with a ``role`` column.
    """
    one_point = points(summary).height == 1

    def weighted(col: str, weight: str, log: bool = False) -> pl.Expr:
        w = pl.col(weight).cast(pl.Float64)
        x = pl.col(col).log() if log else pl.col(col)
        total = (x * w).sum() / pl.when(pl.col(col).is_not_null()).then(w).sum()
        return pl.when(pl.col(col).is_not_null().any()).then(
            total.exp() if log else total).alias(col)

    ci = [f"{q}_ratio_{k}ci_{s}" for q in ("jct", "cost") for k in ("gmean_", "")
          for s in ("low", "high")]
    out = summary.group_by("scheduler").agg(
        pl.len().alias("n_points"),
        pl.col("n_topologies").sum(),
        pl.col("n_pairs").sum(),
        weighted("avg_jct_h_mean", "n_topologies"),
        weighted("total_cost_mean", "n_topologies"),
        *(weighted(f"{q}_ratio_gmean", "n_pairs", log=True) for q in ("jct", "cost")),
        *(
            weighted(f"{q}_{s}", "n_pairs")
            for q in ("jct", "cost")
            for s in ("ratio_mean", "win_rate")
        ),
        *((pl.col(c).first() if one_point else pl.lit(None, pl.Float64)).alias(c) for c in ci),
    )
    order = scheduler_order(out["scheduler"].to_list())
    out = out.with_columns(
        pl.col("scheduler").map_elements(role_of, return_dtype=pl.String).alias("role"))
    return out.sort(pl.col("scheduler").replace_strict({n: i for i, n in enumerate(order)}))


def _aligned(cells: list[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in cells]


def format_summary_table(summary: pl.DataFrame) -> str:
    """A compact per-scheduler table of ``summary`` for stdout, pooled over its points.

    Columns: scheduler, role, mean avg JCT (h), its ratio to the reference scheduler as a
    geometric mean (the headline) and an arithmetic mean, the same for total cost ($), the win
    rates of the reference, and the number of topology runs. With one point the geometric means
    carry their 95 % bootstrap CI. Lines end without trailing blanks; no trailing newline.
    """
    if summary.is_empty():
        return "no results"
    table = pooled(summary)
    n_points = points(summary).height
    with_ci = n_points == 1
    head = (
        f"{n_points} point(s), {int(summary['n_topologies'].sum())} topology runs; "
        f"GM x {BASELINE} = geometric mean over topologies of value / {BASELINE}"
        + (" [95 % CI]" if with_ci else "")
        + f", mean = arithmetic mean; win = share of topologies where {BASELINE} is strictly "
        "better"
    )
    cells = [("scheduler", "role", "avg JCT h", f"GM x {BASELINE}", "mean", "cost $",
              f"GM x {BASELINE}", "mean", "JCT win", "cost win", "runs")]
    for row in table.iter_rows(named=True):
        cells.append((
            row["scheduler"], row["role"], _num(row["avg_jct_h_mean"], 3),
            _ratio(row, "jct", with_ci), _ratio(row, "jct", False, "mean"),
            _num(row["total_cost_mean"], 2), _ratio(row, "cost", with_ci),
            _ratio(row, "cost", False, "mean"), _pct(row["jct_win_rate"]),
            _pct(row["cost_win_rate"]), str(row["n_topologies"]),
        ))
    lines = [head, *_aligned(cells)]
    if table["n_pairs"].sum() == 0:
        lines.append(f"{BASELINE} absent: no ratios")
    return "\n".join(line.rstrip() for line in lines)


def report_notes(summary: pl.DataFrame) -> list[str]:
    """What the reader must know about the data: registered schedulers not in the results, points
    without the reference scheduler, duplicate rows dropped."""
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
    align = ["---", "---"] + ["---:"] * (len(header) - 2)
    return ["| " + " | ".join(r) + " |" for r in (header, align, *rows)]


def _point_table(frame: pl.DataFrame) -> list[str]:
    header = (
        "scheduler", "role", "topologies", "avg JCT h mean", "avg JCT h median",
        "JCT ratio GM [95 % CI]", "JCT ratio mean [95 % CI]", "JCT ratio median", "JCT win",
        "cost $ mean", "cost $ median", "cost ratio GM [95 % CI]", "cost ratio mean [95 % CI]",
        "cost ratio median", "cost win", "wait h", "GPUs/job", "multi-region", "GPU util",
    )
    rows = [
        (
            r["scheduler"], role_of(r["scheduler"]), str(r["n_topologies"]),
            _num(r["avg_jct_h_mean"], 3), _num(r["avg_jct_h_median"], 3),
            _ratio(r, "jct", True), _ratio(r, "jct", True, "mean"),
            _num(r["jct_ratio_median"], 3), _pct(r["jct_win_rate"]),
            _num(r["total_cost_mean"], 2), _num(r["total_cost_median"], 2),
            _ratio(r, "cost", True), _ratio(r, "cost", True, "mean"),
            _num(r["cost_ratio_median"], 3), _pct(r["cost_win_rate"]),
            _num(r["mean_wait_h_mean"], 3), _num(r["mean_gpus_mean"], 2),
            _pct(r["multi_region_share_mean"]), _pct(r["gpu_utilization_mean"]),
        )
        for r in frame.iter_rows(named=True)
    ]
    return _md_table(header, rows)


def _pooled_table(summary: pl.DataFrame) -> list[str]:
    table = pooled(summary)
    with_ci = points(summary).height == 1
    header = ("scheduler", "role", "points", "topology runs", "avg JCT h mean", "JCT ratio GM",
              "JCT ratio mean", "JCT win", "cost $ mean", "cost ratio GM", "cost ratio mean",
              "cost win")
    rows = [
        (
            r["scheduler"], r["role"], str(r["n_points"]), str(r["n_topologies"]),
            _num(r["avg_jct_h_mean"], 3), _ratio(r, "jct", with_ci),
            _ratio(r, "jct", with_ci, "mean"), _pct(r["jct_win_rate"]),
            _num(r["total_cost_mean"], 2), _ratio(r, "cost", with_ci),
            _ratio(r, "cost", with_ci, "mean"), _pct(r["cost_win_rate"]),
        )
        for r in table.iter_rows(named=True)
    ]
    return _md_table(header, rows)


def _gap_figure(gaps: pl.DataFrame, out_dir: Path) -> FigureOutcome:
    """The figure of avg JCT ÷ LB by contention (:func:`yardsticks.plot_gaps`), written
    atomically, or why it was skipped."""
    label, title = "Gap", "avg JCT ÷ lower bound by contention (SPEC §15)"
    fig = plot_gaps(gaps, f"{label}: {title}") if not gaps.is_empty() else None
    if fig is None:
        return FigureOutcome(label, title, None, "fewer than 2 GPU-scale or job-count values "
                             "with a lower bound")
    path = out_dir / FIGURE_DIR / GAP_FIGURE
    atomic_write(path, lambda f: fig.savefig(f, dpi=120, format="png"))
    return FigureOutcome(label, title, path, "one line per scheduler")


def write_report(
    summary: pl.DataFrame,
    out_dir: str | Path,
    *,
    ratios: pl.DataFrame | None = None,
    sources: Sequence[Path] = (),
    echo: Callable[[str], None] | None = None,
    gaps: pl.DataFrame | None = None,
    types: pl.DataFrame | None = None,
) -> list[Path]:
    """Write ``report.md``, ``summary.csv`` and the figures into ``out_dir``, each atomically.

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
    gaps : polars.DataFrame, optional
        :func:`bacepipe.analysis.yardsticks.gap_table` of the same rows: the section "Gaps to
        the yardsticks" and its figure (omitted when None).
    types : polars.DataFrame, optional
        :func:`bacepipe.analysis.fleets.type_shares` of the per-job rows: the section "GPU
        types" (share of GPU-hours, energy and cost per type on a mixed fleet) and its figure
        (omitted when None).

    Returns
    -------
    list of Path
        ``report.md``, ``summary.csv``, then every figure written.

    Raises
    ------
    OSError
        ``out_dir`` cannot take a file; no file is left half-written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    say = echo or (lambda _line: None)
    notes = report_notes(summary)
    outcomes = make_figures(summary, out_dir, ratios)
    gap = _gap_figure(gaps, out_dir) if gaps is not None else None
    for line in notes:
        say(f"note: {line}")
    for outcome in [*outcomes, *([gap] if gap else [])]:
        say(outcome.line())

    md = ["# bacepipe report", ""]
    if sources:
        md += ["Results read from:", "", *(f"- `{s}`" for s in sources), ""]
    md += [
        f"Ratios are per topology, value / `{BASELINE}` (the scheduler of role `paper`) on the "
        "same topology. The headline is their geometric mean (GM; symmetric: swapping the two "
        "schedulers inverts it), the arithmetic mean follows; 95 % CIs are percentile "
        f"bootstraps over topologies; win = share of topologies where `{BASELINE}` is strictly "
        f"better. Full numbers: `{SUMMARY_FILE}`.",
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
    if gap is not None:
        rel = gap.path.relative_to(out_dir).as_posix() if gap.path is not None else None
        md += gaps_markdown(gaps, rel)
        if gap.path is None and gaps["n_lb"].sum() > 0:
            md += [f"- {gap.label} figure skipped: {gap.note}", ""]
        outcomes.append(gap)
    if types is not None:
        md += ["## GPU types (SPEC §16)", ""]
        at = fleet_point(types)
        path = out_dir / FIGURE_DIR / TYPE_FIGURE
        title = "Share of GPU-hours, energy and cost by GPU type (gpu_mix=cloud)"
        drawn = write_type_figure(at, path, title)
        if drawn:
            outcomes.append(FigureOutcome("Types", title, path, "one bar per scheduler"))
            say(outcomes[-1].line())
        md += type_shares_markdown(at, f"{FIGURE_DIR}/{TYPE_FIGURE}" if drawn else None)
    md += ["## Per point", ""]
    everywhere = scheduler_order(summary["scheduler"].to_list())
    for point in points(summary).iter_rows(named=True):
        frame = at_point(summary, point)
        gone = [n for n in everywhere if n not in frame["scheduler"].to_list()]
        md += [f"### {describe_point(point)}", ""]
        if gone:
            md += [f"Not present here: {', '.join(gone)}.", ""]
        md += [*_point_table(frame), ""]
    report = atomic_write_text(out_dir / REPORT_FILE, "\n".join(md))
    csv = atomic_write(out_dir / SUMMARY_FILE, summary.write_csv)
    return [report, csv, *(o.path for o in outcomes if o.path is not None)]
