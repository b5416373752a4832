"""Do the paper's conclusions survive the SPEC §12 extensions? Evaluated per scenario and world.

A *world* is one combination of the SPEC §12 switches (arrivals, latency, memory model, price
profile). The sweep writes each switch that is set as a hive level
(``bacepipe.sweep.store.partition``), so a world is read from the extension keys of the result
rows: all null is the paper's world (SPEC §1-11), the world :mod:`bacepipe.analysis.claims` reads.
The ``realistic`` preset runs all 16 combinations on the ``paper``, ``random`` and ``aws10``
scenarios at the default axes (bandwidth and GPU scale 1.0, 8 jobs).

Two conclusions of the paper are checked, each as paired per-topology ratios with 95 %
percentile-bootstrap CIs exactly as :func:`bacepipe.analysis.summarize` computes them:

- (a) BACE-Pipe ahead of every baseline (lcf, ldf, cr_lcf, cr_ldf): value(baseline) /
  value(bace_pipe) > 1, once for avg JCT and once for total cost;
- (b) the cross-region paradox: avg JCT of CR-LDF and of CR-LCF / avg JCT of LDF > 1.

Verdict of one conclusion in one world (every CI is compared with 1):

- ``holds`` when every scheduler's CI lies above 1;
- ``does not hold: <names> below 1; <names> equal`` when some CI lies entirely below 1, or some
  mean is within 0.1 % of 1 (no effect);
- ``inconclusive: <names> CI includes 1`` when none lies below 1 but some CI includes 1;
- ``not run`` when no scheduler has a paired result (nothing is ever filled in).

With ``unplaceable=record`` (the memory model), a run whose job can never be placed has null
metrics; a ratio then exists only on topologies where both schedulers finished, so such a
scheduler is compared on fewer topologies (its ``n`` is shown), and its null runs are counted.
Several points of one world (the fig4 and fig8 presets both run the paper's world) are never
pooled: each scheduler is read from one point, chosen as in :mod:`bacepipe.analysis.claims`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import polars as pl

from bacepipe.analysis.claims import (
    DEFAULT_AXES,
    NEGLIGIBLE,
    NOT_RUN,
    Estimate,
    best_row,
    estimate_of,
    with_point_sizes,
)
from bacepipe.analysis.roles import BASELINE, BASELINES
from bacepipe.analysis.schema import EXTENSION_KEYS, point_columns
from bacepipe.analysis.stats import paired_ratios, summarize, world_filter
from bacepipe.analysis.world_facts import explain_worlds

SCENARIOS = ("paper", "random", "aws10")
#: Keys that qualify a switch rather than being one (the Poisson rate, the trace file).
QUALIFIERS = ("arrival_rate_per_h", "trace")
HOLDS, FAILS, INCONCLUSIVE = "holds", "does not hold", "inconclusive"


@dataclass(frozen=True)
class Conclusion:
    """One conclusion of the paper: every scheduler's ``metric`` / ``baseline``'s is > 1."""

    key: str
    text: str
    metric: str
    schedulers: tuple[str, ...]
    baseline: str = BASELINE


CONCLUSIONS: tuple[Conclusion, ...] = (
    Conclusion("ahead_jct", "(a) BACE-Pipe ahead of every baseline in avg JCT", "jct",
               BASELINES),
    Conclusion("ahead_cost", "(a) BACE-Pipe ahead of every baseline in cost", "cost", BASELINES),
    Conclusion("paradox", "(b) cross-region paradox: CR-LDF, CR-LCF longer avg JCT than LDF",
               "jct", ("cr_ldf", "cr_lcf"), baseline="ldf"),
)

#: Title of each explanation in the document.
EXPLANATION_TITLES = {
    "none": "The paper's world (no switch)", "arrivals": "Poisson arrivals",
    "latency": "Link latency", "memory_model": "GPU memory model",
    "price_profile": "Time-of-use prices", "all": "Every switch on",
    "aws10": "The measured-WAN scenario aws10",
}


@dataclass(frozen=True)
class WorldResult:
    """One conclusion in one (scenario, world).

    Attributes
    ----------
    estimates : one per scheduler with a paired result, in the conclusion's order.
    topologies : topologies of each estimate's point, same order (``n`` < it: null runs).
    missing : schedulers of the conclusion without a paired result.
    """

    conclusion: Conclusion
    scenario: str
    world: tuple[tuple[str, str], ...]
    verdict: str
    reason: str
    estimates: tuple[Estimate, ...] = ()
    topologies: tuple[int, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class NullCount:
    """Null (unplaceable) runs of one scheduler in one (scenario, world)."""

    scenario: str
    world: tuple[tuple[str, str], ...]
    scheduler: str
    runs: int
    nulls: int


def switches(world: Iterable[tuple[str, str]]) -> list[str]:
    """The switches set in ``world`` (its keys without :data:`QUALIFIERS`)."""
    return [k for k, _ in world if k not in QUALIFIERS]


def world_label(world: Iterable[tuple[str, str]]) -> str:
    """``no switch`` or e.g. ``arrivals=poisson (0.5/h) + latency=geo``."""
    items = dict(world)
    parts = []
    for key in switches(items.items()):
        text = f"{key}={items[key]}"
        if key == "arrivals" and "arrival_rate_per_h" in items:
            text += f" ({items['arrival_rate_per_h']}/h)"
        if key == "arrivals" and "trace" in items:
            text += f" ({items['trace']})"
        parts.append(text)
    return " + ".join(parts) or "no switch"


def verdict_of(conclusion: Conclusion, estimates: Iterable[Estimate]) -> tuple[str, str]:
    """The verdict and a one-line reason for ``conclusion`` given ``estimates`` (non-empty).

    A mean within :data:`~bacepipe.analysis.claims.NEGLIGIBLE` of 1 (e.g. CR-LDF placing as LDF
    on almost every topology) is *equal*: no effect, so the conclusion does not hold for it,
    whatever side of 1 its narrow CI is on.
    """
    ests = list(estimates)
    equal = [e.scheduler for e in ests if abs(e.mean - 1.0) < NEGLIGIBLE]
    above = [e.scheduler for e in ests if e.low > 1.0 and e.scheduler not in equal]
    below = [e.scheduler for e in ests if e.high < 1.0 and e.scheduler not in equal]
    straddle = [e.scheduler for e in ests
                if e.low <= 1.0 <= e.high and e.scheduler not in equal]
    if below or equal:
        named = [f"{', '.join(below)} below 1"] if below else []
        named += [f"{', '.join(equal)} equal (within {NEGLIGIBLE:.1%})"] if equal else []
        verdict = f"{FAILS}: {'; '.join(named)}"
    elif straddle:
        verdict = f"{INCONCLUSIVE}: {', '.join(straddle)} CI includes 1"
    else:
        verdict = HOLDS
    parts = [f"{label}: {', '.join(names)}" for label, names in
             (("CI above 1", above), ("CI includes 1", straddle), ("CI below 1", below),
              ("equal", equal)) if names]
    return verdict, "; ".join(parts) + f" (vs {conclusion.baseline}, n={min(e.n for e in ests)})"


def _worlds(frame: pl.DataFrame) -> list[tuple[tuple[str, str], ...]]:
    """The distinct worlds of ``frame``, fewest switches first, then in SPEC §12 key order."""
    keys = [k for k in EXTENSION_KEYS if k in frame.columns]
    if not keys:
        return [()]
    found = set()
    for row in frame.select(keys).unique().iter_rows(named=True):
        found.add(tuple((k, str(row[k])) for k in keys if row[k] is not None))
    order = {k: i for i, k in enumerate(EXTENSION_KEYS)}
    return sorted(found, key=lambda w: (len(switches(w)),
                                         [order[k] for k in switches(w)], w))


def _at(frame: pl.DataFrame, scenario: str, world: tuple[tuple[str, str], ...]) -> pl.DataFrame:
    return frame.filter((pl.col("scenario") == scenario)
                        & world_filter(frame.columns, dict(world)))


def _default_axes() -> pl.Expr:
    expr = pl.lit(True)
    for key, value in DEFAULT_AXES.items():
        expr = expr & (pl.col(key).cast(pl.Float64) == float(value))
    return expr


def _null_counts(lf: pl.LazyFrame) -> pl.DataFrame:
    """Per point and scheduler: runs (topologies) and null runs (avg JCT null)."""
    point = point_columns(lf.collect_schema().names())
    # paired_ratios drops repeated (point, topology, scheduler) rows, as summarize counts them.
    return (paired_ratios(lf).group_by([*point, "scheduler"])
            .agg(pl.len().cast(pl.Int64).alias("_runs"),
                 pl.col("avg_jct_h").is_null().sum().cast(pl.Int64).alias("_nulls"))
            .collect())


def evaluate_worlds(
    lf: pl.LazyFrame,
    conclusions: Iterable[Conclusion] = CONCLUSIONS,
    scenarios: Iterable[str] = SCENARIOS,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[list[WorldResult], list[NullCount]]:
    """Every conclusion in every (scenario, world) at the default axes.

    Parameters
    ----------
    lf : polars.LazyFrame
        Result rows as made by :func:`bacepipe.analysis.scan_runs`.
    conclusions, scenarios : what to evaluate (defaults :data:`CONCLUSIONS`, :data:`SCENARIOS`).
    n_resamples, seed : bootstrap settings, as :func:`bacepipe.analysis.summarize`.

    Returns
    -------
    (results, nulls)
        ``results``: per scenario (in order), per world (fewest switches first), per conclusion;
        scenarios without results are left out. ``nulls``: per scenario, per world, per
        scheduler (SPEC §7 order), its runs and null runs.
    """
    conclusions, scenarios = list(conclusions), list(scenarios)
    names = lf.collect_schema().names()
    if any(c not in names for c in ("scenario", *DEFAULT_AXES)):
        return [], []
    lf = lf.filter(pl.col("scenario").is_in(scenarios) & _default_axes())
    counts = _null_counts(lf)
    point = point_columns(counts.columns)
    summaries: dict[str, pl.DataFrame] = {}
    # bace_pipe's summary always: it holds every scheduler's null counts.
    for base in dict.fromkeys([BASELINE, *(c.baseline for c in conclusions)]):
        mine = {base, *(s for c in conclusions if c.baseline == base for s in c.schedulers)}
        if base == BASELINE:
            mine |= set(counts["scheduler"].to_list())  # every scheduler, for the null counts
        part = lf.filter(pl.col("scheduler").is_in(sorted(mine)))
        summary = summarize(part, n_resamples=n_resamples, seed=seed, baseline=base)
        summary = summary.join(counts, on=[*point, "scheduler"], how="left", nulls_equal=True)
        summaries[base] = with_point_sizes(summary)
    results: list[WorldResult] = []
    nulls: list[NullCount] = []
    main = summaries[BASELINE]
    present = set(main["scenario"].to_list())
    for scenario in (s for s in scenarios if s in present):
        for world in _worlds(main.filter(pl.col("scenario") == scenario)):
            for c in conclusions:
                results.append(_evaluate_one(c, scenario, world,
                                             _at(summaries[c.baseline], scenario, world)))
            nulls += _nulls_here(scenario, world, _at(main, scenario, world))
    return results, nulls


def _evaluate_one(c: Conclusion, scenario: str, world: tuple[tuple[str, str], ...],
                  here: pl.DataFrame) -> WorldResult:
    rows = [(name, best_row(here, name, c.metric)) for name in c.schedulers]
    found = [(estimate_of(r, c.metric), int(r["n_topologies"])) for _, r in rows if r]
    missing = tuple(name for name, r in rows if r is None)
    if not found:
        reason = f"no paired result for {', '.join(missing)} against {c.baseline}"
        return WorldResult(c, scenario, world, NOT_RUN, reason, missing=missing)
    ests, tops = zip(*found, strict=True)
    verdict, reason = verdict_of(c, ests)
    if missing:
        reason = f"missing: {', '.join(missing)}; {reason}"
    return WorldResult(c, scenario, world, verdict, reason, ests, tops, missing)


def _nulls_here(scenario: str, world: tuple[tuple[str, str], ...],
                here: pl.DataFrame) -> list[NullCount]:
    out = []
    for name in dict.fromkeys(here["scheduler"].to_list()):
        row = best_row(here, name, "jct")
        if row is None:  # no ratio at all (e.g. every run null): the point with the most runs
            cols = point_columns(here.columns)
            rows = here.filter(pl.col("scheduler") == name)
            row = rows.sort([pl.col("_runs"), *cols],
                            descending=[True, *([False] * len(cols))], nulls_last=True).row(
                0, named=True)
        out.append(NullCount(scenario, world, name, int(row["_runs"] or 0),
                             int(row["_nulls"] or 0)))
    return out


def verdict_counts(results: Iterable[WorldResult]) -> dict[str, dict[str, int]]:
    """scenario -> verdict kind (``holds``, ``does not hold``, ...) -> count."""
    counts: dict[str, dict[str, int]] = {}
    for r in results:
        kind = r.verdict.split(":", 1)[0]
        per = counts.setdefault(r.scenario, {})
        per[kind] = per.get(kind, 0) + 1
    return counts


# --------------------------------------------------------------------------- markdown


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(r: WorldResult) -> str:
    if not r.estimates:
        return "—"
    parts = []
    for e, n in zip(r.estimates, r.topologies, strict=True):
        extra = f" (n={e.n} of {n})" if e.n < n else ""
        parts.append(f"{e.scheduler} {e.text()}{extra}")
    return "<br>".join(parts + [f"{m} —" for m in r.missing])


def _table(results: list[WorldResult], worlds: list) -> list[str]:
    by = {(r.world, r.conclusion.key): r for r in results}
    keys = list(dict.fromkeys(r.conclusion.key for r in results))
    heads = {"ahead_jct": ("(a) avg JCT ÷ BACE-Pipe's", "(a) JCT"),
             "ahead_cost": ("(a) cost ÷ BACE-Pipe's", "(a) cost"),
             "paradox": ("(b) avg JCT ÷ LDF's", "(b) paradox")}
    header = ["world", "topologies"]
    for k in keys:
        ratio, verdict = heads.get(k, (k, k))
        header += [f"{ratio} [95 % CI]", verdict]
    md = [_row(header), _row(["---"] * len(header))]
    for w in worlds:
        rows = [by.get((w, k)) for k in keys]
        n = max((t for r in rows if r for t in r.topologies), default=0)
        cells = [world_label(w), str(n) if n else "—"]
        for r in rows:
            cells += [_cell(r), f"**{r.verdict}**"] if r else ["—", f"**{NOT_RUN}**"]
        md.append(_row(cells))
    return md


def _main_worlds(worlds: list) -> list:
    """No switch, each single switch, and the worlds with the most switches (if 2 or more)."""
    most = max((len(switches(w)) for w in worlds), default=0)
    return [w for w in worlds if len(switches(w)) <= 1 or len(switches(w)) == most]


def worlds_markdown(results: list[WorldResult], nulls: list[NullCount],
                    explanations: Mapping[str, str] | None = None) -> list[str]:
    """The section of ``reproduction.md`` on the paper's conclusions in the SPEC §12 worlds.

    ``explanations``: :func:`bacepipe.analysis.world_facts.explain_worlds` of the facts of the
    rows read (reproduce passes them); None keeps only the sentences without a number."""
    if explanations is None:
        explanations = explain_worlds({})
    md = ["## Beyond the paper: do its conclusions hold in other worlds? (SPEC §12)", "",
          "Run by `python -m bacepipe.sweep -m +preset=realistic`: every combination of Poisson "
          "arrivals (`arrivals=poisson`, rate in parentheses), geographic link latency "
          "(`latency=geo`), the GPU memory model (`memory_model=adam_mixed`) and time-of-use "
          "prices (`price_profile=business`), on the paper, random and aws10 (measured AWS WAN) "
          "scenarios, at bandwidth and GPU scale 1.0 with 8 jobs. *No switch* is the paper's "
          "world, the same results the claims above read (aws10 then keeps its measured "
          "latency; `latency=geo` replaces it with the great-circle model). Conclusions: (a) "
          "every baseline's avg JCT, and cost, ÷ BACE-Pipe's on the same topology > 1; (b) the "
          "cross-region paradox, CR-LDF's and CR-LCF's avg JCT ÷ LDF's > 1. Cells: mean of the "
          "paired per-topology ratios [95 % percentile-bootstrap CI]. Verdicts: **holds** (every "
          "CI above 1), **does not hold** (the schedulers named have a CI below 1, or are "
          "*equal*: mean within 0.1 % of 1, no effect), **inconclusive** (none below 1, the "
          "named CIs include 1), **not run**. A scheduler "
          "with unplaceable runs (null metrics, memory model only) is compared on the "
          "topologies where both it and the reference scheduler finished: *n of N* says so.", ""]
    if not results:
        return md + ["No results at the default axes: nothing to show.", ""]
    counts = verdict_counts(results)
    scenarios = list(dict.fromkeys(r.scenario for r in results))
    kinds = [HOLDS, INCONCLUSIVE, FAILS, NOT_RUN]
    md += [f"Verdicts over every world and the three conclusions ({', '.join(scenarios)}):", "",
           _row(["verdict", *scenarios]), _row(["---"] + ["---:"] * len(scenarios))]
    md += [_row([k, *(str(counts.get(s, {}).get(k, 0)) for s in scenarios)]) for k in kinds]
    md.append("")
    for scenario in scenarios:
        mine = [r for r in results if r.scenario == scenario]
        worlds = list(dict.fromkeys(r.world for r in mine))
        main = _main_worlds(worlds)
        md += [f"### scenario = {scenario}", "", *_table(mine, main), ""]
        if len(worlds) > len(main):
            md += ["<details>", f"<summary>All {len(worlds)} worlds, scenario = {scenario}, "
                   "with the reasons</summary>", "", *_table(mine, worlds), ""]
            md += [_row(["world", "conclusion", "reason"]), _row(["---"] * 3)]
            md += [_row([world_label(r.world), r.conclusion.key, r.reason]) for r in mine]
            md += ["", "</details>", ""]
    md += _nulls_markdown(nulls)
    md += ["### Why", "",
           "Words human-written (`TEMPLATES` in `bacepipe/analysis/world_facts.py`); every "
           "number computed, from the model on the shipped data or, where it says *measured "
           "here*, from the rows this section reads (per-job values need `save_jobs=true`). A "
           "sentence whose rows are absent is left out.", ""]
    for key, text in explanations.items():
        title = EXPLANATION_TITLES.get(key, key)
        md += [f"*{title} (`TEMPLATES[\"{key}\"]`):* {text}", ""]
    return md


def _nulls_markdown(nulls: list[NullCount]) -> list[str]:
    md = ["### Unplaceable runs (memory model on)", ""]
    mem = [c for c in nulls if "memory_model" in dict(c.world)]
    if not mem:
        return md + ["No world with the memory model in the results.", ""]
    total, all_runs = sum(c.nulls for c in mem), sum(c.runs for c in mem)
    points = len({(c.scenario, c.world) for c in mem})
    if not total:
        return md + [f"No run was unplaceable: 0 null runs of {all_runs:,} (every scheduler, "
                     f"{points} scenario × world points with the memory model).", ""]
    names = list(dict.fromkeys(c.scheduler for c in mem))
    md += ["Runs recorded as null (`unplaceable=record`: some job can never be placed) per "
           "scheduler, of the topologies of the world's point.", "",
           _row(["scenario", "world", "topologies", *names]),
           _row(["---", "---", *["---:"] * (len(names) + 1)])]
    by = {(c.scenario, c.world, c.scheduler): c for c in mem}
    for scenario, world in dict.fromkeys((c.scenario, c.world) for c in mem):
        here = [by.get((scenario, world, n)) for n in names]
        runs = max(c.runs for c in here if c)
        md.append(_row([scenario, world_label(world), str(runs),
                        *(str(c.nulls) if c else "—" for c in here)]))
    md += ["", f"{total:,} null runs of {all_runs:,} in all.", ""]
    return md
