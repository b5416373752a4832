"""The report's figures (paper Fig. 4-8, a JCT-vs-cost scatter, a CDF of JCT ratios), as PNG.

Figures use matplotlib's object API (``Figure`` + ``savefig``), never ``pyplot``: no global state,
no GUI backend, the Agg renderer for PNG. They show only what the data holds: a figure whose axis
has fewer than 2 values, or whose schedulers are absent, is skipped with the reason, and a missing
scheduler is named in the note, never drawn.

Every ratio is to the reference scheduler (role ``paper``) on the same topology; bars and lines
show the geometric mean of the per-topology ratios (the headline, ``docs/model.md``) with its
95 % bootstrap CI as error bars. Which figure shows a scheduler, its colour and marker, and the
order of legends come from its role (:mod:`bacepipe.analysis.roles`), so any number of
schedulers draws. Layout rules, checked by ``tests/test_figures.py``: a title names the scenario
and only the settings that differ from the defaults (:func:`~bacepipe.analysis.stats.non_default`),
wrapped to the figure's width; schedulers are told apart by a legend placed in the figure area
below the axes (constrained layout), never by labels at the data points.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from bacepipe.analysis.roles import (
    BASELINE,
    ROLES,
    of_role,
    palette,
    registered,
    role_of,
    scheduler_order,
)
from bacepipe.analysis.stats import at_point, axis_slice, non_default, reference_point
from bacepipe.io import atomic_write

FIGURE_DIR = "figures"
_DPI = 120
_FONT = 9
_QUANTITIES = (("jct", "avg JCT"), ("cost", "total cost"))
_HEADLINE = "geometric mean of ratios, 95 % CI"
#: (label, file, axis, axis title) of the sweep figures.
AXIS_FIGURES = (
    ("Fig. 5", "fig5_bandwidth.png", "bandwidth_scale", "bandwidth scale"),
    ("Fig. 6", "fig6_gpu.png", "gpu_scale", "GPU scale"),
    ("Fig. 7", "fig7_jobs.png", "num_jobs", "number of jobs"),
)
Colors = dict[str, tuple]


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


def settings_text(point: dict[str, object]) -> str:
    """``key=value, ...`` of the settings of ``point`` that are not defaults."""
    return ", ".join(f"{k}={v}" for k, v in non_default(point).items()) or "default settings"


def _title(fig: Figure, title: str, settings: str) -> None:
    """Title and a subtitle of the settings, each wrapped to the figure's width."""
    # ~0.55 em per character on average in DejaVu Sans; 72 points per inch.
    chars = max(20, int(fig.get_figwidth() * 72 / (0.55 * _FONT)) - 4)
    text = "\n".join([textwrap.fill(title, chars), textwrap.fill(settings, chars)])
    fig.suptitle(text, fontsize=_FONT)


def _gm(frame: pl.DataFrame, q: str) -> tuple[np.ndarray, np.ndarray]:
    """Geometric means and the (2, n) error-bar offsets of ``q``'s ratio; NaN where null."""
    mean, low, high = (
        frame[f"{q}_ratio_{s}"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        for s in ("gmean", "gmean_ci_low", "gmean_ci_high")
    )
    return mean, np.vstack([mean - low, high - mean])


def _legend_columns(n: int, width_in: float) -> int:
    return max(1, min(n, int(width_in // 1.9)))


def _role_legend(fig: Figure, names: list[str], colors: Colors) -> None:
    """One patch per role present, in the role's middle shade, below the axes."""
    handles = []
    for r in ROLES:
        mine = [n for n in names if role_of(n) == r]
        if mine:
            handles.append(Patch(color=colors[mine[len(mine) // 2]][0], label=r))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles),
               fontsize=_FONT - 1, title="role", title_fontsize=_FONT - 1)


def plot_normalized_bars(frame: pl.DataFrame, title: str, settings: str,
                         colors: Colors) -> Figure:
    """Bars of the geometric-mean avg-JCT and cost ratio per scheduler, 95 % CI error bars.

    ``frame``: summary rows of one point, one per scheduler, with non-null ratios.
    """
    names = scheduler_order(frame["scheduler"].to_list())
    frame = frame.sort(pl.col("scheduler").replace_strict({n: i for i, n in enumerate(names)}))
    x = np.arange(len(names))
    fig = Figure(figsize=(max(7.0, 0.5 * len(names) + 3.0), 4.6), layout="constrained")
    for ax, (q, label) in zip(fig.subplots(1, 2), _QUANTITIES, strict=True):
        mean, err = _gm(frame, q)
        ax.bar(x, mean, yerr=err, capsize=2, color=[colors[n][0] for n in names])
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, names, rotation=45, ha="right", rotation_mode="anchor",
                      fontsize=_FONT - 1)
        ax.set_ylabel(f"{label} / {BASELINE}", fontsize=_FONT)
        ax.set_title(f"{label}: {_HEADLINE}", fontsize=_FONT)
    _role_legend(fig, names, colors)
    _title(fig, title, settings)
    return fig


def _legend_below(fig: Figure, handles: list, labels: list[str] | None = None) -> None:
    """A figure legend under the axes, as many columns as the width holds: beside the axes it
    would reach up into the centred title."""
    cols = _legend_columns(len(handles), fig.get_figwidth())
    if labels is None:
        fig.legend(handles=handles, loc="outside lower center", fontsize=_FONT - 1, ncols=cols)
    else:
        fig.legend(handles, labels, loc="outside lower center", fontsize=_FONT - 1, ncols=cols)


def _line_legend(fig: Figure, names: list[str], colors: Colors) -> None:
    handles = [Line2D([], [], color=colors[n][0], marker=colors[n][1], ms=4, label=n)
               for n in names]
    handles.append(Line2D([], [], color="k", lw=0.8, ls="--", label=f"{BASELINE} (= 1)"))
    _legend_below(fig, handles)


def plot_axis(frame: pl.DataFrame, axis: str, title: str, settings: str,
              colors: Colors) -> Figure:
    """Geometric-mean ratio per scheduler against ``axis``, one line each, 95 % CI error bars.

    ``frame``: summary rows with every point column but ``axis`` fixed.
    """
    names = [n for n in scheduler_order(frame["scheduler"].to_list()) if n != BASELINE]
    values = frame[axis].drop_nulls().unique().sort().to_list()
    numeric = frame.schema[axis].is_numeric()
    fig = Figure(figsize=(9.0, 4.4 + 0.06 * len(names)), layout="constrained")
    for ax, (q, label) in zip(fig.subplots(1, 2), _QUANTITIES, strict=True):
        for name in names:
            rows = frame.filter(pl.col("scheduler") == name).sort(axis)
            xs = rows[axis].to_list()
            pos = np.asarray(xs, float) if numeric else np.array([values.index(v) for v in xs])
            mean, err = _gm(rows, q)
            color, marker = colors[name]
            ax.errorbar(pos, mean, yerr=err, marker=marker, ms=4, capsize=2, color=color,
                        lw=1.0)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        if numeric:
            ax.set_xticks(values, [f"{v:g}" for v in values])
        else:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set_xlabel(axis, fontsize=_FONT)
        ax.set_ylabel(f"{label} / {BASELINE}", fontsize=_FONT)
        ax.set_title(f"{label}: {_HEADLINE}", fontsize=_FONT)
    _line_legend(fig, names, colors)
    _title(fig, title, settings)
    return fig


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


def plot_pareto(frame: pl.DataFrame, title: str, settings: str, normalized: bool,
                colors: Colors) -> Figure:
    """One marker per scheduler: avg JCT against total cost, the Pareto front joined.

    ``normalized``: plot the geometric-mean ratios to the reference (else the raw means, h
    and $). Schedulers are named in the legend; those on the front have a black edge.
    """
    cols = (
        ("cost_ratio_gmean", "jct_ratio_gmean")
        if normalized
        else ("total_cost_mean", "avg_jct_h_mean")
    )
    frame = frame.drop_nulls(list(cols))
    names = scheduler_order(frame["scheduler"].to_list())
    frame = frame.sort(pl.col("scheduler").replace_strict({n: i for i, n in enumerate(names)}))
    x, y = (frame[c].to_numpy() for c in cols)
    front = set(pareto_front(x, y).tolist())
    fig = Figure(figsize=(7.6, 5.2 + 0.06 * len(names)), layout="constrained")
    ax = fig.subplots()
    line = pareto_front(x, y)
    ax.plot(x[line], y[line], "-", color="0.6", lw=1.5, zorder=1)
    for i, name in enumerate(names):
        color, marker = colors[name]
        ax.scatter(x[i], y[i], s=60 if i in front else 36, color=color, marker=marker, zorder=2,
                   edgecolors="k" if i in front else "none", linewidths=1.2, label=name)
    if normalized:
        ax.set_xlabel(f"total cost / {BASELINE} (geometric mean)", fontsize=_FONT)
        ax.set_ylabel(f"avg JCT / {BASELINE} (geometric mean)", fontsize=_FONT)
    else:
        ax.set_xlabel("total cost ($, mean)", fontsize=_FONT)
        ax.set_ylabel("avg JCT (h, mean)", fontsize=_FONT)
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="0.6", lw=1.5))
    labels.append("Pareto front (black edge)")
    _legend_below(fig, handles, labels)
    _title(fig, title, settings)
    return fig


def plot_ratio_cdf(ratios: pl.DataFrame, title: str, settings: str, colors: Colors) -> Figure:
    """Empirical CDF of the per-topology avg-JCT ratio to the reference, one step line per
    scheduler, on a log axis (a ratio and its inverse lie equally far from 1).

    ``ratios``: rows of :func:`bacepipe.analysis.paired_ratios` at one point.
    """
    names = [n for n in scheduler_order(ratios["scheduler"].to_list()) if n != BASELINE]
    fig = Figure(figsize=(7.6, 5.0 + 0.06 * len(names)), layout="constrained")
    ax = fig.subplots()
    drawn = []
    for name in names:
        r = ratios.filter((pl.col("scheduler") == name) & (pl.col("jct_ratio") > 0))
        r = np.sort(r["jct_ratio"].to_numpy())
        if r.size:
            cdf = np.arange(1, r.size + 1) / r.size
            ax.step(np.r_[r[0], r], np.r_[0.0, cdf], where="post", color=colors[name][0],
                    lw=1.2)
            drawn.append(name)
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel(f"avg JCT / {BASELINE} per topology (log scale)", fontsize=_FONT)
    ax.set_ylabel("share of topologies", fontsize=_FONT)
    ax.set_ylim(0.0, 1.02)
    _line_legend(fig, drawn, colors)
    _title(fig, title, settings)
    return fig


def _with_ratios(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("jct_ratio_gmean").is_not_null())


def _missing(frame: pl.DataFrame, wanted: list[str]) -> str:
    gone = [n for n in wanted if n not in frame["scheduler"].to_list()]
    return f"; not present: {', '.join(gone)}" if gone else ""


Rendered = tuple[FigureOutcome, Callable[[], Figure] | None]


def _bar_figure(at_ref: pl.DataFrame, ref: dict, fig: tuple[str, str, Path], keep: list[str],
                colors: Colors) -> Rendered:
    label, title, path = fig
    where, settings = settings_text(ref), settings_text(ref)
    frame = _with_ratios(at_ref.filter(pl.col("scheduler").is_in(keep)))
    if frame.filter(pl.col("scheduler") != BASELINE).is_empty():
        if BASELINE not in at_ref["scheduler"]:
            why = f"{BASELINE} absent at {where}: nothing to normalize to"
        else:
            why = f"none of {', '.join(k for k in keep if k != BASELINE)} present at {where}"
        return FigureOutcome(label, title, None, why), None
    outcome = FigureOutcome(label, title, path, where + _missing(frame, keep))
    return outcome, lambda: plot_normalized_bars(frame, f"{label}: {title}", settings, colors)


def _axis_figure(summary: pl.DataFrame, axis: str, fig: tuple[str, str, Path], keep: list[str],
                 colors: Colors) -> Rendered:
    label, title, path = fig
    frame, fixed, why = axis_slice(summary, axis)
    if frame is None:
        return FigureOutcome(label, title, None, why), None
    values = frame[axis].unique().sort().to_list()
    frame = _with_ratios(frame.filter(pl.col("scheduler").is_in(keep)))
    compared = frame.filter(pl.col("scheduler") != BASELINE)[axis].unique().implode()
    frame = frame.filter(pl.col(axis).is_in(compared))
    fixed_text = settings_text(fixed)
    if frame[axis].n_unique() < 2:
        lost = ", ".join(f"{axis}={v}" for v in values if v not in frame[axis].to_list())
        why = f"no ratio to {BASELINE} at {lost} ({fixed_text}): fewer than 2 {axis} values left"
        return FigureOutcome(label, title, None, why), None
    outcome = FigureOutcome(label, title, path, fixed_text + _missing(frame, keep))
    return outcome, lambda: plot_axis(frame, axis, f"{label}: {title}", fixed_text, colors)


def render_figures(summary: pl.DataFrame, out_dir: Path,
                   ratios: pl.DataFrame | None = None) -> list[Rendered]:
    """Every figure the data supports, as (outcome, builder of its Figure or None if skipped).

    Fig. 4, Fig. 8, the scatter and the CDF show the reference point
    (:func:`~bacepipe.analysis.stats.reference_point`); Fig. 5-7 the slice of
    :func:`~bacepipe.analysis.stats.axis_slice`. Fig. 4-7 show every role but ``ablation``,
    Fig. 8 the reference scheduler and the ablations. Paths are under ``out_dir/figures/``.
    """
    fig_dir = Path(out_dir) / FIGURE_DIR
    if summary.is_empty():
        return []
    # The paper's schedulers are always wanted (an absent one is named in the note); any other
    # scheduler is shown when present.
    names = [*summary["scheduler"].unique().to_list(), *registered("paper", "baseline",
                                                                   "ablation")]
    colors = palette(names)
    ref = reference_point(summary)
    where = settings_text(ref)
    at_ref = at_point(summary, ref)
    main = of_role(names, *(r for r in ROLES if r != "ablation"))
    ablation = of_role(names, "paper", "ablation")

    title = "normalized avg JCT and total cost per scheduler"
    out = [_bar_figure(at_ref, ref, ("Fig. 4", title, fig_dir / "fig4_normalized.png"), main,
                       colors)]
    for label, file, axis, axis_title in AXIS_FIGURES:
        title = f"normalized avg JCT and total cost vs {axis_title}"
        out.append(_axis_figure(summary, axis, (label, title, fig_dir / file), main, colors))
    title = f"ablation: {BASELINE} vs its variants"
    fig = ("Fig. 8", title, fig_dir / "fig8_ablation.png")
    out.append(_bar_figure(at_ref, ref, fig, ablation, colors))

    title = "avg JCT vs total cost per scheduler"
    normalized = _with_ratios(at_ref).height >= 2
    if at_ref.height < 2:
        out.append((FigureOutcome("Scatter", title, None, f"fewer than 2 schedulers at {where}"),
                    None))
    else:
        kind = f"ratios to {BASELINE}" if normalized else f"raw means (no ratios at {where})"
        outcome = FigureOutcome("Scatter", title, fig_dir / "jct_vs_cost.png", f"{where}, {kind}")
        out.append((outcome, lambda t=title: plot_pareto(at_ref, f"Scatter: {t}",
                                                         settings_text(ref), normalized, colors)))

    title = "CDF of per-topology avg-JCT ratios"
    if ratios is None:
        out.append((FigureOutcome("CDF", title, None, "no per-topology ratios given"), None))
        return out
    at = at_point(ratios, ref)
    at = at.filter((pl.col("scheduler") != BASELINE) & (pl.col("jct_ratio") > 0))
    if at.is_empty():
        why = f"no scheduler with a ratio to {BASELINE} at {where}"
        out.append((FigureOutcome("CDF", title, None, why), None))
    else:
        outcome = FigureOutcome("CDF", title, fig_dir / "jct_ratio_cdf.png", where)
        out.append((outcome, lambda t=title: plot_ratio_cdf(at, f"CDF: {t}", settings_text(ref),
                                                            colors)))
    return out


def make_figures(
    summary: pl.DataFrame, out_dir: Path, ratios: pl.DataFrame | None = None
) -> list[FigureOutcome]:
    """Write every figure the data supports into ``out_dir/figures/`` (each PNG atomically).

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
    out = []
    for outcome, build in render_figures(summary, out_dir, ratios):
        if build is not None:
            fig = build()
            atomic_write(outcome.path, lambda f, fig=fig: fig.savefig(f, dpi=_DPI, format="png"))
        out.append(outcome)
    return out
