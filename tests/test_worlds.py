"""The paper's conclusions in the SPEC §12 worlds (``bacepipe.analysis.worlds``), and the paper's
world alone for the §11 claims, on hand-made runs datasets whose answers are known by
construction."""

from __future__ import annotations

import numpy as np
import pytest
from results_dirs import BASE, ratio_rows, write_rows

import bacepipe.reproduce as reproduce
from bacepipe.analysis import bootstrap_ci, reference_point, scan_runs, summarize
from bacepipe.analysis.claims import MATCH, evaluate_claims
from bacepipe.analysis.schema import EXTENSION_KEYS
from bacepipe.analysis.world_facts import explain_worlds
from bacepipe.analysis.worlds import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    evaluate_worlds,
    world_label,
    worlds_markdown,
)

BASELINES = ("lcf", "ldf", "cr_lcf", "cr_ldf")
POISSON = {"arrivals": "poisson", "arrival_rate_per_h": 0.5}
MEMORY = {"memory_model": "adam_mixed"}
ALL = {**POISSON, "latency": "geo", **MEMORY, "price_profile": "business"}


def write_point(root, jct: dict, cost: dict | None = None, *, world: dict | None = None,
                scenario: str = "paper", base=BASE, point: str = "p0", **axes) -> None:
    """One point of :func:`ratio_rows` (NaN: a null run) in ``world`` (SPEC §12 switches)."""
    write_rows(root, ratio_rows(jct, cost, base), point=point, scenario=scenario, **axes,
               **(world or {}))


def evaluate(root, **kw):
    results, nulls = evaluate_worlds(scan_runs([root]), n_resamples=200, **kw)
    by = {(r.scenario, world_label(r.world), r.conclusion.key): r for r in results}
    return by, nulls


# --- verdicts known by construction ---------------------------------------------------------


def test_every_baseline_ahead_holds_and_one_below_does_not(tmp_path):
    write_point(tmp_path, {b: 1.2 for b in BASELINES}, world=MEMORY)
    write_point(tmp_path, {"lcf": 1.2, "ldf": 0.9, "cr_lcf": 1.2, "cr_ldf": 1.2},
                {b: 1.1 for b in BASELINES}, world=POISSON)
    by, _ = evaluate(tmp_path)
    mem = by["paper", "memory_model=adam_mixed", "ahead_jct"]
    assert mem.verdict == HOLDS
    assert [e.scheduler for e in mem.estimates] == list(BASELINES)
    assert all(e.mean == pytest.approx(1.2) and e.n == 5 for e in mem.estimates)
    assert by["paper", "memory_model=adam_mixed", "ahead_cost"].verdict == HOLDS
    arr = by["paper", "arrivals=poisson (0.5/h)", "ahead_jct"]
    assert arr.verdict == f"{FAILS}: ldf below 1"
    assert "CI above 1: lcf, cr_lcf, cr_ldf" in arr.reason and "CI below 1: ldf" in arr.reason
    assert by["paper", "arrivals=poisson (0.5/h)", "ahead_cost"].verdict == HOLDS


def test_ci_including_one_is_inconclusive_and_no_effect_does_not_hold(tmp_path):
    straddle = [1.3, 0.8, 1.2, 0.9, 1.1]  # mean 1.06, CI includes 1
    write_point(tmp_path, {"lcf": 1.2, "ldf": straddle, "cr_lcf": 1.2, "cr_ldf": 1.2},
                world=MEMORY)
    write_point(tmp_path, {"lcf": 1.2, "ldf": 1.2, "cr_lcf": 1.2, "cr_ldf": 1.0002},
                world={"latency": "geo"})
    by, _ = evaluate(tmp_path)
    low, high = bootstrap_ci(np.array(straddle), 200, 0)
    assert low < 1 < high
    assert by["paper", "memory_model=adam_mixed", "ahead_jct"].verdict == (
        f"{INCONCLUSIVE}: ldf CI includes 1")
    # CR-LDF 0.02 % above BACE-Pipe on every topology: a CI above 1, but no effect.
    assert by["paper", "latency=geo", "ahead_jct"].verdict == f"{FAILS}: cr_ldf equal (within 0.1%)"


def test_paradox_is_normalized_to_ldf(tmp_path):
    write_point(tmp_path, {"ldf": 2.0, "cr_ldf": 3.0, "cr_lcf": 2.6, "lcf": 1.5})
    write_point(tmp_path, {"ldf": 2.0, "cr_ldf": 1.8, "cr_lcf": 2.6, "lcf": 1.5}, world=MEMORY)
    by, _ = evaluate(tmp_path)
    para = by["paper", "no switch", "paradox"]
    assert para.verdict == HOLDS
    assert [(e.scheduler, round(e.mean, 6)) for e in para.estimates] == [("cr_ldf", 1.5),
                                                                         ("cr_lcf", 1.3)]
    assert "vs ldf" in para.reason
    assert by["paper", "memory_model=adam_mixed", "paradox"].verdict == f"{FAILS}: cr_ldf below 1"


def test_null_runs_are_counted_and_pairs_shrink(tmp_path):
    nan = float("nan")
    write_point(tmp_path, {"lcf": [1.2, nan, 1.2, nan, 1.2], "ldf": 1.2, "cr_lcf": 1.2,
                           "cr_ldf": 1.2}, world=MEMORY, scenario="random")
    by, nulls = evaluate(tmp_path)
    res = by["random", "memory_model=adam_mixed", "ahead_jct"]
    assert res.verdict == HOLDS
    lcf = res.estimates[0]
    assert (lcf.scheduler, lcf.n, res.topologies[0]) == ("lcf", 3, 5)
    counts = {c.scheduler: (c.runs, c.nulls) for c in nulls}
    assert counts["lcf"] == (5, 2) and counts["ldf"] == (5, 0) and counts["bace_pipe"] == (5, 0)
    md = "\n".join(worlds_markdown(list(by.values()), nulls))
    assert "lcf 1.200 [1.200, 1.200] (n=3 of 5)" in md
    table = md.split("### Unplaceable runs", 1)[1]
    assert "| random | memory_model=adam_mixed | 5 | 0 | 2 | 0 |" in table
    assert "2 null runs of " in table


def test_no_null_runs_is_said_in_one_line(tmp_path):
    write_point(tmp_path, {b: 1.2 for b in BASELINES}, world=MEMORY)
    md = "\n".join(worlds_markdown(*evaluate_worlds(scan_runs([tmp_path]), n_resamples=50)))
    assert "No run was unplaceable: 0 null runs of 25 (every scheduler, 1 scenario × world" in md


def test_only_default_axes_and_one_point_per_scheduler(tmp_path):
    """A bandwidth point (Fig. 5) is no world; two points of one world are never pooled."""
    write_point(tmp_path, {b: 1.2 for b in BASELINES})
    write_point(tmp_path, {b: 0.5 for b in BASELINES}, bandwidth_scale=0.3)
    write_point(tmp_path, {b: 0.7 for b in BASELINES}, base=[1.0, 2.0, 3.0], point="p-small")
    by, _ = evaluate(tmp_path)
    assert {w for _, w, _ in by} == {"no switch"}
    (e, *_) = by["paper", "no switch", "ahead_jct"].estimates
    assert e.mean == pytest.approx(1.2) and e.n == 5


def test_worlds_order_main_rows_and_details(tmp_path):
    for world in ({}, POISSON, MEMORY, {**POISSON, **MEMORY}, ALL):
        write_point(tmp_path, {b: 1.2 for b in BASELINES}, world=world)
    results, nulls = evaluate_worlds(scan_runs([tmp_path]), n_resamples=50)
    labels = list(dict.fromkeys(world_label(r.world) for r in results))
    assert labels == ["no switch", "arrivals=poisson (0.5/h)", "memory_model=adam_mixed",
                      "arrivals=poisson (0.5/h) + memory_model=adam_mixed",
                      "arrivals=poisson (0.5/h) + latency=geo + memory_model=adam_mixed + "
                      "price_profile=business"]
    md = "\n".join(worlds_markdown(results, nulls))
    main, details = md.split("<details>", 1)
    assert "| arrivals=poisson (0.5/h) + memory_model=adam_mixed |" not in main
    assert "| arrivals=poisson (0.5/h) + latency=geo + memory_model=adam_mixed" in main
    assert "All 5 worlds, scenario = paper" in details
    assert "| arrivals=poisson (0.5/h) + memory_model=adam_mixed |" in details
    for key, text in explain_worlds({}).items():
        assert f'`TEMPLATES["{key}"]`' in md and text in md


def test_no_results_at_default_axes(tmp_path):
    write_point(tmp_path, {b: 1.2 for b in BASELINES}, bandwidth_scale=0.3)
    results, nulls = evaluate_worlds(scan_runs([tmp_path]), n_resamples=50)
    assert results == [] and nulls == []
    assert "nothing to show" in "\n".join(worlds_markdown(results, nulls))


# --- the paper's world alone for SPEC §11 ---------------------------------------------------


def test_claims_and_reference_point_ignore_extension_points(tmp_path):
    """An extension point with more topologies and other ratios must not replace (or pool into)
    the paper's world: §11's claims and the figures' reference point read it alone."""
    write_point(tmp_path, {b: 1.3 for b in BASELINES}, {b: 1.2 for b in BASELINES},
                scenario="random")
    more = [1.0] * 9
    for world in (MEMORY, ALL):
        write_point(tmp_path, {b: 0.8 for b in BASELINES}, scenario="random", world=world,
                    base=more, point="p-ext")
    lf = scan_runs([tmp_path])
    res = {(r.claim.key, r.scenario): r
           for r in evaluate_claims(lf, scenarios=["random"], n_resamples=50)}
    jct = res["fig4_jct", "random"]
    assert jct.verdict == MATCH
    assert all(e.mean == pytest.approx(1.3) and e.n == 5 for e in jct.estimates)
    ref = reference_point(summarize(lf, n_resamples=20))
    assert all(ref.get(k) is None for k in EXTENSION_KEYS) and ref["point"] == "p0"


def test_extension_keys_are_the_sweeps_switches():
    from bacepipe.settings import SETTINGS, SWITCHES

    assert tuple(EXTENSION_KEYS) == SWITCHES == (
        "arrivals", "arrival_rate_per_h", "trace", "latency", "memory_model", "price_profile")
    assert all(SETTINGS[k].domain == "world" for k in SWITCHES)


# --- python -m bacepipe.reproduce -------------------------------------------------------------


def test_reproduce_writes_the_worlds_section_after_the_claims(tmp_path):
    results, out = tmp_path / "res", tmp_path / "docs"
    write_point(results, {b: 1.3 for b in BASELINES}, scenario="random")
    write_point(results, {b: 0.8 for b in BASELINES}, scenario="random", world=MEMORY,
                point="p-ext")
    assert reproduce.main(["--results", str(results), "--out", str(out)]) == 0
    doc = (out / "reproduction.md").read_text()
    claims, rest = doc.split("## Beyond the paper", 1)
    assert "## Headline claims (SPEC §11)" in claims and "## Motivation" in rest
    assert "| baselines: avg JCT 27.9–64.7 % longer | 1.279–1.647 | random | lcf 1.300" in claims
    worlds = rest.split("## Motivation", 1)[0]
    assert "| memory_model=adam_mixed | 5 | lcf 0.800 [0.800, 0.800]" in worlds
    assert f"**{FAILS}: lcf, ldf, cr_lcf, cr_ldf below 1**" in worlds


def test_run_presets_sweeps_all_then_realistic(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(reproduce.subprocess, "call",
                        lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
    reproduce.run_presets(tmp_path, 7)
    assert [c[0][3:5] for c in calls] == [["-m", "+preset=all"], ["-m", "+preset=realistic"]]
    assert all("topologies=7" in c[0] and f"results_dir={tmp_path}" in c[0] and c[1] == tmp_path
               for c in calls)
    monkeypatch.setattr(reproduce.subprocess, "call", lambda cmd, cwd: 1)
    with pytest.raises(reproduce.InputError, match="preset=all"):
        reproduce.run_presets(tmp_path, 7)
