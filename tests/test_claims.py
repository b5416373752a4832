"""SPEC §11 claims (``bacepipe.analysis.claims``) and ``python -m bacepipe.reproduce`` on
hand-made runs datasets (``tests/results_dirs.py``) whose verdicts are known by construction."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from results_dirs import BASE, ratio_rows, write_rows

from bacepipe.analysis import bootstrap_ci, scan_runs
from bacepipe.analysis.claims import (
    CLAIMS,
    EXPLANATIONS,
    GROUPS,
    MATCH,
    NOT_RUN,
    OPPOSITE,
    SAME,
    Claim,
    Estimate,
    evaluate_claims,
    explain,
    judge,
)
from bacepipe.analysis.model_facts import model_facts
from bacepipe.reproduce import main
from bacepipe.reproduce.markdown import claims_markdown
from bacepipe.reproduce.motivation_section import MOTIVATION

BASELINES = ("lcf", "ldf", "cr_lcf", "cr_ldf")
#: The other metrics, the same on every row.
METRIC_VALUES = {"energy_kwh": 1.0, "makespan_h": 1.0, "mean_wait_h": 0.0, "mean_gpus": 4.0,
                 "multi_region_share": 0.5, "gpu_utilization": 0.5}


def write_point(root: Path, jct: dict, cost: dict | None = None, base=BASE, point="p-all",
                **axes) -> None:
    """One point of :func:`ratio_rows` as the sweep engine writes it."""
    write_rows(root, ratio_rows(jct, cost, base).with_columns(**METRIC_VALUES), point=point,
               **axes)


def results_by_key(root: Path, scenarios=("paper", "random")) -> dict:
    return {(r.claim.key, r.scenario): r
            for r in evaluate_claims(scan_runs([root]), scenarios=scenarios, n_resamples=200)}


# --- verdicts known by construction ---------------------------------------------------------


def test_exact_ratio_inside_the_paper_range_matches_and_a_missing_scenario_is_not_run(tmp_path):
    write_point(tmp_path, {b: 1.3 for b in BASELINES}, {b: 1.2 for b in BASELINES})
    res = results_by_key(tmp_path)
    jct = res["fig4_jct", "random"]
    assert jct.verdict == MATCH
    assert [e.scheduler for e in jct.estimates] == list(BASELINES)
    assert all(e.mean == pytest.approx(1.3) and e.low == pytest.approx(1.3) and e.n == 5
               for e in jct.estimates)
    assert res["fig4_cost", "random"].verdict == MATCH
    paper = res["fig4_jct", "paper"]
    assert paper.verdict == NOT_RUN and paper.estimates == ()
    assert "no results at scenario=paper" in paper.reason
    assert res["bw03_ldf", "random"].verdict == NOT_RUN  # the point was never run


@pytest.mark.parametrize(
    ("factors", "verdict"),
    [({"lcf": 1.3, "ldf": 0.8, "cr_lcf": 1.3, "cr_ldf": 1.3}, "mixed: ldf opposite"),
     ({b: 0.8 for b in BASELINES}, OPPOSITE),
     ({b: 1.1 for b in BASELINES}, SAME),
     ({"lcf": 1.28, "ldf": 1.64, "cr_lcf": 1.5, "cr_ldf": 1.6}, MATCH)],
)
def test_range_verdicts(tmp_path, factors, verdict):
    write_point(tmp_path, factors)
    assert results_by_key(tmp_path, ["random"])["fig4_jct", "random"].verdict == verdict


def test_single_value_claims_and_the_ldf_normalized_paradox(tmp_path):
    jct = {"ldf": 1.0, "cr_ldf": 1.288, "cr_lcf": 1.05, "bace_pipe_no_costmin": 0.9,
           "bace_pipe_no_pathfinder": 2.0, "bace_pipe_no_priority": 1.0}
    write_point(tmp_path, jct)
    res = results_by_key(tmp_path, ["random"])
    assert res["paradox_cr_ldf", "random"].verdict == MATCH  # 1.288 × ldf, not × bace_pipe
    assert res["paradox_cr_ldf", "random"].estimates[0].mean == pytest.approx(1.288)
    lcf = res["paradox_cr_lcf", "random"]
    assert lcf.verdict == SAME and "smaller effect" in lcf.reason
    assert res["abl_costmin_jct", "random"].verdict == OPPOSITE
    assert "ours shorter" in res["abl_costmin_jct", "random"].reason
    assert "larger effect" in res["abl_pathfinder_jct", "random"].reason
    no_effect = res["abl_priority_jct", "random"]
    assert no_effect.verdict == OPPOSITE and "no effect" in no_effect.reason


def test_missing_schedulers_are_named_never_filled_in(tmp_path):
    write_point(tmp_path, {"lcf": 1.3, "ldf": 1.3})
    res = results_by_key(tmp_path, ["random"])
    partial = res["fig4_jct", "random"]
    assert partial.verdict == MATCH and partial.missing == ("cr_lcf", "cr_ldf")
    assert "only 2 of 4" in partial.reason and "cr_lcf (not run)" in partial.reason
    gone = res["jobs24_cr_ldf", "random"]
    assert gone.verdict == NOT_RUN
    single = res["paradox_cr_ldf", "random"]
    assert single.verdict == NOT_RUN and "cr_ldf (not run)" in single.reason


def test_ci_is_the_bootstrap_of_the_per_topology_ratios(tmp_path):
    ratios = [1.1, 1.5, 0.9, 1.3, 1.2]
    write_point(tmp_path, {"cr_ldf": ratios})
    est = results_by_key(tmp_path, ["random"])["jobs24_cr_ldf", "random"]
    assert est.verdict == NOT_RUN  # num_jobs=8 only
    write_point(tmp_path, {"cr_ldf": ratios}, num_jobs=24)
    (e,) = results_by_key(tmp_path, ["random"])["jobs24_cr_ldf", "random"].estimates
    low, high = bootstrap_ci(np.array(ratios), 200, 0)
    assert (e.mean, e.low, e.high, e.n) == (pytest.approx(np.mean(ratios)), low, high, 5)


def test_one_point_is_chosen_when_two_share_the_axes(tmp_path):
    """fig4 and fig8 both run the default point (different point ids): never pooled."""
    write_point(tmp_path, {"bace_pipe_no_priority": 1.4})
    longer = [1.0] * 8
    write_point(tmp_path, {"bace_pipe_no_priority": 1.419}, base=longer, point="p-abl")
    (e,) = results_by_key(tmp_path, ["random"])["abl_priority_jct", "random"].estimates
    assert e.n == 8 and e.mean == pytest.approx(1.419)


def test_judge_edges():
    claim = Claim("k", "fig4", "t", {}, "jct", ("a", "b"), 1.2, 1.4)
    touching = [Estimate("a", 1.1, 1.0, 1.2, 9), Estimate("b", 1.5, 1.4, 1.6, 9)]
    assert judge(claim, touching)[0] == MATCH
    one = Claim("k", "fig4", "t", {}, "cost", ("a",), 1.5, 1.5)
    verdict, reason = judge(one, [Estimate("a", 1.02, 0.98, 1.06, 9)])
    assert verdict == SAME and "our CI includes 1" in reason and "n=9" in reason


def test_claims_cover_spec_11_and_every_group_has_an_explanation():
    assert len(CLAIMS) == 19 and len({c.key for c in CLAIMS}) == 19
    assert {c.group for c in CLAIMS} == set(GROUPS) == set(EXPLANATIONS)
    assert {c.baseline for c in CLAIMS if c.group == "paradox"} == {"ldf"}
    assert all(c.low <= c.high and c.low > 1 for c in CLAIMS)


def test_markdown_rows_and_stable_explanations(tmp_path):
    write_point(tmp_path, {b: 1.3 for b in BASELINES})
    md = "\n".join(claims_markdown(evaluate_claims(scan_runs([tmp_path]), n_resamples=50)))
    assert ("| baselines: avg JCT 27.9–64.7 % longer | 1.279–1.647 | random | lcf 1.300 "
            "[1.300, 1.300]") in md
    assert "| **matches within CI** |" in md and "| **not run** |" in md
    assert "(vs ldf)" in md
    filled = explain(model_facts())
    for group in GROUPS:
        assert f'`EXPLANATIONS["{group}"]`' in md and filled[group] in md


# --- numbers in the explanations are computed -------------------------------------------------

#: Numbers a template may hold as text: references (SPEC §n, Eq. n, Fig. n, Table n), the sweep
#: point a claim is about (its scale or job count), the topology and seed a fact was computed on,
#: and the notation of a formula.
_REFERENCE = re.compile(
    r"§\d+|Eq\. \d+(–\d+)?|Fig\. \d+|(\d+(\.\d+)?×)|\b24 jobs|topology 0 of seed 0|t = 0|"
    r"arrives at 0|α close to 0|near 1|\(L−1\)/M|b_j\(g\)|Table I+")


def test_no_number_in_an_explanation_is_typed_by_hand():
    for group, template in EXPLANATIONS.items():
        text = _REFERENCE.sub("", re.sub(r"\{[a-z_0-9]+\}", "", template))
        assert not re.search(r"\d", text), (group, re.findall(r".{20}\d.{20}", text))


def test_explanation_numbers_are_the_current_model_on_the_shipped_data():
    from bacepipe.model.generate import load_scenario
    from bacepipe.sim.model import job_model, min_bandwidth_bps

    facts = model_facts()
    filled = explain(facts)
    assert "{" not in "".join(filled.values())  # every placeholder has a fact
    sc = load_scenario("paper")
    total = sum(r.gpus for r in sc.regions)
    models = [job_model(j, sc.hardware, total) for j in sc.jobs]
    need = sum(min_bandwidth_bps(m, m.k_star) for m in models) / 1e9
    assert facts["bstar_sum"] == f"{need:.1f}" and f"need {need:.1f} Gbit/s" in filled["bandwidth"]
    assert facts["sum_kstar"] == f"{sum(m.k_star for m in models):,}"
    assert facts["gpus_total"] == f"{total:,}"
    kstar = [m.k_star for m in models]
    assert f"({min(kstar)}–{max(kstar)} GPUs for Table III)" in filled["fig4"]


# --- python -m bacepipe.reproduce -------------------------------------------------------------


def test_reproduce_writes_the_document_figures_and_motivation(tmp_path, capsys):
    results, out = tmp_path / "res", tmp_path / "docs"
    for scenario in ("paper", "random"):
        write_point(results, {b: 1.3 for b in BASELINES}, scenario=scenario)
    (out / "figures" / "random").mkdir(parents=True)
    (out / "figures" / "random" / "stale.png").write_bytes(b"old")
    assert main(["--results", str(results), "--out", str(out)]) == 0
    doc = (out / "reproduction.md").read_text()
    lines = doc.splitlines()
    assert lines[0].startswith("# Reproduction")
    assert f"`python -m bacepipe.reproduce --results {results} --out {out}`" in lines[2]
    head = "\n".join(lines[:12])
    assert "- date: " in head and "cores" in head and "- bacepipe " in head
    assert "- topologies per point: 5" in head
    assert "| baselines: avg JCT 27.9–64.7 % longer | 1.279–1.647 | paper |" in doc
    motivation = doc.split("## Motivation", 1)[1].split("## Figures", 1)[0]
    for label, name, jct, cost in MOTIVATION:
        if name != "q_first":
            assert f"`{name}`" in motivation
        assert f"| {label} |" in motivation and f"| {jct:.2f} |" in motivation
        assert f"| {cost:.2f} |" in motivation
    assert "BACE-Pipe's priority at t = 0" in motivation
    for scenario in ("paper", "random"):
        assert (out / "figures" / scenario / "fig4_normalized.png").is_file()
        assert f"](figures/{scenario}/fig4_normalized.png)" in doc
        assert (results / "report" / scenario / "report.md").is_file()
    assert not (out / "figures" / "random" / "stale.png").exists()
    assert (results / "report" / "report.md").is_file()


def test_reproduce_bad_results_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["--results", str(tmp_path / "nope"), "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("reproduce: ")


def test_analysis_claims_never_imports_the_simulator():
    code = ("import sys, bacepipe.analysis.claims; "
            "sys.exit(any(m.startswith('bacepipe.core') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
