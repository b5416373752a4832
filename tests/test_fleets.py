"""Mixed fleets (``bacepipe.analysis.fleets``, SPEC §16) on hand-made runs and jobs datasets laid
out as the sweep writes them; every number checked is recomputed here from the rows written."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from results_dirs import ratio_rows, write_rows

import bacepipe.reproduce as reproduce
import bacepipe.reproduce.motivation_section as motivation_section
from bacepipe.analysis import bootstrap_ci, scan_runs
from bacepipe.analysis.claims import MATCH, NOT_RUN, OPPOSITE, evaluate_claims
from bacepipe.analysis.fleets import (
    CHANGES,
    SAME_UNDER_BOTH,
    UNDECIDED,
    compare_fleets,
    fleet_point,
    fleets_markdown,
    ours_on_fleets,
    type_shares,
    type_shares_markdown,
)
from bacepipe.analysis.mechanism import scan_jobs
from bacepipe.report import main as report_main

BASELINES = ("lcf", "ldf", "cr_lcf", "cr_ldf")


def write_runs(root, jct: dict, cost: dict | None = None, **where):
    write_rows(root, ratio_rows(jct, cost).with_columns(plan_slack=0.2), **where)


#: Two jobs per topology: one on 8 A100 + 2 H100 for 2 h costing 6 $, one on 4 A6000 for 1 h
#: costing 1 $ (bace_pipe); ldf: the first job on 10 A100 instead.
JOBS = {
    "bace_pipe": [("8>2", "A100>H100", 2.0, 6.0), ("4", "A6000", 1.0, 1.0)],
    "ldf": [("10", "A100", 2.0, 5.0), ("4", "A6000", 1.0, 1.0)],
}


def write_jobs(root, jobs=JOBS, *, topologies=2, **where):
    rows = []
    for name, js in jobs.items():
        for t in range(topologies):
            for j, (n, types, e, c) in enumerate(js):
                rows.append({"seed": 0, "topology": t, "scheduler": name, "job": j,
                             "k_star": 10, "gpus": sum(map(int, n.split(">"))), "wait_h": 0.0,
                             "execution_h": e, "jct_h": e, "cost": c, "path_gpus": n,
                             "path_gpu_types": types, "name": f"job{j}",
                             "path": ">".join(f"R{i}" for i in range(len(n.split(">"))))})
    write_rows(root, rows, "jobs", **where)


def by_key(comparisons):
    return {(c.claim.key, c.scenario): c for c in comparisons}


def test_each_claim_on_one_type_and_on_the_mixed_fleet(tmp_path):
    write_runs(tmp_path, {b: 1.3 for b in BASELINES}, {b: 1.2 for b in BASELINES})
    write_runs(tmp_path, {b: 0.9 for b in BASELINES}, {b: 1.2 for b in BASELINES}, gpu_mix="cloud",
               point="p1")
    res = by_key(compare_fleets(scan_runs([tmp_path]), n_resamples=200))
    jct = res["fig4_jct", "random"]
    assert [r.verdict for r in jct.results] == [MATCH, OPPOSITE] and jct.outcome == CHANGES
    assert jct.sentence() == ("The mixed fleet changes it: *matches within CI* with "
                              "gpu_mix=none, *opposite* with gpu_mix=cloud (ours 1.300 → 0.900).")
    cost = res["fig4_cost", "random"]
    assert cost.outcome == SAME_UNDER_BOTH
    assert cost.sentence().startswith("The mixed fleet does not change it")
    gpu = res["gpu05_jct", "random"]
    assert gpu.outcome == UNDECIDED
    assert gpu.sentence() == ("Not decided here: no results under gpu_mix=none or cloud (run "
                              "`python -m bacepipe.sweep -m +preset=all` and "
                              "`python -m bacepipe.sweep -m +preset=hetero`).")
    # The paper's claims section itself never reads the mixed fleet.
    (fig4,) = [r for r in evaluate_claims(scan_runs([tmp_path]), scenarios=["random"],
                                          n_resamples=50) if r.claim.key == "fig4_jct"]
    assert fig4.estimates[0].mean == pytest.approx(1.3)


def test_ours_advantage_on_both_fleets(tmp_path):
    rng = np.random.default_rng(1)
    cloud = 0.9 + 0.3 * rng.random(5)
    write_runs(tmp_path, {"spt_plan": 0.8, "spt_wait": 1.1}, {"spt_plan": 0.9, "spt_wait": 0.9})
    write_runs(tmp_path, {"spt_plan": cloud, "spt_wait": 0.7}, {"spt_plan": 0.9,
                                                               "spt_wait": 0.9},
               gpu_mix="cloud", point="p1")
    ours = ours_on_fleets(scan_runs([tmp_path]), n_resamples=300)
    none, mixed = ours.rows["spt_plan"]
    assert mixed["jct_ratio_gmean"] == pytest.approx(np.exp(np.log(cloud).mean()))
    assert (mixed["jct_ratio_gmean_ci_low"], mixed["jct_ratio_gmean_ci_high"]) == \
        pytest.approx(bootstrap_ci(cloud, 300, 0, geometric=True))
    text = ours.sentence("spt_plan")
    assert "on avg JCT its advantage holds with one GPU type but not on the mixed fleet" in text
    assert "on cost its advantage holds on both fleets (GM 0.900 → 0.900)" in text
    assert "on avg JCT its advantage appears only on the mixed fleet" in ours.sentence("spt_wait")
    md = "\n".join(fleets_markdown(compare_fleets(scan_runs([tmp_path]), n_resamples=50), ours,
                                   []))
    assert "| `spt_plan` | 0.800 [0.800, 0.800] (5) | 0.900 [0.900, 0.900] (5) |" in md


def test_type_shares_are_recomputable_from_the_job_rows(tmp_path):
    write_runs(tmp_path, {"ldf": 1.0}, gpu_mix="cloud")  # scan_jobs finds jobs/ beside runs/
    write_jobs(tmp_path, gpu_mix="cloud")
    write_jobs(tmp_path, {"bace_pipe": [("4", "", 1.0, 1.0)]}, point="p9")  # one type: not read
    shares = type_shares(scan_jobs([tmp_path]))
    at = fleet_point(shares)
    assert set(at["point"].to_list()) == {"p0"}
    rows = {(r["scheduler"], r["gpu_type"]): r for r in at.iter_rows(named=True)}
    # bace_pipe GPU-h per topology: A100 16, H100 4, A6000 4; energy 6.4, 2.8, 1.2 kWh.
    bp = {t: rows["bace_pipe", t] for t in ("A6000", "A100", "H100")}
    assert bp["A100"]["gpu_h"] == pytest.approx(32.0) and bp["A100"]["topologies"] == 2
    assert bp["A100"]["gpu_h_share"] == pytest.approx(16 / 24)
    assert bp["H100"]["energy_share"] == pytest.approx(2.8 / 10.4)
    # The first job's 6 $ split by GPUs × power: A100 3.2 / 4.6, H100 1.4 / 4.6.
    assert bp["H100"]["cost"] == pytest.approx(2 * 6 * 1.4 / 4.6)
    assert bp["A6000"]["cost_share"] == pytest.approx(1 / 7)
    assert bp["A100"]["cost_split_share"] == pytest.approx(6 / 7)
    assert rows["ldf", "A100"]["cost_share"] == pytest.approx(5 / 6)
    assert rows["ldf", "A100"]["cost_split_share"] == 0.0
    md = "\n".join(type_shares_markdown(at))
    assert "| `bace_pipe` | H100 | 0.70 | 2 | 16.7 % | 26.9 % |" in md
    assert "No per-job rows" in type_shares_markdown(fleet_point(pl.DataFrame()))[2]


def test_report_and_reproduce_write_the_mixed_fleet_sections(tmp_path, monkeypatch, capsys):
    write_runs(tmp_path, {b: 1.3 for b in BASELINES} | {"spt_plan": 0.8})
    write_runs(tmp_path, {b: 1.1 for b in BASELINES} | {"spt_plan": 0.95}, gpu_mix="cloud",
               point="p1")
    write_jobs(tmp_path, gpu_mix="cloud", point="p1")
    assert report_main([str(tmp_path), "--resamples", "20"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "## GPU types (SPEC §16)" in md and "figures/gpu_type_shares.png" in md
    assert (tmp_path / "figures" / "gpu_type_shares.png").stat().st_size > 1000
    monkeypatch.setattr(reproduce, "motivation", lambda: [])
    monkeypatch.setattr(reproduce, "motivation_facts", lambda: [])
    monkeypatch.setattr(motivation_section, "MOTIVATION", ())
    out = tmp_path / "docs"
    assert reproduce.main(["--results", str(tmp_path), "--out", str(out)]) == 0
    doc = (out / "reproduction.md").read_text()
    section = doc.split("## Mixed fleets (SPEC §16)", 1)[1].split("\n## ", 1)[0]
    assert "The mixed fleet changes it: *matches within CI* with gpu_mix=none, *same " \
           "direction* with gpu_mix=cloud; on the paper's side of 1 on both, so the fleet " \
           "changes only whether the size matches (ours 1.300 → 1.100)." in section
    assert "`spt_plan` vs `bace_pipe`: on avg JCT its advantage holds on both fleets" in section
    assert "](figures/random/gpu_type_shares.png)" in section
    assert (out / "figures" / "random" / "gpu_type_shares.png").is_file()
    assert NOT_RUN in section  # the other figures' points were not run on either fleet
    # Runs of 5 topologies; the type shares' 2 (topologies using a type) are not a point's size.
    assert section.split("\n\n")[1] == "*Topologies per point read here: 5.*"


def test_reproduce_runs_the_hetero_preset_when_asked(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(reproduce.subprocess, "call", lambda cmd, cwd: calls.append(cmd) or 0)
    reproduce.run_presets(tmp_path, 3, ["hetero"])
    assert calls[0][3:6] == ["-m", "+preset=hetero", "topologies=3"]
