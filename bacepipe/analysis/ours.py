"""Role ``ours`` (SPEC §14: ``spt_wait``, ``spt_plan``) against BACE-Pipe: paired ratios with CIs
at every sweep point, win rates on both metrics per topology, where they lose, and the
``plan_slack`` curve of ``spt_plan``, and, where ``spt_plan``'s CI is not below 1, the mechanism
measured from the per-job rows of that point (:func:`loss_causes`).

Everything is computed from the result rows by :func:`bacepipe.analysis.summarize` and
:func:`bacepipe.analysis.paired_ratios` (ratio = value(ours) / value(bace_pipe) on the same
topology of the same point): the geometric mean with its 95 % bootstrap CI (the report's
headline) and the arithmetic mean with its CI (issue 13's criterion: "CI below 1"). Per topology
each scheduler is *faster* or *cheaper* when its ratio is < 1 (strictly); "wins both" is both at
once. Rows are the paper's world (no SPEC §12 switch, one GPU type) under one start rule (default
``greedy``: ours ignore it, BACE-Pipe does not). The main table reads points whose ``plan_slack``
is the default 0.2; the curve reads ``spt_plan`` at the default axes for every slack. Where two
points differ only in their id (two presets ran the same settings at different topology counts),
each scheduler is read from the one with the most pairs (:func:`largest_points`), as the claims do.

The sweep that fills it: ``python -m bacepipe.sweep -m +preset=ours``.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from bacepipe.analysis.claims import DEFAULT_AXES, DEFAULT_MIX, DEFAULT_RULE, model_filter
from bacepipe.analysis.roles import BASELINE, of_role
from bacepipe.analysis.schema import AXIS_DEFAULTS, point_columns
from bacepipe.analysis.stats import non_default, paired_ratios, summarize, world_filter

STUDY_COMMAND = "python -m bacepipe.sweep -m +preset=ours"
#: Per-topology outcome of one scheduler against BACE-Pipe, in table order.
OUTCOMES = ("wins both", "faster only", "cheaper only", "neither")
#: BACE-Pipe's own per-run metrics shown per outcome: what the topologies where ours lose share.
TOPOLOGY_METRICS = (("mean_wait_h", "mean wait h"), ("mean_gpus", "mean GPUs per job"),
                    ("gpu_utilization", "GPU utilization"),
                    ("multi_region_share", "multi-region share"))
_AXES = tuple(DEFAULT_AXES)


@dataclass(frozen=True)
class OursResult:
    """What :func:`evaluate_ours` found.

    Attributes
    ----------
    scenario, start_rule : the rows read.
    names : the schedulers of role ``ours`` present.
    points : one row per (point, scheduler of ``names``): the point columns, ``n_pairs``, the
        ratio columns of :func:`bacepipe.analysis.summarize` for ``jct`` and ``cost``, and the
        share of topologies per outcome of :data:`OUTCOMES`.
    outcomes : at the default point, per (scheduler, outcome): ``topologies``, ``share``, the
        median JCT and cost ratio, and BACE-Pipe's own :data:`TOPOLOGY_METRICS` means.
    curve : ``spt_plan`` at the default axes, one row per ``plan_slack`` (as ``points``).
    plane : at the default point (default slack), every scheduler of role ``baseline``,
        ``ours`` or ``user`` with its ratio columns: the JCT–cost plane of :func:`plot_plane`.
    """

    scenario: str
    start_rule: str
    names: tuple[str, ...]
    points: pl.DataFrame
    outcomes: pl.DataFrame
    curve: pl.DataFrame
    plane: pl.DataFrame


def _outcome() -> pl.Expr:
    faster, cheaper = pl.col("jct_ratio") < 1.0, pl.col("cost_ratio") < 1.0
    return (pl.when(faster & cheaper).then(pl.lit(OUTCOMES[0]))
            .when(faster).then(pl.lit(OUTCOMES[1]))
            .when(cheaper).then(pl.lit(OUTCOMES[2]))
            .otherwise(pl.lit(OUTCOMES[3])).alias("outcome"))


def _at_defaults() -> pl.Expr:
    expr = pl.lit(True)
    for key, value in DEFAULT_AXES.items():
        expr = expr & (pl.col(key).cast(pl.Float64) == float(value))
    return expr


def _default_slack() -> pl.Expr:
    return pl.col("plan_slack").is_null() | (pl.col("plan_slack") == AXIS_DEFAULTS["plan_slack"])


def evaluate_ours(lf: pl.LazyFrame, scenario: str = "random", start_rule: str = DEFAULT_RULE,
                  *, n_resamples: int = 2000, seed: int = 0,
                  gpu_mix: str = DEFAULT_MIX) -> OursResult | None:
    """Role ``ours`` against BACE-Pipe on ``scenario`` (see the module docstring); None when no
    scheduler of role ``ours`` has a paired result there. ``gpu_mix`` (SPEC §16): the GPU mix
    whose rows are read (default ``none``, one type)."""
    names = lf.collect_schema().names()
    where = world_filter(names) & model_filter(start_rule, gpu_mix)
    if "scenario" in names:
        where = where & (pl.col("scenario") == scenario)
    lf = lf.filter(where)
    present = lf.select(pl.col("scheduler").unique()).collect()["scheduler"].to_list()
    ours = of_role(present, "ours")
    if not ours or BASELINE not in present:
        return None
    summary = summarize(lf, n_resamples=n_resamples, seed=seed)
    shown = of_role(present, "baseline", "ours", "user")  # as Fig. 4: no ablations
    plane = summary.filter(_at_defaults() & _default_slack()
                           & pl.col("scheduler").is_in(shown) & (pl.col("n_pairs") > 0))
    plane = plane.sort("n_pairs", descending=True).unique("scheduler", keep="first",
                                                          maintain_order=True)
    lf = lf.filter(pl.col("scheduler").is_in([BASELINE, *ours]))
    ratios = paired_ratios(lf).filter(pl.col("jct_ratio").is_not_null()
                                      & pl.col("cost_ratio").is_not_null()).collect()
    if ratios.filter(pl.col("scheduler").is_in(ours)).is_empty():
        return None
    point = point_columns(summary.columns)
    shares = (ratios.filter(pl.col("scheduler").is_in(ours)).with_columns(_outcome())
              .group_by(*point, "scheduler")
              .agg(*((pl.col("outcome") == o).mean().alias(o) for o in OUTCOMES)))
    table = (largest_points(summary.filter(pl.col("scheduler").is_in(ours)
                                           & (pl.col("n_pairs") > 0)))
             .join(shares, on=[*point, "scheduler"], how="left", nulls_equal=True))
    main = axis_order(table.filter(_default_slack()))
    curve = table.filter((pl.col("scheduler") == "spt_plan") & _at_defaults())
    if "plan_slack" in curve.columns:
        curve = curve.sort("plan_slack")
    return OursResult(scenario, start_rule, tuple(ours), main, _outcomes(ratios, ours, point),
                      curve, plane)


def largest_points(summary: pl.DataFrame) -> pl.DataFrame:
    """One row per (settings, scheduler) of ``summary`` (rows of
    :func:`bacepipe.analysis.summarize`, in their order): where several points share every
    setting but their id (two presets ran them at different topology counts), the one with the
    most ``n_pairs``, then the first by point id; points are never pooled."""
    settings = [c for c in point_columns(summary.columns) if c != "point"]
    order = summary.with_row_index("_i").sort(["n_pairs", "point"], descending=[True, False])
    return (order.unique([*settings, "scheduler"], keep="first", maintain_order=True)
            .sort("_i").drop("_i"))


def _outcomes(ratios: pl.DataFrame, ours: list[str], point: list[str]) -> pl.DataFrame:
    """Per (scheduler, outcome) at the default axes and slack: counts, medians and BACE-Pipe's
    own metrics on those topologies (one point per scheduler: the one with the most pairs)."""
    at = ratios.filter(_at_defaults() & _default_slack())
    keys = [*point, "topology"]
    base = at.filter(pl.col("scheduler") == BASELINE).select(
        *keys, *(pl.col(m).alias(f"base_{m}") for m, _ in TOPOLOGY_METRICS))
    mine = at.filter(pl.col("scheduler").is_in(ours))
    if mine.is_empty():
        return pl.DataFrame()
    best = (mine.group_by("scheduler", *point).len().sort("len", *point, descending=[True]
                                                          + [False] * len(point))
            .unique("scheduler", keep="first").drop("len"))
    mine = mine.join(best, on=["scheduler", *point], how="semi", nulls_equal=True)
    mine = mine.join(base, on=keys, how="left", nulls_equal=True).with_columns(_outcome())
    out = mine.group_by("scheduler", "outcome").agg(
        pl.len().alias("topologies"),
        pl.col("jct_ratio").median().alias("jct_ratio_median"),
        pl.col("cost_ratio").median().alias("cost_ratio_median"),
        *(pl.col(f"base_{m}").mean().alias(f"base_{m}") for m, _ in TOPOLOGY_METRICS))
    out = out.with_columns(
        (pl.col("topologies") / pl.col("topologies").sum().over("scheduler")).alias("share"))
    order = [(n, o) for n in ours for o in OUTCOMES]
    return (out.with_columns(pl.struct("scheduler", "outcome").map_elements(
        lambda s: order.index((s["scheduler"], s["outcome"])), return_dtype=pl.Int64)
        .alias("_r")).sort("_r").drop("_r"))


def axis_order(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` sorted as the paper's figures read: the default point, then along bandwidth,
    GPUs, jobs, then any other point; within one axis by value, then scheduler order."""
    def key(row: dict) -> tuple:
        off = [i for i, k in enumerate(_AXES) if k in row and row[k] != DEFAULT_AXES[k]]
        axis = off[0] + 1 if len(off) == 1 else (0 if not off else len(_AXES) + 1)
        value = float(row[_AXES[off[0]]]) if len(off) == 1 else 0.0
        return (axis, value)

    if frame.is_empty():
        return frame
    keys = [key(r) for r in frame.iter_rows(named=True)]
    idx = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    return frame[idx]


PLANE_FIGURE = "ours_plane.png"


def plot_plane(result: OursResult):
    """The JCT–cost plane at the default point: every scheduler's geometric-mean ratio to
    BACE-Pipe (cost across, avg JCT up) with 95 % CI bars, and the ``plan_slack`` curve of
    ``spt_plan`` (each slack labelled); BACE-Pipe is the cross at (1, 1)."""
    from matplotlib.figure import Figure

    from bacepipe.analysis.roles import palette, scheduler_order

    names = scheduler_order(result.plane["scheduler"].to_list())
    colors = palette([*names, BASELINE])
    fig = Figure(figsize=(7.6, 5.6), layout="constrained")
    ax = fig.subplots()

    def bars(frame: pl.DataFrame, **kw) -> None:
        x, y = frame["cost_ratio_gmean"].to_numpy(), frame["jct_ratio_gmean"].to_numpy()
        xerr = [x - frame["cost_ratio_gmean_ci_low"].to_numpy(),
                frame["cost_ratio_gmean_ci_high"].to_numpy() - x]
        yerr = [y - frame["jct_ratio_gmean_ci_low"].to_numpy(),
                frame["jct_ratio_gmean_ci_high"].to_numpy() - y]
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, capsize=2, **kw)

    curve = result.curve.drop_nulls(["cost_ratio_gmean", "jct_ratio_gmean"])
    if curve.height >= 2 and "plan_slack" in curve.columns:
        bars(curve, color=colors["spt_plan"][0], fmt="-", lw=0.8, alpha=0.6,
             label="spt_plan, plan_slack curve")
        for r in curve.iter_rows(named=True):
            ax.annotate(f"ε={r['plan_slack']:g}", (r["cost_ratio_gmean"], r["jct_ratio_gmean"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=7)
    for name in names:
        row = result.plane.filter(pl.col("scheduler") == name).drop_nulls(
            ["cost_ratio_gmean", "jct_ratio_gmean"])
        if not row.is_empty():
            bars(row, color=colors[name][0], fmt=colors[name][1], ms=6, label=name)
    ax.plot([1.0], [1.0], "k+", ms=12, mew=1.5, label=f"{BASELINE} (1, 1)")
    ax.axhline(1.0, color="k", lw=0.6, ls="--")
    ax.axvline(1.0, color="k", lw=0.6, ls="--")
    ax.set_xlabel(f"total cost / {BASELINE} (geometric mean, 95 % CI)", fontsize=9)
    ax.set_ylabel(f"avg JCT / {BASELINE} (geometric mean, 95 % CI)", fontsize=9)
    fig.legend(loc="outside lower center", fontsize=8, ncols=4)
    fig.suptitle(f"JCT–cost plane at the default point: scenario={result.scenario}, "
                 f"start_rule={result.start_rule}", fontsize=9)
    return fig


# --------------------------------------------------------------------------- markdown


def _ci(row: dict, q: str, kind: str) -> str:
    pre = f"{q}_ratio_gmean" if kind == "gmean" else f"{q}_ratio_mean"
    ci = f"{q}_ratio_gmean_ci" if kind == "gmean" else f"{q}_ratio_ci"
    if row.get(pre) is None:
        return "—"
    return f"{row[pre]:.3f} [{row[f'{ci}_low']:.3f}, {row[f'{ci}_high']:.3f}]"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f} %"


def _point_label(row: dict, cols: list[str]) -> str:
    shown = non_default({k: row[k] for k in cols if k in _AXES or k == "plan_slack"})
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "default"


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


def _below_one(row: dict, q: str) -> bool:
    high = row.get(f"{q}_ratio_ci_high")
    return high is not None and high < 1.0


def where_they_lose(result: OursResult) -> list[str]:
    """One computed sentence per scheduler: at how many points its mean-ratio CI lies below 1
    on both metrics, and the points (with the ratio) where it does not."""
    out = []
    cols = point_columns(result.points.columns)
    for name in result.names:
        rows = list(result.points.filter(pl.col("scheduler") == name).iter_rows(named=True))
        good = [r for r in rows if _below_one(r, "jct") and _below_one(r, "cost")]
        bad = []
        for r in rows:
            lost = [f"{label} {_ci(r, q, 'mean')}" for q, label in (("jct", "avg JCT"),
                                                                     ("cost", "cost"))
                    if not _below_one(r, q)]
            if lost:
                bad.append(f"{_point_label(r, cols)} ({'; '.join(lost)})")
        text = (f"`{name}`: mean-ratio CI below 1 on both avg JCT and cost at {len(good)} of "
                f"{len(rows)} points")
        out.append(text + (f"; not at: {', '.join(bad)}." if bad else "."))
    return out


#: The scheduler whose losses :func:`loss_causes` measures, against :data:`BASELINE`.
PLANNER = "spt_plan"
#: The two metrics of issue 13's criterion: (ratio prefix, label).
METRICS_OF_CRITERION = (("jct", "avg JCT"), ("cost", "cost"))
#: Per-job measures of :func:`loss_causes`, with their table headers.
CAUSE_COLUMNS = (("jobs", "jobs"), ("topologies", "topologies"),
                 ("gpu_share_mean", "mean GPUs at start ÷ K*"), ("below_half", "< ½·K*"),
                 ("at_kstar", "at K*"), ("wait_h_mean", "mean wait h"),
                 ("jct_h_mean", "mean JCT h"), ("cost_mean", "mean cost per job $"))


def loss_points(result: OursResult, scheduler: str = PLANNER) -> pl.DataFrame:
    """The rows of ``result.points`` of ``scheduler`` whose mean-ratio CI is not below 1 on avg
    JCT or on cost, with ``lost`` naming the metrics (``avg JCT``, ``cost``)."""
    rows = result.points.filter(pl.col("scheduler") == scheduler)
    lost = [", ".join(label for q, label in METRICS_OF_CRITERION if not _below_one(r, q))
            for r in rows.iter_rows(named=True)]
    return rows.with_columns(pl.Series("lost", lost, dtype=pl.String)).filter(
        pl.col("lost") != "")


def nearest_one(result: OursResult, scheduler: str = PLANNER) -> tuple[dict, str] | None:
    """The row of ``result.points`` of ``scheduler`` whose mean-ratio CI comes nearest 1 (the
    largest upper bound over both metrics), and that metric's label; None without a row."""
    rows = [(r[f"{q}_ratio_ci_high"], r, label)
            for r in result.points.filter(pl.col("scheduler") == scheduler).iter_rows(named=True)
            for q, label in METRICS_OF_CRITERION if r[f"{q}_ratio_ci_high"] is not None]
    if not rows:
        return None
    _, row, label = max(rows, key=lambda x: x[0])
    return row, label


def _statuses(result: OursResult, scheduler: str) -> dict[str, str]:
    """Point label -> why :func:`loss_causes` reads it: each point whose CI is not below 1 or,
    if none, the one nearest 1; then the default point for contrast."""
    cols = point_columns(result.points.columns)
    out = {_point_label(r, cols): f"{r['lost']} not below 1"
           for r in loss_points(result, scheduler).iter_rows(named=True)}
    if not out and (near := nearest_one(result, scheduler)) is not None:
        out[_point_label(near[0], cols)] = f"nearest 1: {near[1]}"
    if out:
        out.setdefault("default", "below 1 on both")
    return out


def loss_causes(result: OursResult, jobs: pl.LazyFrame | None,
                scheduler: str = PLANNER) -> pl.DataFrame:
    """The mechanism where ``scheduler`` loses: per point whose mean-ratio CI is not below 1 on
    avg JCT or cost (:func:`loss_points`; if there is none, the point whose CI comes nearest 1,
    :func:`nearest_one`), and at the default point for contrast, the per-job rows of
    ``scheduler`` and of :data:`BASELINE` on that very point (``save_jobs=true``) as
    :data:`CAUSE_COLUMNS`.

    Returns one row per (point, scheduler), default point first: ``label`` (as the table's point
    column), ``status`` (why the point is read), ``scheduler`` and :data:`CAUSE_COLUMNS`; empty
    without per-job rows there.
    """
    status = _statuses(result, scheduler)
    rows = result.points.filter(pl.col("scheduler") == scheduler)
    cols = point_columns(rows.columns)
    labels = [_point_label(r, cols) for r in rows.iter_rows(named=True)]
    keep = sorted((i for i, label in enumerate(labels) if label in status),
                  key=lambda i: labels[i] != "default")
    if jobs is None or not keep:
        return pl.DataFrame()
    names = jobs.collect_schema().names()
    keys = [c for c in cols if c in names]
    chosen = rows[keep].select(keys).with_columns(
        pl.Series("label", [labels[i] for i in keep], dtype=pl.String),
        pl.Series("status", [status[labels[i]] for i in keep], dtype=pl.String),
        pl.Series("_order", range(len(keep)), dtype=pl.Int64))
    mine = (jobs.filter(pl.col("scheduler").is_in([BASELINE, scheduler]))
            .join(chosen.lazy(), on=keys, how="inner", nulls_equal=True).collect())
    if mine.is_empty():
        return pl.DataFrame()
    share = pl.col("gpus") / pl.col("k_star")
    table = mine.group_by("_order", "label", "status", "scheduler").agg(
        pl.len().alias("jobs"), pl.col("topology").n_unique().alias("topologies"),
        share.mean().alias("gpu_share_mean"), (share < 0.5).mean().alias("below_half"),
        (share >= 1.0).mean().alias("at_kstar"), pl.col("wait_h").mean().alias("wait_h_mean"),
        pl.col("jct_h").mean().alias("jct_h_mean"), pl.col("cost").mean().alias("cost_mean"))
    return (table.sort("_order", pl.col("scheduler") != BASELINE)
            .select("label", "status", "scheduler", *(c for c, _ in CAUSE_COLUMNS)))


def causes_markdown(result: OursResult, causes: pl.DataFrame,
                    scheduler: str = PLANNER) -> list[str]:
    """The subsection of :func:`loss_causes`: the points where ``scheduler``'s mean-ratio CI is
    not below 1 (with the ratios), or the point where it comes nearest 1, then the per-job
    table."""
    md = [f"### Where `{scheduler}`'s CI is not below 1, and why", ""]
    near = nearest_one(result, scheduler)
    if near is None:
        return md + [f"Not run: no `{scheduler}` in the results.", ""]
    losing = loss_points(result, scheduler)
    cols = point_columns(result.points.columns)

    def shown(r: dict, lost: list[str]) -> str:
        ratios = "; ".join(f"{label} {_ci(r, q, 'mean')}" for q, label in METRICS_OF_CRITERION
                           if label in lost)
        return f"{_point_label(r, cols)}: {ratios} (n = {r['n_pairs']})"

    if losing.is_empty():
        md += [f"At every point above, `{scheduler}`'s mean-ratio CI lies below 1 on both avg "
               f"JCT and cost. It comes nearest 1 at {shown(near[0], [near[1]])}.", ""]
    else:
        md += [f"Points where `{scheduler}`'s mean-ratio CI is not below 1 (the metric, its mean "
               "ratio [95 % CI], topologies):", ""]
        md += [f"- {shown(r, r['lost'].split(', '))}" for r in losing.iter_rows(named=True)]
        md.append("")
    if causes.is_empty():
        return md + [f"No per-job rows at those points: run `{STUDY_COMMAND}` (it keeps them, "
                     "`save_jobs`).", ""]
    md += [f"The mechanism there, from the per-job rows of that very point (`save_jobs`): "
           f"`{BASELINE}` beside `{scheduler}`, with the default point for contrast; GPUs a job "
           "starts on ÷ its K*, its wait (start − arrival), its JCT and its cost, over every job "
           "of every topology.", ""]
    head = ["point", "mean-ratio CI", "scheduler", *(h for _, h in CAUSE_COLUMNS)]
    md += [_row(head), _row(["---", "---", "---", *(["---:"] * len(CAUSE_COLUMNS))])]
    for r in causes.iter_rows(named=True):
        md.append(_row([r["label"], r["status"], f"`{r['scheduler']}`", str(r["jobs"]),
                        str(r["topologies"]), f"{r['gpu_share_mean']:.3f}",
                        _pct1(r["below_half"]), _pct1(r["at_kstar"]), f"{r['wait_h_mean']:.2f}",
                        f"{r['jct_h_mean']:.1f}", f"{r['cost_mean']:.2f}"]))
    return md + [""]


def _pct1(x: float) -> str:
    return f"{100 * x:.1f} %"


def ours_markdown(result: OursResult | None, figure: str | None = None,
                  causes: pl.DataFrame | None = None) -> list[str]:
    """The role-``ours`` section of ``reproduction.md``; ``figure``: the path of
    :func:`plot_plane`'s PNG relative to the document, shown after the slack table; ``causes``:
    :func:`loss_causes`, shown (with :func:`causes_markdown`) before the slack table."""
    md = ["## Our schedulers (SPEC §14, role `ours`) against BACE-Pipe", ""]
    if result is None:
        return md + ["Not run: no scheduler of role `ours` beside `bace_pipe` in the results "
                     f"(run `{STUDY_COMMAND}`).", ""]
    md += [f"Scenario `{result.scenario}`, start rule `{result.start_rule}` (ours ignore it; "
           f"BACE-Pipe follows it). Paired per-topology ratios value / value of `{BASELINE}` on "
           "the same topology: geometric mean (headline) and arithmetic mean, each with its "
           "95 % percentile-bootstrap CI; per topology, *wins both* = faster and cheaper at "
           f"once. Sweep: `{STUDY_COMMAND}`.", ""]
    cols = point_columns(result.points.columns)
    header = ["point", "scheduler", "n", "avg JCT gmean [CI]", "avg JCT mean [CI]",
              "cost gmean [CI]", "cost mean [CI]", *OUTCOMES]
    md += [_row(header), _row(["---", "---", *(["---:"] * (len(header) - 2))])]
    for r in result.points.iter_rows(named=True):
        md.append(_row([_point_label(r, cols), f"`{r['scheduler']}`", str(r["n_pairs"]),
                        _ci(r, "jct", "gmean"), _ci(r, "jct", "mean"), _ci(r, "cost", "gmean"),
                        _ci(r, "cost", "mean"), *(_pct(r.get(o)) for o in OUTCOMES)]))
    md += ["", "### Where they lose", ""]
    md += [f"- {s}" for s in where_they_lose(result)]
    if not result.outcomes.is_empty():
        md += ["", "Per topology at the default point: how often each outcome occurs, the median "
               f"ratios there, and `{BASELINE}`'s own schedule on those topologies (its means), "
               "which tells the topologies apart:", ""]
        head = ["scheduler", "outcome", "topologies", "share", "JCT ratio median",
                "cost ratio median", *(f"{BASELINE} {label}" for _, label in TOPOLOGY_METRICS)]
        md += [_row(head), _row(["---", "---", *(["---:"] * (len(head) - 2))])]
        for r in result.outcomes.iter_rows(named=True):
            md.append(_row([f"`{r['scheduler']}`", r["outcome"], str(r["topologies"]),
                            _pct(r["share"]), f"{r['jct_ratio_median']:.3f}",
                            f"{r['cost_ratio_median']:.3f}",
                            *(f"{r[f'base_{m}']:.3g}" if r[f"base_{m}"] is not None else "—"
                              for m, _ in TOPOLOGY_METRICS)]))
    if causes is not None:
        md += ["", *causes_markdown(result, causes)]
    md += ["", "### The slack ε of `spt_plan` (`plan_slack`) at the default point", ""]
    picture = ([f"![JCT–cost plane at the default point ({result.scenario})]({figure})", ""]
               if figure else [])
    if result.curve.height < 2:
        md += [f"Not run: fewer than 2 values of plan_slack (run `{STUDY_COMMAND}`).", ""]
        return md + picture
    md += [_row(["plan_slack", "n", "avg JCT gmean [CI]", "cost gmean [CI]", "wins both"]),
           _row(["---:"] * 5)]
    for r in result.curve.iter_rows(named=True):
        md.append(_row([f"{r.get('plan_slack', AXIS_DEFAULTS['plan_slack'])}", str(r["n_pairs"]),
                        _ci(r, "jct", "gmean"), _ci(r, "cost", "gmean"),
                        _pct(r.get(OUTCOMES[0]))]))
    return md + ["", *picture]
