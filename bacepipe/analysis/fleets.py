"""Mixed fleets (SPEC §16, ``gpu_mix``): do the paper's conclusions and our schedulers' advantage
hold when regions mix GPU generations, and which GPU types carry the work and the bill?

- **Claims.** Every claim of SPEC §11 is evaluated by
  :func:`bacepipe.analysis.claims.evaluate_claims` once on the rows of ``gpu_mix=none`` (one GPU
  type) and once on ``gpu_mix=cloud`` (each region's type drawn from A6000, A100, L40S, H100),
  both under the ``greedy`` start rule in the paper's world, with the same statistics and
  verdict rules; the mix *changes* a claim when the two verdicts differ. ``gpu_mix=cloud``
  applies to ``random`` (and ``aws10``) only, so only ``random`` is read.
- **Ours.** :func:`bacepipe.analysis.ours.evaluate_ours` under each mix: at the default point,
  the geometric-mean ratio of ``spt_wait``/``spt_plan`` to BACE-Pipe with its 95 % CI; the
  advantage *holds* on a metric when the CI lies below 1.
- **Types.** From the per-job rows (``save_jobs=true``: ``path_gpus`` ``8>2`` and
  ``path_gpu_types`` ``A100>H100``, region by region along the path, and ``execution_h``,
  ``cost``): per scheduler, the share of GPU-hours (GPUs × execution time), of energy (GPU-hours
  × the type's board power ``power_kw``, SPEC §16's catalog) and of cost per GPU type. The rows
  do not hold each region's price, so a job's cost is split over its regions in proportion to
  their GPUs × power (the energy split): exact for a job in one region (all its cost is one
  type's), an assumption of equal prices along a multi-region path; the table says which share
  of the cost is split that way.

Every number is recomputable from the Parquet rows. The sweeps that fill it: ``python -m
bacepipe.sweep -m +preset=hetero`` (mixed fleets, per-job rows kept) beside ``+preset=all`` and
``+preset=ours`` (one type); or ``python -m bacepipe.reproduce --run --presets
all,ours,hetero``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from bacepipe.analysis.claims import (
    CLAIMS,
    DEFAULT_AXES,
    DEFAULT_RULE,
    GROUPS,
    MATCH,
    NOT_RUN,
    SAME,
    Claim,
    ClaimResult,
    model_filter,
)
from bacepipe.analysis.mechanism import JOB_VALUES, OPTIONAL_JOB_VALUES
from bacepipe.analysis.ours import OursResult, evaluate_ours
from bacepipe.analysis.roles import BASELINE, scheduler_order
from bacepipe.analysis.start_rules import (
    SAME_UNDER_BOTH,
    UNDECIDED,
    claims_under,
    comparison_outcome,
    estimates_text,
    means_text,
    verdict_kind,
)
from bacepipe.analysis.stats import is_default, with_topologies, world_filter
from bacepipe.model.hardware import GPU_CATALOG, Hardware

#: The GPU mixes compared, the default first.
MIXES = ("none", "cloud")
#: The scenarios ``gpu_mix=cloud`` applies to that the claims are read on.
FLEET_SCENARIOS = ("random",)
PRESET_COMMAND = "python -m bacepipe.sweep -m +preset=hetero"
#: The sweep that fills each side, for the claims and for role ours (the preset ``hetero``
#: keeps per-job rows itself).
FILLS = {"none": "python -m bacepipe.sweep -m +preset=all", "cloud": PRESET_COMMAND}
FILLS_OURS = {"none": "python -m bacepipe.sweep -m +preset=ours", "cloud": PRESET_COMMAND}
#: How a region without a ``gpu_type`` (``""`` in ``path_gpu_types``) is named.
NO_TYPE = "(hardware)"
FIGURE = "gpu_type_shares.png"
SEP = ">"
CHANGES = "changes"
_FONT = 9


# --------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class FleetComparison:
    """One claim on one scenario under each GPU mix of ``mixes``."""

    claim: Claim
    scenario: str
    mixes: tuple[str, ...]
    results: tuple[ClaimResult, ...]

    @property
    def outcome(self) -> str:
        return comparison_outcome(self.results, CHANGES)

    def sentence(self) -> str:
        """One computed sentence: does a mixed fleet change this claim's verdict?"""
        absent = [m for m, r in zip(self.mixes, self.results, strict=True)
                  if r.verdict == NOT_RUN]
        if absent:
            runs = " and ".join(f"`{FILLS.get(m, PRESET_COMMAND)}`" for m in absent)
            return (f"Not decided here: no results under gpu_mix={' or '.join(absent)} "
                    f"(run {runs}).")
        moved = " → ".join(means_text(r) for r in self.results)
        verdicts = [r.verdict for r in self.results]
        if self.outcome == SAME_UNDER_BOTH:
            return (f"The mixed fleet does not change it: *{verdicts[0]}* with one GPU type "
                    f"and on the mixed fleet (ours {moved}).")
        parts = ", ".join(f"*{v}* with gpu_mix={m}"
                          for m, v in zip(self.mixes, verdicts, strict=True))
        side = ("; on the paper's side of 1 on both, so the fleet changes only whether the size "
                "matches" if {verdict_kind(v) for v in verdicts} <= {MATCH, SAME} else "")
        return f"The mixed fleet changes it: {parts}{side} (ours {moved})."


def compare_fleets(lf: pl.LazyFrame, claims: Iterable[Claim] = CLAIMS,
                   scenarios: Iterable[str] = FLEET_SCENARIOS, mixes: Sequence[str] = MIXES, *,
                   n_resamples: int = 2000, seed: int = 0) -> list[FleetComparison]:
    """Every claim on every scenario under each GPU mix (greedy start rule), in claim order,
    then scenario order."""
    mixes = tuple(mixes)
    return [FleetComparison(row[0].claim, row[0].scenario, mixes, row)
            for row in claims_under(lf, claims, scenarios, "gpu_mix", mixes,
                                    n_resamples=n_resamples, seed=seed)]


# --------------------------------------------------------------------------- ours


@dataclass(frozen=True)
class OursOnFleets:
    """Role ``ours`` against BACE-Pipe at the default point, under each GPU mix: per
    scheduler, the :func:`~bacepipe.analysis.ours.evaluate_ours` row (or None) per mix."""

    mixes: tuple[str, ...]
    rows: dict[str, tuple[dict | None, ...]]

    def sentence(self, name: str) -> str:
        """One computed sentence: does ``name``'s advantage over BACE-Pipe hold on both?"""
        rows = self.rows[name]
        absent = [m for m, r in zip(self.mixes, rows, strict=True) if r is None]
        if absent:
            runs = " and ".join(f"`{FILLS_OURS.get(m, PRESET_COMMAND)}`" for m in absent)
            return (f"`{name}`: not decided, no paired result at the default point with "
                    f"gpu_mix={' or '.join(absent)} (run {runs}).")
        parts = []
        for q, label in (("jct", "avg JCT"), ("cost", "cost")):
            below = [r[f"{q}_ratio_gmean_ci_high"] < 1.0 for r in rows]
            values = " → ".join(f"{r[f'{q}_ratio_gmean']:.3f}" for r in rows)
            if all(below):
                verdict = "holds on both fleets"
            elif below[0]:
                verdict = "holds with one GPU type but not on the mixed fleet (CI reaches 1)"
            elif any(below):
                verdict = "appears only on the mixed fleet"
            else:
                verdict = "is not shown on either fleet (CI reaches 1)"
            parts.append(f"on {label} its advantage {verdict} (GM {values})")
        return f"`{name}` vs `{BASELINE}`: " + "; ".join(parts) + "."


def ours_on_fleets(lf: pl.LazyFrame, mixes: Sequence[str] = MIXES, *, n_resamples: int = 2000,
                   seed: int = 0) -> OursOnFleets | None:
    """:class:`OursOnFleets` on ``random``; None when no mix has a scheduler of role ours."""
    mixes = tuple(mixes)
    results: list[OursResult | None] = [
        evaluate_ours(lf, n_resamples=n_resamples, seed=seed, gpu_mix=m) for m in mixes]
    names = scheduler_order({n for r in results if r is not None for n in r.names})
    if not names:
        return None

    def default_row(result: OursResult | None, name: str) -> dict | None:
        if result is None:
            return None
        at = result.points.filter(pl.col("scheduler") == name)
        for key, value in DEFAULT_AXES.items():
            at = at.filter(pl.col(key).cast(pl.Float64) == float(value))
        at = at.filter(pl.col("jct_ratio_gmean").is_not_null())
        return None if at.is_empty() else at.sort("n_pairs", descending=True).row(0, named=True)

    return OursOnFleets(mixes, {n: tuple(default_row(r, n) for r in results) for n in names})


# --------------------------------------------------------------------------- GPU types


def _power_kw(name: str) -> float | None:
    if name == NO_TYPE:
        return Hardware().gpu_power_kw
    t = GPU_CATALOG.get(name)
    return None if t is None else t.power_kw


def type_shares(jobs: pl.LazyFrame) -> pl.DataFrame:
    """Per (point, scheduler, GPU type): GPU-hours, energy (kWh) and cost, and their shares of
    the (point, scheduler) totals.

    Parameters
    ----------
    jobs : polars.LazyFrame
        Per-job rows as :func:`bacepipe.analysis.mechanism.scan_jobs` reads them; jobs without
        ``path_gpus``/``path_gpu_types`` (older sweeps) or never placed are skipped.

    Returns
    -------
    polars.DataFrame
        The point columns (hive keys, ``seed``), ``scheduler``, ``gpu_type``, ``power_kw``,
        ``topologies``, ``gpu_h``, ``energy_kwh``, ``cost``, ``gpu_h_share``,
        ``energy_share``, ``cost_share`` and ``cost_split_share`` (share of the scheduler's
        cost that was split over several regions by energy rather than known exactly).
    """
    names = jobs.collect_schema().names()
    values = {"topology", "scheduler", *JOB_VALUES, *OPTIONAL_JOB_VALUES}
    keys = [c for c in names if c not in values]
    rows = (jobs.filter(pl.col("path_gpus").is_not_null() & (pl.col("path_gpus") != ""))
            .with_row_index("_job")
            .with_columns(pl.col("path_gpus").str.split(SEP).alias("_n"),
                          pl.col("path_gpu_types").str.split(SEP).alias("_t"))
            .explode("_n", "_t")
            .with_columns(pl.col("_n").cast(pl.Int64),
                          pl.when(pl.col("_t") == "").then(pl.lit(NO_TYPE))
                          .otherwise(pl.col("_t")).alias("gpu_type"))
            .collect())
    if rows.is_empty():
        return pl.DataFrame()
    power = {t: _power_kw(t) for t in rows["gpu_type"].unique().to_list()}
    rows = rows.with_columns(
        pl.col("gpu_type").replace_strict(power, return_dtype=pl.Float64).alias("power_kw"))
    rows = rows.with_columns(
        (pl.col("_n") * pl.col("execution_h")).alias("gpu_h"),
        (pl.col("_n") * pl.col("execution_h") * pl.col("power_kw")).alias("energy_kwh"),
        (pl.col("_n") * pl.col("power_kw")).alias("_w"),
    ).with_columns(
        (pl.col("cost") * pl.col("_w") / pl.col("_w").sum().over("_job")).alias("_cost"),
        (pl.len().over("_job") > 1).alias("_split"),
    )
    group = [*keys, "scheduler"]
    out = rows.group_by([*group, "gpu_type"], maintain_order=True).agg(
        pl.col("power_kw").first(), pl.col("topology").n_unique().alias("topologies"),
        pl.col("gpu_h").sum(), pl.col("energy_kwh").sum(),
        pl.col("_cost").sum().alias("cost"),
        pl.col("_cost").filter(pl.col("_split")).sum().alias("_split_cost"))
    out = out.with_columns(
        *((pl.col(c) / pl.col(c).sum().over(group)).alias(f"{s}_share")
          for c, s in (("gpu_h", "gpu_h"), ("energy_kwh", "energy"), ("cost", "cost"))),
        (pl.col("_split_cost").sum().over(group) / pl.col("cost").sum().over(group))
        .alias("cost_split_share"),
    ).drop("_split_cost")
    order = {n: i for i, n in enumerate(scheduler_order(out["scheduler"].to_list()))}
    types = {t: i for i, t in enumerate([*GPU_CATALOG, NO_TYPE])}
    return out.sort([*group[:-1],
                     pl.col("scheduler").replace_strict(order, return_dtype=pl.Int64),
                     pl.col("gpu_type").replace_strict(types, default=len(types),
                                                       return_dtype=pl.Int64)])


def fleet_point(shares: pl.DataFrame, scenario: str | None = None) -> pl.DataFrame:
    """The rows of ``shares`` at one point of ``gpu_mix=cloud`` (of ``scenario`` if given): the
    one with the most settings at their defaults (greedy, paper's world), then the most
    topologies, then the first in sorted order. Empty when there is none."""
    if shares.is_empty() or "gpu_mix" not in shares.columns:
        return pl.DataFrame()
    names = shares.columns
    frame = shares.filter(world_filter(names) & model_filter(DEFAULT_RULE, "cloud"))
    if scenario is not None and "scenario" in names:
        frame = frame.filter(pl.col("scenario") == scenario)
    if frame.is_empty():
        return frame
    keys = [c for c in names if c in _point_keys(names)]
    best, best_score = None, None
    for row in (frame.group_by(keys).agg(pl.col("topologies").max().alias("_n"))
                .sort(keys, nulls_last=True).iter_rows(named=True)):
        n = row.pop("_n")
        score = (sum(is_default(k, v) for k, v in row.items() if k != "point"), n)
        if best_score is None or score > best_score:
            best, best_score = row, score
    for key, value in best.items():
        frame = frame.filter(pl.col(key).eq_missing(pl.lit(value, dtype=frame.schema[key])))
    return frame


def _point_keys(names: Iterable[str]) -> list[str]:
    values = {"scheduler", "gpu_type", "power_kw", "topologies", "gpu_h", "energy_kwh", "cost",
              "gpu_h_share", "energy_share", "cost_share", "cost_split_share"}
    return [c for c in names if c not in values]


def plot_type_shares(at: pl.DataFrame, title: str):
    """Stacked bars per scheduler: share of GPU-hours, of energy and of cost by GPU type."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    names = scheduler_order(at["scheduler"].to_list())
    types = [t for t in [*GPU_CATALOG, NO_TYPE] if t in at["gpu_type"].to_list()]
    types += sorted(set(at["gpu_type"].to_list()) - set(types))
    cmap = colormaps["tab10"]
    # Stable colours: the catalog's order first, so a type has one colour in every figure.
    colors = {t: cmap(i % 10) for i, t in enumerate(dict.fromkeys([*GPU_CATALOG, NO_TYPE,
                                                                   *types]))}
    fig = Figure(figsize=(11.0, 1.6 + 0.32 * len(names)), layout="constrained")
    y = np.arange(len(names))
    panels = (("gpu_h_share", "GPU-hours"), ("energy_share", "energy (GPU-h × power_kw)"),
              ("cost_share", "cost (split by energy within a job)"))
    for ax, (col, label) in zip(fig.subplots(1, 3, sharey=True), panels, strict=True):
        left = np.zeros(len(names))
        for t in types:
            share = np.array([at.filter((pl.col("scheduler") == n) & (pl.col("gpu_type") == t))
                              [col].sum() for n in names])
            ax.barh(y, share, left=left, color=colors[t])
            left += share
        ax.set_xlim(0.0, 1.0)
        ax.set_title(f"share of {label}", fontsize=_FONT)
        ax.set_xlabel("share of the scheduler's total", fontsize=_FONT - 1)
        ax.tick_params(labelsize=_FONT - 1)
    fig.axes[0].set_yticks(y, names)
    fig.axes[0].invert_yaxis()
    fig.legend(handles=[Patch(color=colors[t], label=t) for t in types],
               loc="outside lower center", ncols=len(types), fontsize=_FONT - 1,
               title="GPU type", title_fontsize=_FONT - 1)
    fig.suptitle(title, fontsize=_FONT)
    return fig


# --------------------------------------------------------------------------- markdown


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _where(at: pl.DataFrame) -> str:
    row = at.row(0, named=True)
    shown = {k: row[k] for k in _point_keys(at.columns)
             if k not in ("point", "seed") and not is_default(k, row[k])}
    return ", ".join(f"{k}={v}" for k, v in shown.items())


def type_shares_markdown(at: pl.DataFrame, figure: str | None = None) -> list[str]:
    """The per-type table (and figure) at one point of :func:`fleet_point`."""
    md = ["### Which GPU types carry the work and the bill", ""]
    if at.is_empty():
        return md + ["No per-job rows with GPU types on a mixed fleet: run "
                     f"`{PRESET_COMMAND}` (it keeps per-job rows, `save_jobs=true`).", ""]
    md += [f"At {_where(at)}: per scheduler, each GPU type's share of the GPU-hours (GPUs × "
           "execution time, from `path_gpus`, `path_gpu_types`, `execution_h` of the per-job "
           "rows), of the energy (GPU-hours × the type's `power_kw` of SPEC §16's catalog) and "
           "of the cost. The rows hold no price per region, so a job's `cost` is split over its "
           "regions by their GPUs × power: exact for single-region jobs, equal prices assumed "
           "along a multi-region path; *split* is the share of a scheduler's cost split that "
           "way.", ""]
    if figure:
        md += [f"![GPU-hours, energy and cost share by GPU type]({figure})", ""]
    head = ["scheduler", "GPU type", "power kW", "topologies", "GPU-h share", "energy share",
            "cost share", "split"]
    md += [_row(head), _row(["---", "---", *(["---:"] * (len(head) - 2))])]
    for r in at.iter_rows(named=True):
        power = "—" if r["power_kw"] is None else f"{r['power_kw']:.2f}"
        md.append(_row([f"`{r['scheduler']}`", r["gpu_type"], power, str(r["topologies"]),
                        *(f"{100 * r[c]:.1f} %" for c in ("gpu_h_share", "energy_share",
                                                          "cost_share", "cost_split_share"))]))
    return md + [""]


def fleets_markdown(comparisons: list[FleetComparison], ours: OursOnFleets | None,
                    types_md: list[str]) -> list[str]:
    """The mixed-fleet section of ``reproduction.md``: claims side by side under
    ``gpu_mix=none`` and ``cloud``, ours against BACE-Pipe on both, then ``types_md``."""
    mixes = comparisons[0].mixes if comparisons else MIXES
    md = ["## Mixed fleets (SPEC §16): do the conclusions hold?", "",
          "With `gpu_mix=cloud` each region's GPU type is drawn from A6000, A100, L40S and H100 "
          "(speed, memory and power differ; prices become prices per unit of work). Each claim "
          "of SPEC §11 is evaluated on the rows of each mix alone, under the `greedy` start rule "
          f"in the paper's world, with the statistics and verdicts of the claims section (mean "
          f"paired ratio to {BASELINE}, 95 % percentile-bootstrap CI, n topologies). The mix "
          f"*changes* a claim when its verdicts differ. Sweep: `{PRESET_COMMAND}`.", ""]
    counts: dict[str, int] = {}
    for c in comparisons:
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    md += [f"Of {len(comparisons)} claim evaluations: {counts.get(CHANGES, 0)} changed by the "
           f"mixed fleet, {counts.get(SAME_UNDER_BOTH, 0)} the same on both, "
           f"{counts.get(UNDECIDED, 0)} not run on some fleet.", ""]
    header = ["claim (paper)", "paper ratio", "scenario"]
    for m in mixes:
        header += [f"gpu_mix={m}: ours [95 % CI]", f"gpu_mix={m}: verdict"]
    header += ["n", "does the mixed fleet change it?"]
    for group, title in GROUPS.items():
        rows = [c for c in comparisons if c.claim.group == group]
        if not rows:
            continue
        md += [f"### {title}", "", _row(header), _row(["---"] * len(header))]
        for c in rows:
            ref = "" if c.claim.baseline == BASELINE else f" (vs {c.claim.baseline})"
            cells = [c.claim.text + ref, c.claim.paper_text(), c.scenario]
            for r in c.results:
                cells += [estimates_text(r), f"**{r.verdict}**"]
            ns = [str(min(e.n for e in r.estimates)) if r.estimates else "—" for r in c.results]
            md.append(_row([*cells, " / ".join(ns), c.sentence()]))
        md.append("")
    md += ["### Our schedulers against BACE-Pipe on both fleets", ""]
    if ours is None:
        md += ["Not run: no scheduler of role `ours` beside `bace_pipe` under either mix (run "
               f"`{PRESET_COMMAND}` with them).", ""]
    else:
        md += ["At the default point of `random`: geometric mean of the paired ratios to "
               f"`{BASELINE}` with its 95 % CI under each mix; the advantage holds on a metric "
               "when the CI lies below 1.", ""]
        head = ["scheduler", *(f"gpu_mix={m}: {q} GM [CI] (n)" for m in mixes
                               for q in ("avg JCT", "cost"))]
        md += [_row(head), _row(["---", *(["---:"] * (len(head) - 1))])]
        for name, rows in ours.rows.items():
            cells = [f"`{name}`"]
            for r in rows:
                for q in ("jct", "cost"):
                    cells.append("—" if r is None else (
                        f"{r[f'{q}_ratio_gmean']:.3f} [{r[f'{q}_ratio_gmean_ci_low']:.3f}, "
                        f"{r[f'{q}_ratio_gmean_ci_high']:.3f}] ({r['n_pairs']})"))
            md.append(_row(cells))
        md += ["", *(f"- {ours.sentence(n)}" for n in ours.rows), ""]
    return md + types_md


def write_type_figure(at: pl.DataFrame, path, title: str) -> bool:
    """Draw :func:`plot_type_shares` of ``at`` into ``path`` (PNG, atomically); False when
    ``at`` is empty."""
    from bacepipe.io import atomic_write

    if at.is_empty():
        return False
    fig = plot_type_shares(at, title)
    atomic_write(path, lambda f: fig.savefig(f, dpi=120, format="png"))
    return True


def fleet_section(lf: pl.LazyFrame, jobs: pl.LazyFrame | None, out, *,
                  n_resamples: int = 2000, seed: int = 0) -> list[str]:
    """The whole mixed-fleet section of ``reproduction.md``, opening with the topologies per
    point it read; the type figure goes to ``out/figures/random/`` (``out``: the document's
    directory)."""
    from pathlib import Path

    comparisons = compare_fleets(lf, n_resamples=n_resamples, seed=seed)
    ours = ours_on_fleets(lf, n_resamples=n_resamples, seed=seed)
    shares = type_shares(jobs) if jobs is not None else pl.DataFrame()
    at = fleet_point(shares, FLEET_SCENARIOS[0])
    rel = f"figures/{FLEET_SCENARIOS[0]}/{FIGURE}"
    drawn = write_type_figure(at, Path(out) / rel, "Share of GPU-hours, energy and cost by GPU "
                              f"type: scenario={FLEET_SCENARIOS[0]}, gpu_mix=cloud")
    md = fleets_markdown(comparisons, ours, type_shares_markdown(at, rel if drawn else None))
    # The type shares' own "topologies" counts those where a type is used: not a point's size.
    counts = [e.n for c in comparisons for r in c.results for e in r.estimates]
    counts += [r["n_pairs"] for rows in (ours.rows.values() if ours else ()) for r in rows if r]
    return with_topologies(md, counts)
