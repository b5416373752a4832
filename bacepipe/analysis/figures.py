"""The report's figures (paper Fig. 4-8, a JCT-vs-cost scatter, a CDF of JCT ratios), as PNG.

Figures use matplotlib's object API (``Figure`` + ``savefig``), never ``pyplot``: no global state,
no GUI backend, the Agg renderer for PNG. They show only what the data holds: a figure whose axis
has fewer than 2 values, or whose schedulers are absent, is skipped with the reason, and a missing
scheduler is named in the note, never drawn.

Every ratio is a mean of per-topology ratios to ``bace_pipe``; error bars are its 95 % bootstrap CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from bacepipe.analysis.schema import ABLATIONS, BASELINE, BASELINES, SCHEDULERS, scheduler_order
from bacepipe.analysis.stats import at_point, axis_slice, describe_point, reference_point

FIGURE_DIR = "figures"
_DPI = 120
_QUANTITIES = (("jct", "avg JCT"), ("cost", "total cost"))
_PALETTE = ("#1b1b1b", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_EXTRA = ("#7f7f7f", "#bcbd22", "#17becf")
#: (label, file, axis, axis title) of the sweep figures.
AXIS_FIGURES = (
    ("Fig. 5", "fig5_bandwidth.png", "bandwidth_scale", "bandwidth scale"),
    ("Fig. 6", "fig6_gpu.png", "gpu_scale", "GPU scale"),
    ("Fig. 7", "fig7_jobs.png", "num_jobs", "number of jobs"),
)


@dataclass(frozen=True)
class FigureOutcome:
    """One figure: written (``path`` set, ``note`` says what it shows) or skipped (``path`` None,
    ``note`` says why)."""

    label: str
    title: str
    path: Path | None
    note: str

    def line(self) -> str:
        """One line for stdout, e.g. ``Fig. 5 skipped: only bandwidth_scale=1.0 present``."""
        if self.path is None:
            return f"{self.label} skipped: {self.note}"
        return f"{self.label} ({self.title}): {self.path}"


def _color(name: str, others: list[str]) -> str:
    if name in SCHEDULERS:
        return _PALETTE[SCHEDULERS.index(name)]
    return _EXTRA[others.index(name) % len(_EXTRA)] if name in others else _EXTRA[0]


def _ci(frame: pl.DataFrame, q: str) -> tuple[np.ndarray, np.ndarray]:
    """Means and the (2, n) error-bar offsets of ``q``'s ratio; NaN where null."""
    mean, low, high = (
        frame[f"{q}_ratio_{s}"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        for s in ("mean", "ci_low", "ci_high")
    )
    return mean, np.vstack([mean - low, high - mean])


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI, format="png")
    return path


def plot_normalized_bars(frame: pl.DataFrame, path: Path, title: str) -> Path:
    """Bars of the mean avg-JCT and cost ratio per scheduler, with 95 % CI error bars.

    ``frame``: summary rows of one point, one per scheduler, with non-null ratios.
    """
    names = frame["scheduler"].to_list()
    unknown = [n for n in names if n not in SCHEDULERS]
    x = np.arange(len(names))
    fig = Figure(figsize=(max(6.0, 1.1 * len(names) + 2.0), 3.8), layout="constrained")
    for ax, (q, label) in zip(fig.subplots(1, 2), _QUANTITIES, strict=True):
        mean, err = _ci(frame, q)
        ax.bar(x, mean, yerr=err, capsize=3, color=[_color(n, unknown) for n in names])
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_ylabel(f"{label} / {BASELINE}")
        ax.set_title(f"{label} (mean ratio, 95 % CI)", fontsize=10)
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def plot_axis(frame: pl.DataFrame, axis: str, path: Path, title: str) -> Path:
    """Mean ratio per scheduler against ``axis``, one line each, 95 % CI error bars.

    ``frame``: summary rows with every point column but ``axis`` fixed.
    """
    names = [n for n in scheduler_order(frame["scheduler"].to_list()) if n != BASELINE]
    unknown = [n for n in names if n not in SCHEDULERS]
    values = frame[axis].drop_nulls().unique().sort().to_list()
    numeric = frame.schema[axis].is_numeric()
    fig = Figure(figsize=(10.0, 3.8), layout="constrained")
    for ax, (q, label) in zip(fig.subplots(1, 2), _QUANTITIES, strict=True):
        for name in names:
            rows = frame.filter(pl.col("scheduler") == name).sort(axis)
            xs = rows[axis].to_list()
            pos = np.asarray(xs, float) if numeric else np.array([values.index(v) for v in xs])
            mean, err = _ci(rows, q)
            ax.errorbar(
                pos,
                mean,
                yerr=err,
                marker="o",
                ms=4,
                capsize=3,
                label=name,
                color=_color(name, unknown),
            )
        ax.axhline(1.0, color="k", lw=0.8, ls="--", label=BASELINE)
        if numeric:
            ax.set_xticks(values, [f"{v:g}" for v in values])
        else:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set_xlabel(axis)
        ax.set_ylabel(f"{label} / {BASELINE}")
        ax.set_title(f"{label} (mean ratio, 95 % CI)", fontsize=10)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both (lower is better), sorted by ``x``.

    A point is dominated when another is <= on both and < on one.
    """
    order = np.lexsort((y, x))
    front, best_y = [], np.inf
    for i in order:
        if y[i] < best_y:
            front.append(i)
            best_y = y[i]
    return np.array(front, dtype=np.int64)


def plot_pareto(frame: pl.DataFrame, path: Path, title: str, normalized: bool) -> Path:
    """One point per scheduler: mean avg JCT against mean total cost, the Pareto front marked.

    ``normalized``: plot the mean ratios to bace_pipe (else the raw means, h and $).
    """
    cols = (
        ("cost_ratio_mean", "jct_ratio_mean")
        if normalized
        else ("total_cost_mean", "avg_jct_h_mean")
    )
    frame = frame.drop_nulls(list(cols))
    names = frame["scheduler"].to_list()
    unknown = [n for n in names if n not in SCHEDULERS]
    x, y = (frame[c].to_numpy() for c in cols)
    front = pareto_front(x, y)
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.subplots()
    ax.plot(x[front], y[front], "-", color="0.6", lw=1.5, zorder=1, label="Pareto front")
    for i, name in enumerate(names):
        on_front = i in set(front.tolist())
        ax.scatter(
            x[i],
            y[i],
            s=70 if on_front else 35,
            color=_color(name, unknown),
            zorder=2,
            marker="*" if on_front else "o",
            edgecolors="k" if on_front else "none",
        )
        ax.annotate(name, (x[i], y[i]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    if normalized:
        ax.set_xlabel(f"total cost / {BASELINE} (mean ratio)")
        ax.set_ylabel(f"avg JCT / {BASELINE} (mean ratio)")
    else:
        ax.set_xlabel("total cost ($, mean)")
        ax.set_ylabel("avg JCT (h, mean)")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


def plot_ratio_cdf(ratios: pl.DataFrame, path: Path, title: str) -> Path:
    """Empirical CDF of the per-topology avg-JCT ratio to bace_pipe, one step line per scheduler.

    ``ratios``: rows of :func:`bacepipe.analysis.paired_ratios` at one point.
    """
    names = [n for n in scheduler_order(ratios["scheduler"].to_list()) if n != BASELINE]
    unknown = [n for n in names if n not in SCHEDULERS]
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    for name in names:
        r = np.sort(ratios.filter(pl.col("scheduler") == name)["jct_ratio"].drop_nulls().to_numpy())
        if r.size:
            cdf = np.arange(1, r.size + 1) / r.size
            ax.step(
                np.r_[r[0], r],
                np.r_[0.0, cdf],
                where="post",
                label=name,
                color=_color(name, unknown),
            )
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel(f"avg JCT / {BASELINE} per topology")
    ax.set_ylabel("share of topologies")
    ax.set_ylim(0.0, 1.02)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


def _with_ratios(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("jct_ratio_mean").is_not_null())


def _missing(frame: pl.DataFrame, wanted: tuple[str, ...]) -> str:
    gone = [n for n in wanted if n not in frame["scheduler"].to_list()]
    return f"; not present: {', '.join(gone)}" if gone else ""


def _bar_figure(
    at_ref: pl.DataFrame, where: str, fig: tuple[str, str, Path], keep: tuple[str, ...]
) -> FigureOutcome:
    label, title, path = fig
    frame = _with_ratios(at_ref.filter(pl.col("scheduler").is_in(list(keep))))
    if frame.filter(pl.col("scheduler") != BASELINE).is_empty():
        if BASELINE not in at_ref["scheduler"]:
            why = f"{BASELINE} absent at {where}: nothing to normalize to"
        else:
            why = f"none of {', '.join(k for k in keep if k != BASELINE)} present at {where}"
        return FigureOutcome(label, title, None, why)
    plot_normalized_bars(frame, path, f"{title}\n{where}")
    return FigureOutcome(label, title, path, where + _missing(frame, keep))


def _axis_figure(
    summary: pl.DataFrame, axis: str, fig: tuple[str, str, Path], keep: tuple[str, ...]
) -> FigureOutcome:
    label, title, path = fig
    frame, fixed, why = axis_slice(summary, axis)
    if frame is None:
        return FigureOutcome(label, title, None, why)
    values = frame[axis].unique().sort().to_list()
    frame = _with_ratios(frame.filter(pl.col("scheduler").is_in(list(keep))))
    compared = frame.filter(pl.col("scheduler") != BASELINE)[axis].unique().implode()
    frame = frame.filter(pl.col(axis).is_in(compared))
    fixed_text = describe_point(fixed)
    if frame[axis].n_unique() < 2:
        lost = ", ".join(f"{axis}={v}" for v in values if v not in frame[axis].to_list())
        why = f"no ratio to {BASELINE} at {lost} ({fixed_text}): fewer than 2 {axis} values left"
        return FigureOutcome(label, title, None, why)
    plot_axis(frame, axis, path, f"{title}\n{fixed_text}")
    return FigureOutcome(label, title, path, fixed_text + _missing(frame, keep))


def make_figures(
    summary: pl.DataFrame, out_dir: Path, ratios: pl.DataFrame | None = None
) -> list[FigureOutcome]:
    """Write every figure the data supports into ``out_dir/figures/``.

    Fig. 4, Fig. 8, the scatter and the CDF show the reference point
    (:func:`~bacepipe.analysis.stats.reference_point`); Fig. 5-7 the slice of
    :func:`~bacepipe.analysis.stats.axis_slice`. Fig. 4-7 show bace_pipe and the baselines (and
    any scheduler unknown to SPEC §7), Fig. 8 bace_pipe and the ablations.

    Parameters
    ----------
    summary : polars.DataFrame
        As made by :func:`bacepipe.analysis.summarize`.
    out_dir : Path
        The report directory.
    ratios : polars.DataFrame, optional
        Collected :func:`bacepipe.analysis.paired_ratios`; the CDF needs it (skipped without).

    Returns
    -------
    list of FigureOutcome
        In order Fig. 4, 5, 6, 7, 8, scatter, CDF; each written or skipped with the reason.
    """
    fig_dir = Path(out_dir) / FIGURE_DIR
    if summary.is_empty():
        return []
    ref = reference_point(summary)
    where = describe_point(ref)
    at_ref = at_point(summary, ref)
    present = set(summary["scheduler"].to_list())
    main = tuple(scheduler_order((present - set(ABLATIONS)) | {BASELINE, *BASELINES}))

    title = "normalized avg JCT and total cost per scheduler"
    out = [_bar_figure(at_ref, where, ("Fig. 4", title, fig_dir / "fig4_normalized.png"), main)]
    for label, file, axis, axis_title in AXIS_FIGURES:
        title = f"normalized avg JCT and total cost vs {axis_title}"
        out.append(_axis_figure(summary, axis, (label, title, fig_dir / file), main))
    title = "ablation: bace_pipe vs its variants"
    fig = ("Fig. 8", title, fig_dir / "fig8_ablation.png")
    out.append(_bar_figure(at_ref, where, fig, (BASELINE, *ABLATIONS)))

    title = "avg JCT vs total cost per scheduler"
    normalized = _with_ratios(at_ref).height >= 2
    if at_ref.height < 2:
        out.append(FigureOutcome("Scatter", title, None, f"fewer than 2 schedulers at {where}"))
    else:
        path = plot_pareto(at_ref, fig_dir / "jct_vs_cost.png", f"{title}\n{where}", normalized)
        kind = f"mean ratios to {BASELINE}" if normalized else f"raw means (no ratios at {where})"
        out.append(FigureOutcome("Scatter", title, path, f"{where}, {kind}"))

    title = "CDF of per-topology avg-JCT ratios"
    if ratios is None:
        out.append(FigureOutcome("CDF", title, None, "no per-topology ratios given"))
        return out
    at = at_point(ratios, ref)
    at = at.filter((pl.col("scheduler") != BASELINE) & pl.col("jct_ratio").is_not_null())
    if at.is_empty():
        why = f"no scheduler with a ratio to {BASELINE} at {where}"
        out.append(FigureOutcome("CDF", title, None, why))
    else:
        path = plot_ratio_cdf(at, fig_dir / "jct_ratio_cdf.png", f"{title}\n{where}")
        out.append(FigureOutcome("CDF", title, path, where))
    return out
