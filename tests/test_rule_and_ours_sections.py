"""The start-rule and role-``ours`` sections of ``python -m bacepipe.reproduce``
(``bacepipe.analysis.start_rules``, ``.mechanism``, ``.ours``) on hand-made runs and jobs
datasets laid out as the sweep writes them, whose answers are known by construction; every
number checked is recomputed here from the rows written."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from results_dirs import BASE, ratio_rows, write_rows

import bacepipe.reproduce as reproduce
import bacepipe.reproduce.motivation_section as motivation_section
from bacepipe.analysis import bootstrap_ci, scan_runs
from bacepipe.analysis.claims import MATCH, NOT_RUN, OPPOSITE, SAME, evaluate_claims
from bacepipe.analysis.mechanism import (
    FIGURE,
    default_slack_points,
    mechanism_rows,
    mechanism_table,
    scan_jobs,
)
from bacepipe.analysis.ours import (
    OUTCOMES,
    evaluate_ours,
    loss_causes,
    ours_markdown,
    where_they_lose,
)
from bacepipe.analysis.start_rules import (
    DECIDES,
    SAME_UNDER_BOTH,
    UNDECIDED,
    compare_rules,
    start_rules_markdown,
)

BASELINES = ("lcf", "ldf", "cr_lcf", "cr_ldf")


def write_runs(root, jct: dict, cost: dict | None = None, *, slack=0.2, base=BASE, **where):
    """A point of :func:`ratio_rows` (mean wait: the topology's index, in h) at ``plan_slack``
    ``slack``; ``where``: its axes and switches (``tests/results_dirs.py``)."""
    rows = ratio_rows(jct, cost, base).with_columns(
        pl.col("topology").cast(pl.Float64).alias("mean_wait_h"), mean_gpus=4.0,
        gpu_utilization=0.5, multi_region_share=0.0, plan_slack=slack)
    write_rows(root, rows, **where)


def write_jobs(root, shares: dict, waits: dict, *, topologies=2, **where):
    """A jobs/ point: per scheduler, every topology has one job per entry of ``shares[s]``
    (GPUs ÷ K*, K* = 10) waiting ``waits[s]`` h."""
    rows = []
    for name, share in shares.items():
        for t in range(topologies):
            for j, (s, w) in enumerate(zip(share, waits[name], strict=True)):
                rows.append({"seed": 0, "topology": t, "scheduler": name, "job": j,
                             "k_star": 10, "gpus": int(round(10 * s)), "wait_h": w,
                             "jct_h": 5.0 + w, "cost": 1.0})
    write_rows(root, rows, "jobs", **where)


# --------------------------------------------------------------------------- start rules


def by_key(comparisons):
    return {(c.claim.key, c.scenario): c for c in comparisons}


def test_each_claim_under_both_rules_and_whether_the_rule_decides_it(tmp_path):
    write_runs(tmp_path, {b: 0.9 for b in BASELINES}, {b: 1.2 for b in BASELINES})
    write_runs(tmp_path, {b: 1.3 for b in BASELINES}, {b: 0.8 for b in BASELINES},
               start_rule="wait_if_faster", point="p1")
    res = by_key(compare_rules(scan_runs([tmp_path]), scenarios=["random"], n_resamples=200))
    jct = res["fig4_jct", "random"]
    assert [r.verdict for r in jct.results] == [OPPOSITE, MATCH]
    assert jct.outcome == DECIDES
    assert jct.sentence() == ("The start rule decides it: *opposite* under greedy, *matches "
                              "within CI* under wait_if_faster (ours 0.900 → 1.300).")
    cost = res["fig4_cost", "random"]
    assert [r.verdict for r in cost.results] == [MATCH, OPPOSITE]
    # The same verdict under both: the paradox (cr_ldf / ldf = 1) is not decided by the rule.
    paradox = res["paradox_cr_ldf", "random"]
    assert paradox.outcome == SAME_UNDER_BOTH
    assert paradox.sentence().startswith("The start rule does not decide it: *opposite* under "
                                         "greedy and wait_if_faster")
    # A point run under neither rule decides nothing, and says which sweep fills it.
    gpu = res["gpu05_jct", "random"]
    assert gpu.outcome == UNDECIDED and [r.verdict for r in gpu.results] == [NOT_RUN] * 2
    assert "+preset=start_rules" in gpu.sentence()


def test_the_numbers_are_the_bootstrap_of_each_rules_own_rows(tmp_path):
    rng = np.random.default_rng(3)
    greedy, wif = 1 + rng.random(5), 0.5 + rng.random(5)
    write_runs(tmp_path, {"ldf": greedy})
    write_runs(tmp_path, {"ldf": wif}, start_rule="wait_if_faster", point="p1")
    lf = scan_runs([tmp_path])
    (cmp,) = [x for x in compare_rules(lf, scenarios=["random"], n_resamples=300)
              if x.claim.key == "fig4_jct"]
    for rule_result, factors in zip(cmp.results, (greedy, wif), strict=True):
        (ldf,) = [e for e in rule_result.estimates if e.scheduler == "ldf"]
        assert ldf.mean == pytest.approx(factors.mean())
        assert (ldf.low, ldf.high) == pytest.approx(bootstrap_ci(factors, 300, 0))
        assert ldf.n == 5


def test_claims_read_greedy_only(tmp_path):
    write_runs(tmp_path, {b: 1.3 for b in BASELINES})
    write_runs(tmp_path, {b: 0.5 for b in BASELINES}, base=np.arange(1.0, 9.0),
               start_rule="wait_if_faster", point="p1")  # more topologies: would win a tie-break
    (r,) = [x for x in evaluate_claims(scan_runs([tmp_path]), scenarios=["random"],
                                       n_resamples=100) if x.claim.key == "fig4_jct"]
    assert r.verdict == MATCH and all(e.n == 5 for e in r.estimates)


def test_side_by_side_markdown(tmp_path):
    write_runs(tmp_path, {b: 0.9 for b in BASELINES})
    write_runs(tmp_path, {b: 1.1 for b in BASELINES}, start_rule="wait_if_faster", point="p1")
    md = "\n".join(start_rules_markdown(compare_rules(scan_runs([tmp_path]),
                                                      scenarios=["random"], n_resamples=100)))
    # fig4_jct and fig4_cost flip; the paradox (ratio 1) is opposite under both; the rest are
    # not run.
    assert "| decided by the start rule | 2 |" in md and "| same verdict under both | 2 |" in md
    row = next(line for line in md.splitlines()
               if line.startswith("| baselines: avg JCT 27.9–64.7 % longer"))
    assert "lcf 0.900 [0.900, 0.900]" in row and "lcf 1.100 [1.100, 1.100]" in row
    assert f"**{OPPOSITE}**" in row and f"**{SAME}**" in row and "| 5 / 5 |" in row
    assert row.endswith("The start rule decides it: *opposite* under greedy, *same direction* "
                        "under wait_if_faster (ours 0.900 → 1.100). |")


# --------------------------------------------------------------------------- mechanism


def test_mechanism_table_from_per_job_rows(tmp_path):
    write_runs(tmp_path, {"ldf": 1.0})
    write_runs(tmp_path, {"ldf": 1.0}, start_rule="wait_if_faster", point="p1")
    write_jobs(tmp_path, {"bace_pipe": [1.0, 0.4], "ldf": [0.5, 0.5]},
               {"bace_pipe": [0.0, 2.0], "ldf": [1.0, 3.0]})
    write_jobs(tmp_path, {"bace_pipe": [1.0, 1.0], "ldf": [1.0, 0.3]},
               {"bace_pipe": [0.0, 8.0], "ldf": [4.0, 4.0]}, start_rule="wait_if_faster",
               point="p1")
    # A point at another slack and another with fewer topologies are never read.
    write_jobs(tmp_path, {"bace_pipe": [0.1, 0.1]}, {"bace_pipe": [99.0, 99.0]}, point="p9",
               topologies=1)
    lf = scan_runs([tmp_path])
    rows = mechanism_rows(scan_jobs([tmp_path]), "random", default_slack_points(lf))
    table = {(r["scheduler"], r["start_rule"]): r
             for r in mechanism_table(rows).iter_rows(named=True)}
    g = table["bace_pipe", "greedy"]
    assert (g["jobs"], g["topologies"]) == (4, 2)
    assert g["gpu_share_mean"] == pytest.approx(0.7) and g["below_half"] == 0.5
    assert g["at_kstar"] == 0.5 and g["wait_h_mean"] == pytest.approx(1.0)
    w = table["ldf", "wait_if_faster"]
    assert w["gpu_share_mean"] == pytest.approx(0.65) and w["wait_h_median"] == 4.0
    assert mechanism_rows(scan_jobs([tmp_path]), "paper").is_empty()


# --------------------------------------------------------------------------- ours


def test_ours_ratios_win_rates_and_where_they_lose(tmp_path):
    # Topologies 0-2: spt_plan faster and cheaper; 3: faster only; 4: neither.
    jct = {"spt_plan": [0.8, 0.8, 0.8, 0.9, 1.2], "spt_wait": 0.7, "lcf": 1.3}
    cost = {"spt_plan": [0.9, 0.9, 0.9, 1.1, 1.1], "spt_wait": 1.1, "lcf": 0.8}
    write_runs(tmp_path, jct, cost)
    write_runs(tmp_path, {"spt_plan": 0.6, "spt_wait": 0.6}, {"spt_plan": 0.9, "spt_wait": 0.9},
               point="p2", num_jobs=24)
    write_runs(tmp_path, {"spt_plan": 0.95}, {"spt_plan": 1.05}, slack=0.1, point="p3")
    write_runs(tmp_path, {"spt_plan": 1.4}, {"spt_plan": 0.8}, slack=0.5, point="p4")
    res = evaluate_ours(scan_runs([tmp_path]), n_resamples=200)
    assert res.names == ("spt_wait", "spt_plan")
    rows = {(r["num_jobs"], r["scheduler"]): r for r in res.points.iter_rows(named=True)}
    assert len(rows) == 4  # the slack points are the curve's, not the table's
    plan = rows[8, "spt_plan"]
    assert plan["jct_ratio_mean"] == pytest.approx(np.mean(jct["spt_plan"]))
    assert (plan["jct_ratio_ci_low"], plan["jct_ratio_ci_high"]) == pytest.approx(
        bootstrap_ci(np.array(jct["spt_plan"]), 200, 0))
    assert [plan[o] for o in OUTCOMES] == pytest.approx([0.6, 0.2, 0.0, 0.2])
    assert rows[8, "spt_wait"]["faster only"] == 1.0
    assert rows[24, "spt_plan"]["wins both"] == 1.0
    lines = where_they_lose(res)
    assert lines[0].startswith("`spt_wait`: mean-ratio CI below 1 on both avg JCT and cost at "
                               "1 of 2 points; not at: default (cost 1.100 [1.100, 1.100]).")
    assert lines[1].startswith("`spt_plan`: mean-ratio CI below 1 on both avg JCT and cost at "
                               "1 of 2 points; not at: default (")
    out = {(r["scheduler"], r["outcome"]): r for r in res.outcomes.iter_rows(named=True)}
    assert out["spt_plan", "wins both"]["topologies"] == 3
    assert out["spt_plan", "wins both"]["base_mean_wait_h"] == pytest.approx(1.0)  # t = 0, 1, 2
    assert out["spt_plan", "neither"]["base_mean_wait_h"] == pytest.approx(4.0)
    assert res.curve["plan_slack"].to_list() == [0.1, 0.2, 0.5]
    assert sorted(res.plane["scheduler"].to_list()) == ["lcf", "spt_plan", "spt_wait"]
    assert res.plane["n_pairs"].to_list() == [5, 5, 5]
    md = "\n".join(ours_markdown(res))
    assert "| 0.1 | 5 | 0.950 [0.950, 0.950] | 1.050 [1.050, 1.050] | 0 % |" in md
    assert "| num_jobs=24 | `spt_plan` | 5 |" in md


def test_ours_reads_the_larger_of_two_runs_of_a_point_and_measures_where_spt_plan_loses(
        tmp_path):
    # The default point run by two presets (ids p0: 5 topologies, p1: 8): never pooled, the
    # larger is read. At gpu_scale 1.25 spt_plan is slower (JCT ratio 1.1) but cheaper.
    eight = np.arange(1.0, 9.0)
    write_runs(tmp_path, {"spt_plan": 1.2}, {"spt_plan": 0.9})
    write_runs(tmp_path, {"spt_plan": 0.8}, {"spt_plan": 0.9}, point="p1", base=eight)
    write_runs(tmp_path, {"spt_plan": 1.1}, {"spt_plan": 0.7}, point="p1", base=eight,
               gpu_scale=1.25)
    write_jobs(tmp_path, {"bace_pipe": [1.0, 0.5], "spt_plan": [0.8, 0.8]},
               {"bace_pipe": [0.0, 4.0], "spt_plan": [0.0, 1.0]}, point="p1", topologies=8)
    write_jobs(tmp_path, {"bace_pipe": [1.0, 1.0], "spt_plan": [0.8, 0.6]},
               {"bace_pipe": [0.0, 0.0], "spt_plan": [1.0, 3.0]}, point="p1", topologies=8,
               gpu_scale=1.25)
    res = evaluate_ours(scan_runs([tmp_path]), n_resamples=100)
    assert [(r["gpu_scale"], r["n_pairs"], round(r["jct_ratio_mean"], 9))
            for r in res.points.iter_rows(named=True)] == [(1.0, 8, 0.8), (1.25, 8, 1.1)]
    causes = loss_causes(res, scan_jobs([tmp_path]))
    rows = {(r["label"], r["scheduler"]): r for r in causes.iter_rows(named=True)}
    assert list(rows) == [("default", "bace_pipe"), ("default", "spt_plan"),
                          ("gpu_scale=1.25", "bace_pipe"), ("gpu_scale=1.25", "spt_plan")]
    lost = rows["gpu_scale=1.25", "spt_plan"]
    assert lost["status"] == "avg JCT not below 1"
    assert rows["default", "spt_plan"]["status"] == "below 1 on both"
    assert (lost["jobs"], lost["topologies"]) == (16, 8)
    assert lost["gpu_share_mean"] == pytest.approx(0.7) and lost["at_kstar"] == 0.0
    assert lost["wait_h_mean"] == pytest.approx(2.0) and lost["jct_h_mean"] == pytest.approx(7.0)
    assert rows["default", "bace_pipe"]["below_half"] == 0.0
    assert rows["default", "bace_pipe"]["wait_h_mean"] == pytest.approx(2.0)
    md = "\n".join(ours_markdown(res, None, causes))
    assert "- gpu_scale=1.25: avg JCT 1.100 [1.100, 1.100] (n = 8)" in md
    assert ("| gpu_scale=1.25 | avg JCT not below 1 | `spt_plan` | 16 | 8 | 0.700 | 0.0 % | "
            "0.0 % | 2.00 |") in md
    # Without per-job rows the points are still named, and the sweep that keeps them.
    assert "(it keeps them, `save_jobs`)" in "\n".join(
        ours_markdown(res, None, loss_causes(res, None)))


def test_where_spt_plan_wins_everywhere_the_point_nearest_1_is_measured(tmp_path):
    write_runs(tmp_path, {"spt_plan": 0.8}, {"spt_plan": [0.9, 0.9, 0.9, 0.9, 0.98]})
    write_runs(tmp_path, {"spt_plan": 0.97}, {"spt_plan": 0.7}, point="p1", gpu_scale=1.25)
    write_jobs(tmp_path, {"bace_pipe": [1.0, 1.0], "spt_plan": [0.8, 0.6]},
               {"bace_pipe": [0.0, 0.0], "spt_plan": [1.0, 3.0]}, point="p1", topologies=5,
               gpu_scale=1.25)
    res = evaluate_ours(scan_runs([tmp_path]), n_resamples=100)
    causes = loss_causes(res, scan_jobs([tmp_path]))
    # gpu_scale=1.25's avg JCT (0.97) is nearer 1 than the default point's cost CI (< 0.95).
    assert causes["label"].to_list() == ["gpu_scale=1.25"] * 2
    assert set(causes["status"]) == {"nearest 1: avg JCT"}
    md = "\n".join(ours_markdown(res, None, causes))
    assert ("lies below 1 on both avg JCT and cost. It comes nearest 1 at gpu_scale=1.25: avg "
            "JCT 0.970 [0.970, 0.970] (n = 5).") in md


def test_no_ours_is_said_in_one_line(tmp_path):
    write_runs(tmp_path, {"lcf": 1.3})
    assert evaluate_ours(scan_runs([tmp_path])) is None
    assert "+preset=ours" in ours_markdown(None)[2]


# --------------------------------------------------------------------------- reproduce


def test_reproduce_writes_both_sections_and_the_mechanism_figure(tmp_path, monkeypatch):
    # The motivation runs the simulator; it has its own test (tests/test_claims.py).
    monkeypatch.setattr(reproduce, "motivation", lambda: [])
    monkeypatch.setattr(reproduce, "motivation_facts", lambda: [])
    monkeypatch.setattr(motivation_section, "MOTIVATION", ())
    results, out = tmp_path / "res", tmp_path / "docs"
    write_runs(results, {b: 0.9 for b in BASELINES} | {"spt_plan": 0.8}, {"spt_plan": 0.9})
    # More topologies under wait_if_faster: claims and worlds must still read greedy alone.
    write_runs(results, {b: 1.3 for b in BASELINES}, start_rule="wait_if_faster", point="p1",
               base=np.arange(1.0, 9.0))
    write_jobs(results, {"bace_pipe": [1.0, 0.4]}, {"bace_pipe": [0.0, 2.0]})
    write_jobs(results, {"bace_pipe": [1.0, 1.0]}, {"bace_pipe": [0.0, 5.0]},
               start_rule="wait_if_faster", point="p1")
    assert reproduce.main(["--results", str(results), "--out", str(out)]) == 0
    doc = (out / "reproduction.md").read_text()
    claims, rest = doc.split("## The start rule (SPEC §13)", 1)
    assert "| baselines: avg JCT 27.9–64.7 % longer | 1.279–1.647 | random | lcf 0.900" in claims
    rules, rest = rest.split("## Beyond the paper", 1)
    assert "The start rule decides it: *opposite* under greedy, *matches within CI* under " \
           "wait_if_faster (ours 0.900 → 1.300)." in rules
    assert f"](figures/random/{FIGURE})" in rules
    assert (out / "figures" / "random" / FIGURE).is_file()
    assert "| `bace_pipe` | wait_if_faster | 4 | 2 | 1.000 |" in rules
    worlds, rest = rest.split("## Our schedulers", 1)
    assert "| 5 | lcf 0.900 [0.900, 0.900]" in worlds  # the worlds read greedy rows only
    assert "| default | `spt_plan` | 5 | 0.800 [0.800, 0.800] |" in rest
    assert "](figures/random/ours_plane.png)" in rest
    assert (out / "figures" / "random" / "ours_plane.png").is_file()
    # Each section says how many topologies per point it read, computed from what it read.
    assert "- topologies per point: 5 (1 point), 8 (1 point); each section" in doc
    assert "*Topologies per point read here: 5.*" in claims
    assert "*Topologies per point read here: 2, 5 or 8, as each row says.*" in rules
    assert "*Topologies per point read here: 5.*" in worlds
    figures = rest.split("## Figures", 1)[1]
    assert "### scenario = random\n\n*Topologies per point read here: 5.*" in figures


def test_run_presets_takes_studies(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(reproduce.subprocess, "call",
                        lambda cmd, cwd: calls.append(cmd) or 0)
    reproduce.run_presets(tmp_path, 3, ["all", "start_rules", "ours"])
    assert [c[4] for c in calls] == ["+preset=all", "+preset=start_rules",
                                     "+preset=ours"]
    assert reproduce.main(["--presets", " , ", "--results", str(tmp_path)]) == 2


def test_topologies_of_sets_one_presets_count(tmp_path, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(reproduce.subprocess, "call",
                        lambda cmd, cwd: calls.append(cmd) or 0)
    # The sweeps are stubbed, so nothing is there to read afterwards: status 2, after the runs.
    assert reproduce.main(["--run", "--results", str(tmp_path), "--presets", "all,ours,hetero",
                           "--topologies", "3", "--topologies-of", "ours=10"]) == 2
    assert [(c[4], c[5]) for c in calls] == [("+preset=all", "topologies=3"),
                                             ("+preset=ours", "topologies=10"),
                                             ("+preset=hetero", "topologies=3")]
    capsys.readouterr()
    for args, message in (
            (["ours=0"], "--topologies-of ours: must be >= 1, got 0"),
            (["ours=1e4"], "--topologies-of ours: must be an integer, got '1e4'"),
            (["ours"], "--topologies-of: expected NAME=N, got 'ours'"),
            (["fig9=5"], "--topologies-of: fig9 is not one of --presets (all, ours)"),
            (["ours=5", "--topologies-of", "ours=6"], "--topologies-of: ours given twice")):
        calls.clear()
        assert reproduce.main(["--run", "--results", str(tmp_path), "--presets", "all,ours",
                               "--topologies-of", *args]) == 2
        assert capsys.readouterr().err == f"reproduce: {message}\n" and not calls


# --------------------------------------------------------------------------- a real run


@pytest.mark.long
def test_a_real_tiny_run_is_recomputable_from_its_parquet_rows(tmp_path):
    from bacepipe.sweep import run_point, validate

    for rule in ("greedy", "wait_if_faster"):
        run_point(validate({"topologies": 4, "workers": 1, "results_dir": str(tmp_path),
                            "start_rule": rule, "save_jobs": True,
                            "schedulers": ["bace_pipe", "ldf", "spt_plan"]}))
    lf = scan_runs([tmp_path])
    runs = pl.read_parquet(tmp_path / "runs" / "**" / "*.parquet", hive_partitioning=True)
    (fig4,) = [c for c in compare_rules(lf, scenarios=["random"], n_resamples=100)
               if c.claim.key == "fig4_jct"]
    for rule, result in zip(("greedy", "wait_if_faster"), fig4.results, strict=True):
        mine = runs.filter(pl.col("start_rule") == rule).pivot(
            "scheduler", index="topology", values="avg_jct_h")
        ratio = (mine["ldf"] / mine["bace_pipe"]).to_numpy()
        (ldf,) = [e for e in result.estimates if e.scheduler == "ldf"]
        assert ldf.mean == pytest.approx(ratio.mean()) and ldf.n == 4
    jobs = pl.read_parquet(tmp_path / "jobs" / "**" / "*.parquet", hive_partitioning=True)
    table = mechanism_table(mechanism_rows(scan_jobs([tmp_path]), "random",
                                           default_slack_points(lf)))
    for r in table.iter_rows(named=True):
        mine = jobs.filter((pl.col("scheduler") == r["scheduler"])
                           & (pl.col("start_rule") == r["start_rule"]))
        assert r["jobs"] == mine.height == 4 * 8
        assert r["gpu_share_mean"] == pytest.approx((mine["gpus"] / mine["k_star"]).mean())
        assert r["wait_h_mean"] == pytest.approx(mine["wait_h"].mean())
    res = evaluate_ours(lf, n_resamples=100)
    plan = res.points.row(0, named=True)
    greedy = runs.filter(pl.col("start_rule") == "greedy").pivot(
        "scheduler", index="topology", values="total_cost")
    assert plan["cost_ratio_mean"] == pytest.approx(
        (greedy["spt_plan"] / greedy["bace_pipe"]).mean())
