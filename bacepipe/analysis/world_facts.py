"""The explanations of the SPEC §12 worlds (:mod:`bacepipe.analysis.worlds`), with every number
computed: from the model on the shipped data (:func:`model_world_facts`), or measured on the
result rows the section reads (:func:`measured_facts`: the ``runs/`` rows, and the per-job rows
of ``save_jobs=true`` where a sentence needs them).

Each explanation is a sequence of sentence templates; a ``{name}`` is a fact. A sentence is kept
only when every fact it names was computed (:func:`explain_worlds`), so a sentence whose world,
scenario or scheduler is absent from the results is dropped, never filled with an old number
(a test finds no number typed into a template). Measured facts read the default axes
(bandwidth and GPU scale 1.0, 8 jobs), the ``greedy`` start rule and one GPU type; a world is
the set of SPEC §12 switches that are on (every other switch off); per (scenario, world,
scheduler) the point with the most topologies is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import polars as pl

from bacepipe.analysis.claims import DEFAULT_AXES, NEGLIGIBLE, model_filter
from bacepipe.analysis.roles import BASELINE, BASELINES
from bacepipe.analysis.schema import SWITCH_LEVELS as SWITCHES

#: Sentence templates per explanation key (``none``: the paper's world, ``all``: every switch,
#: ``aws10``: the measured-WAN scenario). Change the words here, by hand, when an analysis
#: justifies it; numbers only as ``{facts}``.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "none": (
        "The paper's world: the same results as the claims of Fig. 4 and the cross-region "
        "paradox above, with the same explanations (`EXPLANATIONS[\"fig4\"]` and "
        "`EXPLANATIONS[\"paradox\"]` in `bacepipe/analysis/claims.py`).",),
    "arrivals": (
        "Jobs arrive {arr_gap_h} h apart on average (λ = {arr_rate}/h) and run for days, so "
        "the cluster is rarely full when one arrives.",
        "Without the memory model a job waits only when no GPU is free (SPEC §5: any placement "
        "of one or more GPUs starts), so BACE-Pipe's priority can reorder only the jobs that "
        "queue.",
        "Measured here, {arr_start_paper} % of BACE-Pipe's jobs on the paper scenario and "
        "{arr_start_random} % on random start the moment they arrive.",
        "When no hop binds, every cross-region policy gives an arriving job min(K*, free GPUs) "
        "(see the ablation explanation above), so BACE-Pipe, CR-LDF and CR-LCF mostly place "
        "alike.",
        "Measured here, CR-LDF's avg JCT is within {negligible_pct} % of BACE-Pipe's on "
        "{arr_eq_paper} % of paper and {arr_eq_random} % of random topologies "
        "({none_eq_paper} % and {none_eq_random} % in the paper's world).",
        "Why single-region LDF stays ahead of BACE-Pipe on the paper topology is not yet "
        "analysed."),
    "latency": (
        "A hop's latency is paid once per pipeline fill (SPEC §12): at most {lat_max_ms} ms "
        "(half the Earth's circumference at {geo_km_per_ms} km per ms) against jobs of hours to "
        "weeks, and neither admission nor placement looks at latency.",
        "Measured here: BACE-Pipe's mean GPUs per job moves by at most {lat_gpus_diff} and its "
        "multi-region share by at most {lat_multi_diff} percentage points over the scenarios, "
        "its mean execution time (avg JCT − mean wait) by at most {lat_exec_pct} %, and no mean "
        "ratio of the tables by more than {lat_ratio_move} against the world without latency.",
        "On aws10, `latency=geo` only replaces the measured latencies by modelled ones."),
    "memory_model": (
        "In the paper's world a job may start on any remnant of one or more GPUs and keeps it "
        "to the end (SPEC §5).",
        "The memory model forbids placements below m_j GPUs ({m_lo}–{m_hi} for Table III at "
        "{mem_gb} GB), so such a job waits for more GPUs instead of running for weeks on a "
        "remnant; ordering then decides who waits.",
        "Measured here on the paper scenario (paper's world → memory model): mean wait "
        "{mem_wait_bace} h under BACE-Pipe and {mem_wait_crldf} h under CR-LDF, mean avg JCT "
        "{mem_jct_bace} h and {mem_jct_crldf} h.",
        "LDF's smallest placement on the paper topology is {ldf_min_gpus} GPUs (measured, "
        "paper's world), against m_j ≤ {m_hi}.",
        "The paradox rests on cross-region remnants (see its explanation above), which the "
        "memory model forbids.",
        "Single-region policies can wait forever: LDF when no region has m_j GPUs, LCF when a "
        "big job is tried while the cheapest region with a free GPU is too small and stays so "
        "until nothing else runs; measured here on random, {mem_ldf_nulls} of LDF's and "
        "{mem_lcf_nulls} of LCF's {mem_runs} runs are null (counted below)."),
    "price_profile": (
        "Prices follow each region's local hour (×{tou_min} at night to ×{tou_max} in the "
        "evening, daily mean {tou_mean}).",
        "Placement uses the price at the decision time (SPEC §10a) while cost integrates it "
        "over a run of days, so a snapshot can misrank regions.",
        "In the batch world every job arrives at t = 0 UTC, when on the paper topology "
        "{tou_first} (local {tou_first_hour}, {tou_first_mult} × {tou_first_base} = "
        "{tou_first_price} $/kWh) is the cheapest region and {tou_avg} ({tou_avg_hour}, "
        "{tou_avg_mult} × {tou_avg_base} = {tou_avg_price}) only number {tou_avg_rank}, though "
        "it is the cheapest on average.",
        "Measured here on the paper scenario: the share of BACE-Pipe's GPU-hours on paths "
        "starting in {tou_avg} goes from {tou_share_avg_none} % to {tou_share_avg} % and in "
        "{tou_first} from {tou_share_first_none} % to {tou_share_first} %.",
        "Measured here on the paper scenario: BACE-Pipe's mean cost changes by {tou_cost_bace} "
        "% and LDF's, which ignores prices, by {tou_cost_ldf} %, BACE-Pipe's mean avg JCT by "
        "{tou_jct_bace} %.",
        "Why LCF's avg JCT changes (its region order changes how the jobs fit) and the random "
        "and aws10 results are not yet analysed further."),
    "all": (
        "Measured here: with every switch on, no mean ratio of the tables differs by more than "
        "{all_ratio_move} from arrivals + memory model + prices.",
        "The verdicts follow the arrivals and the memory model for avg JCT and the paradox, and "
        "the price profile for cost (see those explanations)."),
    "aws10": (
        "The measured AWS links carry {aws_links_lo}–{aws_links_hi} Gbit/s, against the "
        "{bstar_lo}–{bstar_hi} Gbit/s that Table III jobs need at K* (see Fig. 5's "
        "explanation), so only short pipelines may cross a hop.",
        "Measured here in the paper's world: {aws_multi_crldf} % of CR-LDF's and "
        "{aws_multi_bace} % of BACE-Pipe's jobs use more than one region, and CR-LDF's avg JCT "
        "is within {negligible_pct} % of LDF's on {aws_eq} % of topologies.",
        "The largest mean wait of a run under BACE-Pipe and the four baselines is "
        "{aws_max_wait} h, so GPU counts, not waiting, decide the results.",
        "BACE-Pipe's priority places the long jobs last (as on the paper topology, see Fig. 4): "
        "measured here, {aws_long_job} gets {aws_long_bace} GPUs on average under BACE-Pipe and "
        "{aws_long_ldf} under LDF (K* = {aws_long_kstar}), and its mean JCT is "
        "{aws_long_jct_bace} h against {aws_long_jct_ldf} h."),
}

_FACT = re.compile(r"\{([a-z_0-9]+)\}")


def explain_worlds(facts: Mapping[str, str],
                   templates: Mapping[str, Iterable[str]] | None = None) -> dict[str, str]:
    """Each explanation with its facts filled in; a sentence naming a fact not in ``facts`` is
    dropped (an explanation left with none says so). ``negligible_pct`` (the claims' "no
    effect" threshold, in %) is always given."""
    facts = {"negligible_pct": f"{100 * NEGLIGIBLE:g}", **facts}
    out = {}
    for key, sentences in (templates or TEMPLATES).items():
        kept = [s.format_map(facts) for s in sentences
                if all(name in facts for name in _FACT.findall(s))]
        out[key] = " ".join(kept) or "No computed explanation: the results lack this world."
    return out


# --------------------------------------------------------------------------- model facts


def model_world_facts() -> dict[str, str]:
    """Facts of the model on the shipped data: the memory minimum of Table III, the time-of-use
    profile and the paper topology's prices at t = 0, the geo latency bound, the aws10 links
    and b_j(K*) (:func:`bacepipe.analysis.model_facts.model_facts`)."""
    from bacepipe.analysis.model_facts import model_facts
    from bacepipe.model.generate import generate_batch, load_scenario
    from bacepipe.model.hardware import Hardware
    from bacepipe.model.scenario import EARTH_RADIUS_KM, GEO_MS_PER_KM

    base = model_facts()
    mem_gb = Hardware().gpu_mem_gb
    paper = load_scenario("paper")
    m = [math.ceil(16 * j.params_b * 1e9 / (0.9 * mem_gb * 1e9)) for j in paper.jobs]
    regions = generate_batch("paper", 0, [0], price_profile="business").scenario(0).regions
    profile = regions[0].price_profile

    def at_zero(r) -> tuple[int, float]:
        hour = int(math.floor(r.utc_offset_h)) % 24
        return hour, r.price_profile[hour]

    now = sorted(regions, key=lambda r: r.price * at_zero(r)[1])
    cheapest_avg = min(regions, key=lambda r: r.price)
    first = now[0]
    aws = load_scenario("aws10")
    links = [b for row in aws.links_gbps for b in row if b > 0]
    facts = {
        "m_lo": str(min(m)), "m_hi": str(max(m)), "mem_gb": f"{mem_gb:g}",
        "tou_min": f"{min(profile):g}", "tou_max": f"{max(profile):g}",
        "tou_mean": f"{sum(profile) / len(profile):.3g}",
        "geo_km_per_ms": f"{1 / GEO_MS_PER_KM:g}",
        "lat_max_ms": f"{math.pi * EARTH_RADIUS_KM * GEO_MS_PER_KM:.0f}",
        "aws_links_lo": f"{min(links):.2f}", "aws_links_hi": f"{max(links):.2f}",
        "bstar_lo": base["bstar_lo"], "bstar_hi": base["bstar_hi"],
    }
    for tag, r in (("first", first), ("avg", cheapest_avg)):
        hour, mult = at_zero(r)
        facts |= {f"tou_{tag}": r.name, f"tou_{tag}_hour": f"{hour:02d}:00",
                  f"tou_{tag}_mult": f"{mult:g}", f"tou_{tag}_base": f"{r.price:g}",
                  f"tou_{tag}_price": f"{mult * r.price:.3f}"}
    facts["tou_avg_rank"] = str(now.index(cheapest_avg) + 1)
    return facts


# --------------------------------------------------------------------------- measured facts


def _world(names: list[str], on: Iterable[str]) -> pl.Expr:
    on = set(on)
    expr = pl.lit(True)
    for key in SWITCHES:
        if key in on:
            expr = expr & (pl.col(key).is_not_null() if key in names else pl.lit(False))
        elif key in names:
            expr = expr & pl.col(key).is_null()
    return expr


def _rows(frame: pl.LazyFrame, scenario: str, on: Iterable[str]) -> pl.DataFrame:
    """Rows of (scenario, world) at the default axes, greedy, one GPU type; per scheduler the
    point with the most rows."""
    names = frame.collect_schema().names()
    if "scenario" not in names or any(k not in names for k in DEFAULT_AXES):
        return pl.DataFrame()
    where = (pl.col("scenario") == scenario) & _world(names, on) & model_filter()
    for key, value in DEFAULT_AXES.items():
        where = where & (pl.col(key).cast(pl.Float64) == float(value))
    rows = frame.filter(where).collect()
    if rows.is_empty():
        return rows
    best = (rows.group_by("scheduler", "point").len().sort(["len", "point"],
                                                          descending=[True, False])
            .unique("scheduler", keep="first"))
    return rows.join(best.select("scheduler", "point"), on=["scheduler", "point"], how="semi")


def _per_topology(rows: pl.DataFrame, metric: str) -> pl.DataFrame:
    return rows.pivot("scheduler", index="topology", values=metric, aggregate_function="first")


def _share_equal(rows: pl.DataFrame, a: str, b: str) -> str | None:
    if rows.is_empty():
        return None
    p = _per_topology(rows, "avg_jct_h")
    if a not in p.columns or b not in p.columns:
        return None
    r = (p[a] / p[b]).drop_nulls()
    return None if r.is_empty() else f"{100 * ((r - 1).abs() < NEGLIGIBLE).mean():.1f}"


def _ratio_means(rows: pl.DataFrame) -> dict[tuple[str, str, str], float]:
    """Mean paired ratio per (metric, scheduler) of the worlds tables: baselines ÷ BACE-Pipe on
    avg JCT and cost, CR-LDF and CR-LCF ÷ LDF on avg JCT."""
    out = {}
    if rows.is_empty():
        return out
    for metric, col in (("jct", "avg_jct_h"), ("cost", "total_cost")):
        p = _per_topology(rows, col)
        pairs = [(s, BASELINE) for s in BASELINES]
        if metric == "jct":
            pairs += [("cr_ldf", "ldf"), ("cr_lcf", "ldf")]
        for s, base in pairs:
            if s in p.columns and base in p.columns:
                r = (p[s] / p[base]).drop_nulls()
                if not r.is_empty():
                    out[(metric, s, base)] = float(r.mean())
    return out


def _max_move(a: pl.DataFrame, b: pl.DataFrame) -> str | None:
    ma, mb = _ratio_means(a), _ratio_means(b)
    common = [k for k in ma if k in mb]
    return f"{max(abs(ma[k] - mb[k]) for k in common):.3f}" if common else None


def _mean(rows: pl.DataFrame, scheduler: str, col: str) -> float | None:
    if rows.is_empty():
        return None
    v = rows.filter(pl.col("scheduler") == scheduler)[col].drop_nulls()
    return None if v.is_empty() else float(v.mean())


def _change(a: float | None, b: float | None) -> str | None:
    return None if a is None or b is None or a == 0 else f"{100 * (b / a - 1):+.1f}"


def _from_to(a: float | None, b: float | None, digits: int) -> str | None:
    return None if a is None or b is None else f"{a:.{digits}f} → {b:.{digits}f}"


def measured_facts(lf: pl.LazyFrame, jobs: pl.LazyFrame | None = None) -> dict[str, str]:
    """The facts the explanations call *measured*, from the rows read; a fact whose rows are
    absent is left out (its sentence is dropped by :func:`explain_worlds`)."""
    f: dict[str, str | None] = {}
    none = {s: _rows(lf, s, ()) for s in ("paper", "random", "aws10")}
    arr = {s: _rows(lf, s, ("arrivals",)) for s in ("paper", "random")}
    lat = {s: _rows(lf, s, ("latency",)) for s in ("paper", "random", "aws10")}
    mem = {s: _rows(lf, s, ("memory_model",)) for s in ("paper", "random")}
    price = _rows(lf, "paper", ("price_profile",))
    for s in ("paper", "random"):
        f[f"arr_eq_{s}"] = _share_equal(arr[s], "cr_ldf", BASELINE)
        f[f"none_eq_{s}"] = _share_equal(none[s], "cr_ldf", BASELINE)
    rates = [r for s in arr.values() if "arrival_rate_per_h" in s.columns
             for r in s["arrival_rate_per_h"].drop_nulls().unique().to_list()]
    if len(rates) == 1:
        rate = float(rates[0])
        f["arr_rate"], f["arr_gap_h"] = f"{rate:g}", f"{1 / rate:g}"
    # Latency against the world without it, over the scenarios that have both.
    both = [s for s in lat if not lat[s].is_empty() and not none[s].is_empty()]
    if both:
        def moved(col: str, scale: float = 1.0) -> float | None:
            d = [abs(_mean(lat[s], BASELINE, col) - _mean(none[s], BASELINE, col)) * scale
                 for s in both if _mean(lat[s], BASELINE, col) is not None
                 and _mean(none[s], BASELINE, col) is not None]
            return max(d) if d else None

        gpus, multi = moved("mean_gpus"), moved("multi_region_share", 100.0)
        f["lat_gpus_diff"] = None if gpus is None else f"{gpus:.3g}"
        f["lat_multi_diff"] = None if multi is None else f"{multi:.3g}"
        exe = []
        for s in both:
            a = none[s].filter(pl.col("scheduler") == BASELINE)
            b = lat[s].filter(pl.col("scheduler") == BASELINE)
            if not a.is_empty() and not b.is_empty():
                ea = (a["avg_jct_h"] - a["mean_wait_h"]).mean()
                eb = (b["avg_jct_h"] - b["mean_wait_h"]).mean()
                exe.append(abs(100 * (eb / ea - 1)))
        f["lat_exec_pct"] = f"{max(exe):.2g}" if exe else None
        movesl = [m for s in both if (m := _max_move(lat[s], none[s])) is not None]
        f["lat_ratio_move"] = max(movesl, key=float) if movesl else None
    p0, p1 = none["paper"], mem["paper"]
    f["mem_wait_bace"] = _from_to(_mean(p0, BASELINE, "mean_wait_h"),
                                  _mean(p1, BASELINE, "mean_wait_h"), 1)
    f["mem_wait_crldf"] = _from_to(_mean(p0, "cr_ldf", "mean_wait_h"),
                                   _mean(p1, "cr_ldf", "mean_wait_h"), 1)
    f["mem_jct_bace"] = _from_to(_mean(p0, BASELINE, "avg_jct_h"),
                                 _mean(p1, BASELINE, "avg_jct_h"), 0)
    f["mem_jct_crldf"] = _from_to(_mean(p0, "cr_ldf", "avg_jct_h"),
                                  _mean(p1, "cr_ldf", "avg_jct_h"), 0)
    r = mem["random"]
    if not r.is_empty() and {"ldf", "lcf"} <= set(r["scheduler"].to_list()):
        n = r.filter(pl.col("scheduler") == "ldf").height
        if r.filter(pl.col("scheduler") == "lcf").height == n:
            f["mem_runs"] = f"{n:,}"
            for s in ("ldf", "lcf"):
                f[f"mem_{s}_nulls"] = str(r.filter((pl.col("scheduler") == s)
                                                   & pl.col("avg_jct_h").is_null()).height)
    f["tou_cost_bace"] = _change(_mean(p0, BASELINE, "total_cost"),
                                 _mean(price, BASELINE, "total_cost"))
    f["tou_cost_ldf"] = _change(_mean(p0, "ldf", "total_cost"), _mean(price, "ldf", "total_cost"))
    f["tou_jct_bace"] = _change(_mean(p0, BASELINE, "avg_jct_h"),
                                _mean(price, BASELINE, "avg_jct_h"))
    moves = [m for s in ("paper", "random", "aws10")
             if (m := _max_move(_rows(lf, s, SWITCHES),
                                _rows(lf, s, ("arrivals", "memory_model", "price_profile"))))
             is not None]
    f["all_ratio_move"] = max(moves, key=float) if moves else None
    a = none["aws10"]
    if not a.is_empty():
        f["aws_eq"] = _share_equal(a, "cr_ldf", "ldf")
        for s, tag in (("cr_ldf", "crldf"), (BASELINE, "bace")):
            v = _mean(a, s, "multi_region_share")
            f[f"aws_multi_{tag}"] = None if v is None else f"{100 * v:.2g}"
        waits = a.filter(pl.col("scheduler").is_in([BASELINE, *BASELINES]))["mean_wait_h"]
        if waits.drop_nulls().len():
            f["aws_max_wait"] = f"{waits.max():.3g}"
    if jobs is not None:
        f |= _job_facts(jobs)
    return {k: v for k, v in f.items() if v is not None}


def _job_facts(jobs: pl.LazyFrame) -> dict[str, str | None]:
    """Facts from the per-job rows (``save_jobs=true``)."""
    f: dict[str, str | None] = {}
    for s in ("paper", "random"):
        rows = _rows(jobs, s, ("arrivals",))
        bp = rows.filter(pl.col("scheduler") == BASELINE) if not rows.is_empty() else rows
        if not bp.is_empty():
            f[f"arr_start_{s}"] = f"{100 * (bp['wait_h'] <= 1e-9).mean():.0f}"
    none = _rows(jobs, "paper", ())
    if not none.is_empty():
        ldf = none.filter(pl.col("scheduler") == "ldf")
        if not ldf.is_empty():
            f["ldf_min_gpus"] = str(ldf["gpus"].min())
    aws = _rows(jobs, "aws10", ())
    if not aws.is_empty() and "name" in aws.columns and aws["name"].drop_nulls().len():
        long = aws.filter(pl.col("job") == 0)
        name = long["name"].drop_nulls().first()
        by = {s: long.filter(pl.col("scheduler") == s) for s in (BASELINE, "ldf")}
        if all(not v.is_empty() for v in by.values()):
            f |= {"aws_long_job": name, "aws_long_kstar": str(long["k_star"].max()),
                  "aws_long_bace": f"{by[BASELINE]['gpus'].mean():.1f}",
                  "aws_long_ldf": f"{by['ldf']['gpus'].mean():.1f}",
                  "aws_long_jct_bace": f"{by[BASELINE]['jct_h'].mean():.0f}",
                  "aws_long_jct_ldf": f"{by['ldf']['jct_h'].mean():.0f}"}
    price = _rows(jobs, "paper", ("price_profile",))
    if not none.is_empty() and not price.is_empty() and "path" in none.columns:
        from bacepipe.analysis.fleets import SEP

        facts = model_world_facts()
        for tag, rows in (("_none", none), ("", price)):
            bp = rows.filter(pl.col("scheduler") == BASELINE).with_columns(
                pl.col("path").str.split(SEP).list.first().alias("_start"),
                (pl.col("gpus") * pl.col("execution_h")).alias("_gh"))
            total = bp["_gh"].sum()
            for which in ("avg", "first"):
                here = bp.filter(pl.col("_start") == facts[f"tou_{which}"])["_gh"].sum()
                f[f"tou_share_{which}{tag}"] = f"{100 * here / total:.0f}" if total else None
    return f


__all__ = ["TEMPLATES", "explain_worlds", "measured_facts", "model_world_facts"]
