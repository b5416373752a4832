"""Text output: the compact per-point tables for stdout, and ``report.md`` with its figures.

Points are never pooled: a sweep point (one combination of the hive keys and ``seed``) is one
sample of topologies, every ratio pairs two schedulers on one topology of one point, and every
table is one point's. A point is named by the keys whose values differ between the points read
(:func:`~bacepipe.analysis.stats.varying_keys`), and every table says which schedulers of the
data were not run at its point.

``report.md`` holds, in order: the sources, the notes (registered schedulers absent from the
data, schedulers not run at a point, points without the reference scheduler, duplicate rows),
the points (one row each: its keys, topologies, schedulers and those not run there), the figures
(or why each was skipped), the gaps to the yardsticks of SPEC §15
(:mod:`bacepipe.analysis.yardsticks`), the share of GPU-hours, energy and cost per GPU type on a
mixed fleet (SPEC §16, :mod:`bacepipe.analysis.fleets`, from per-job rows), and one table per
sweep point. ``summary.csv`` beside it holds the full summary. Every table lists schedulers by
role (:mod:`bacepipe.analysis.roles`) and leads with the geometric mean of the paired ratios and
its 95 % CI (:mod:`bacepipe.headline`, the statistic the sweep's terminal summary prints), under
a header that names it (``geo-mean × bace_pipe [95% CI]``); the arithmetic mean follows in
``report.md``. Files are written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import polars as pl

from bacepipe.analysis.figures import FIGURE_DIR, FigureOutcome, make_figures
from bacepipe.analysis.fleets import FIGURE as TYPE_FIGURE
from bacepipe.analysis.fleets import fleet_point, type_shares_markdown, write_type_figure
from bacepipe.analysis.roles import BASELINE, SCHEDULERS, role_of, scheduler_order
from bacepipe.analysis.stats import at_point, describe_point, point_label, points, varying_keys
from bacepipe.analysis.yardsticks import FIGURE as GAP_FIGURE
from bacepipe.analysis.yardsticks import gaps_markdown, plot_gaps
from bacepipe.headline import NA, cell, header
from bacepipe.io import atomic_write, atomic_write_text

REPORT_FILE = "report.md"
SUMMARY_FILE = "summary.csv"
#: The header of the headline columns: ``geo-mean × bace_pipe [95% CI]``.
GEO_MEAN = header(BASELINE)


def _num(value: float | None, digits: int) -> str:
    return cell(value, digits=digits)


def _pct(value: float | None) -> str:
    return NA if value is None or math.isnan(value) else f"{100 * value:.0f} %"


def _ratio(row: dict, q: str, kind: str = "gmean") -> str:
    """``q``'s ratio as ``value [low, high]``: ``kind`` ``gmean`` (the headline) or ``mean``."""
    ci = "gmean_ci" if kind == "gmean" else "ci"
    return cell(row[f"{q}_ratio_{kind}"], row[f"{q}_ratio_{ci}_low"], row[f"{q}_ratio_{ci}_high"])


class PointRows(NamedTuple):
    """One point of a summary: its point columns, its name in the report
    (:func:`~bacepipe.analysis.stats.point_label`), its rows, and the schedulers of the summary
    that were not run there (role order)."""

    point: dict
    label: str
    rows: pl.DataFrame
    not_run: list[str]


def by_point(summary: pl.DataFrame) -> list[PointRows]:
    """The points of ``summary`` in sorted order (:func:`~bacepipe.analysis.stats.points`)."""
    keys = varying_keys(summary)
    everywhere = scheduler_order(summary["scheduler"].to_list())
    out = []
    for point in points(summary).iter_rows(named=True):
        rows = at_point(summary, point)
        here = set(rows["scheduler"].to_list())
        out.append(PointRows(point, point_label(point, keys), rows,
                             [n for n in everywhere if n not in here]))
    return out


def _aligned(cells: list[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in cells]


def format_summary_table(summary: pl.DataFrame) -> str:
    """Compact per-scheduler tables of ``summary`` for stdout, one per point (never pooled).

    A legend, then per point a line naming it (:func:`by_point`) and the schedulers of the data
    not run there, and a table: scheduler, role, topologies, mean avg JCT (h), its geometric
    mean × the reference scheduler with the 95 % bootstrap CI, the same for total cost ($), and
    the win rates of the reference. Lines end without trailing blanks; no trailing newline.
    """
    if summary.is_empty():
        return "no results"
    groups = by_point(summary)
    lines = [
        f"ratios: value / {BASELINE} on the same topology of one point (points are never pooled)",
        f"{GEO_MEAN}: their geometric mean over the point's topologies, percentile bootstrap",
        f"win: share of topologies where {BASELINE} is strictly better; arithmetic means and "
        "medians: report.md",
    ]
    for i, group in enumerate(groups, 1):
        gone = f"; not run here: {', '.join(group.not_run)}" if group.not_run else ""
        cells = [("scheduler", "role", "topologies", "avg JCT h", GEO_MEAN, "total cost $",
                  GEO_MEAN, "JCT win", "cost win")]
        for row in group.rows.iter_rows(named=True):
            cells.append((
                row["scheduler"], role_of(row["scheduler"]), str(row["n_topologies"]),
                _num(row["avg_jct_h_mean"], 3), _ratio(row, "jct"),
                _num(row["total_cost_mean"], 2), _ratio(row, "cost"),
                _pct(row["jct_win_rate"]), _pct(row["cost_win_rate"]),
            ))
        lines += ["", f"point {i} of {len(groups)}: {group.label}{gone}", *_aligned(cells)]
        if group.rows["n_pairs"].sum() == 0:
            lines.append(f"{BASELINE} absent: no ratios")
    return "\n".join(line.rstrip() for line in lines)


def report_notes(summary: pl.DataFrame) -> list[str]:
    """What the reader must know about the data: registered schedulers not in the results,
    schedulers of the data not run at a point, points without the reference scheduler,
    duplicate rows dropped."""
    notes = []
    present = set(summary["scheduler"].to_list())
    gone = [n for n in SCHEDULERS if n not in present]
    if gone:
        notes.append(f"schedulers not present in any result: {', '.join(gone)}")
    for group in by_point(summary):
        if group.not_run:
            notes.append(f"not run at {group.label}: {', '.join(group.not_run)}")
        if BASELINE not in group.rows["scheduler"].to_list():
            notes.append(
                f"{BASELINE} absent at {group.label}: normalized columns are empty there"
            )
        dups = int(group.rows["n_duplicate_rows"].sum())
        if dups:
            notes.append(
                f"{dups} duplicate row(s) at {group.label} (same topology and "
                "scheduler in more than one file): the first found was kept"
            )
    return notes


def _md_table(header: Sequence[str], rows: list[Sequence[str]],
              align: Sequence[str] | None = None) -> list[str]:
    """A markdown table; ``align``: one ``---`` (left) or ``---:`` (right) per column, by
    default the first two left and the others (numbers) right."""
    align = align or ["---", "---"] + ["---:"] * (len(header) - 2)
    return ["| " + " | ".join(r) + " |" for r in (header, align, *rows)]


def _point_table(frame: pl.DataFrame) -> list[str]:
    ratio = {q: (f"{q} {GEO_MEAN}", f"{q} {header(BASELINE, 'mean')}",
                 f"{q} {header(BASELINE, 'median', ci=False)}") for q in ("JCT", "cost")}
    header_ = (
        "scheduler", "role", "topologies", "avg JCT h mean", "avg JCT h median", *ratio["JCT"],
        "JCT win", "cost $ mean", "cost $ median", *ratio["cost"], "cost win", "wait h",
        "GPUs/job", "multi-region", "GPU util",
    )
    rows = [
        (
            r["scheduler"], role_of(r["scheduler"]), str(r["n_topologies"]),
            _num(r["avg_jct_h_mean"], 3), _num(r["avg_jct_h_median"], 3),
            _ratio(r, "jct"), _ratio(r, "jct", "mean"),
            _num(r["jct_ratio_median"], 3), _pct(r["jct_win_rate"]),
            _num(r["total_cost_mean"], 2), _num(r["total_cost_median"], 2),
            _ratio(r, "cost"), _ratio(r, "cost", "mean"),
            _num(r["cost_ratio_median"], 3), _pct(r["cost_win_rate"]),
            _num(r["mean_wait_h_mean"], 3), _num(r["mean_gpus_mean"], 2),
            _pct(r["multi_region_share_mean"]), _pct(r["gpu_utilization_mean"]),
        )
        for r in frame.iter_rows(named=True)
    ]
    return _md_table(header_, rows)


def _points_table(groups: list[PointRows], keys: list[str]) -> list[str]:
    """One row per point: its ``keys`` (its settings with one point), the topologies per
    scheduler, the schedulers run, and those of the data not run there."""
    lead = keys or ["settings"]
    rows = []
    for g in groups:
        low, high = g.rows["n_topologies"].min(), g.rows["n_topologies"].max()
        cells = [str(g.point[k]) for k in keys] if keys else [g.label]
        rows.append((*cells, str(low) if low == high else f"{low}–{high}", str(g.rows.height),
                     ", ".join(g.not_run) or "—"))
    return _md_table((*lead, "topologies", "schedulers run", "not run here"), rows,
                     ["---"] * len(lead) + ["---:", "---:", "---"])


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
    groups = by_point(summary)
    keys = varying_keys(summary)
    md += [
        f"Ratios are per topology, value / `{BASELINE}` (the scheduler of role `paper`) on the "
        "same topology of the same sweep point; points are never pooled. The headline, "
        f"*{GEO_MEAN}*, is their geometric mean over the point's topologies (symmetric: "
        "swapping the two schedulers inverts it) with its 95 % percentile-bootstrap CI; the "
        f"arithmetic mean follows; win = share of topologies where `{BASELINE}` is strictly "
        f"better. Full numbers: `{SUMMARY_FILE}`.",
        "",
    ]
    if notes:
        md += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    md += ["## Points", "",
           (f"{len(groups)} points, named by the settings that differ between them; one table "
            "each under *Per point* below." if keys else
            "One point; its table is under *Per point* below."), "",
           *_points_table(groups, keys), ""]
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
    for g in groups:
        settings = {k: v for k, v in g.point.items() if v is not None}
        md += [f"### {g.label}", "", f"*Settings: {describe_point(settings)}.*", ""]
        if g.not_run:
            md += [f"Not run here: {', '.join(g.not_run)}.", ""]
        md += [*_point_table(g.rows), ""]
    report = atomic_write_text(out_dir / REPORT_FILE, "\n".join(md))
    csv = atomic_write(out_dir / SUMMARY_FILE, summary.write_csv)
    return [report, csv, *(o.path for o in outcomes if o.path is not None)]
