"""The explanations of the SPEC §12 worlds (``bacepipe.analysis.world_facts``): no number typed
by hand, model facts equal to the model on the shipped data, measured facts recomputed here from
hand-made runs and jobs rows, and sentences without their rows left out."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from results_dirs import write_rows

from bacepipe.analysis import scan_runs
from bacepipe.analysis.mechanism import scan_jobs
from bacepipe.analysis.world_facts import (
    TEMPLATES,
    explain_worlds,
    measured_facts,
    model_world_facts,
)

#: Numbers a template may hold as text: references (SPEC §n, Fig. n, Table n, a claims key, the
#: scenario aws10) and t = 0.
_REFERENCE = re.compile(r"§\d+[a-z]?|Fig\. \d+|Table I+|t = 0|\"fig4\"|aws10")


def test_no_number_in_a_template_is_typed_by_hand():
    for key, sentences in TEMPLATES.items():
        for s in sentences:
            text = _REFERENCE.sub("", re.sub(r"\{[a-z_0-9]+\}", "", s))
            assert not re.search(r"\d", text), (key, re.findall(r".{20}\d.{20}", text))


def test_model_facts_are_the_model_on_the_shipped_data():
    from bacepipe.model.generate import load_scenario
    from bacepipe.model.scenario import EARTH_RADIUS_KM, GEO_MS_PER_KM
    from bacepipe.model.tables import PRICE_PROFILES

    f = model_world_facts()
    m = [math.ceil(16 * j.params_b / (0.9 * 48)) for j in load_scenario("paper").jobs]
    assert (f["m_lo"], f["m_hi"]) == (str(min(m)), str(max(m)))
    assert f["lat_max_ms"] == f"{math.pi * EARTH_RADIUS_KM * GEO_MS_PER_KM:.0f}"
    assert f["tou_max"] == f"{max(PRICE_PROFILES['business']):g}"
    # US-East-2 is the cheapest on average (Table II) and at t = 0 UTC it is 19:00 there.
    assert (f["tou_avg"], f["tou_avg_hour"]) == ("US-East-2", "19:00")
    links = [b for row in load_scenario("aws10").links_gbps for b in row if b > 0]
    assert f["aws_links_lo"] == f"{min(links):.2f}"
    filled = explain_worlds(f)
    assert "{" not in "".join(filled.values())
    # Without measured facts, every "measured here" sentence is left out.
    assert not any("Measured here" in text for text in filled.values())


def write_runs(root, values: dict, **where):
    """``values[s]``: (avg JCT, cost, mean wait, mean GPUs, multi-region share) per topology;
    ``where``: the point's axes and switches (``tests/results_dirs.py``), in the paper's
    scenario."""
    rows = [{"seed": 0, "topology": t, "scheduler": s, "avg_jct_h": v[0][t],
             "total_cost": v[1][t], "mean_wait_h": v[2][t], "mean_gpus": v[3][t],
             "multi_region_share": v[4][t]}
            for s, v in values.items() for t in range(len(v[0]))]
    write_rows(root, rows, scenario="paper", **where)


def runs(jct, cost=(10.0, 20.0), wait=(1.0, 2.0), gpus=(4.0, 4.0), multi=(0.0, 0.5)):
    return tuple(np.asarray(x, float) for x in (jct, cost, wait, gpus, multi))


def test_measured_facts_are_recomputed_from_the_rows(tmp_path):
    none = {"bace_pipe": runs([10.0, 20.0]), "cr_ldf": runs([10.0, 30.0]),
            "ldf": runs([12.0, 20.0], cost=(11.0, 21.0)), "lcf": runs([15.0, 20.0])}
    write_runs(tmp_path, none)
    write_runs(tmp_path, {"bace_pipe": runs([10.0, 20.0], wait=(2.0, 4.0), gpus=(4.5, 4.0)),
                          "cr_ldf": runs([10.0, 20.0]), "ldf": runs([12.0, 20.0]),
                          "lcf": runs([15.0, 24.0])}, point="p1", latency="geo")
    write_runs(tmp_path, {"bace_pipe": runs([5.0, 10.0], wait=(3.0, 5.0)),
                          "cr_ldf": runs([8.0, 12.0], wait=(6.0, 8.0))},
               point="p2", memory_model="adam_mixed")
    write_runs(tmp_path, {"bace_pipe": runs([10.0, 20.0], cost=(12.0, 24.0)),
                          "ldf": runs([12.0, 20.0], cost=(10.0, 20.0))},
               point="p3", price_profile="business")
    f = measured_facts(scan_runs([tmp_path]))
    assert f["none_eq_paper"] == "50.0"  # cr_ldf = bace_pipe on topology 0 only
    assert f["mem_wait_bace"] == "1.5 → 4.0" and f["mem_jct_crldf"] == "20 → 10"
    assert f["lat_gpus_diff"] == "0.25" and f["lat_multi_diff"] == "0"
    # Execution = avg JCT − mean wait: 13.5 → 12 h, −11.1 %.
    assert f["lat_exec_pct"] == "11"
    # lcf / bace_pipe on avg JCT: mean 1.25 → 1.35; cr_ldf / ldf: mean (0.833+1.5)/2 → 0.917.
    assert f["lat_ratio_move"] == f"{abs((10 / 12 + 1) / 2 - (10 / 12 + 1.5) / 2):.3f}"
    assert f["tou_cost_bace"] == "+20.0" and f["tou_cost_ldf"] == "-6.2"
    assert "arr_eq_paper" not in f and "aws_eq" not in f  # those worlds were not run
    text = explain_worlds({**model_world_facts(), **f})
    assert "mean wait 1.5 → 4.0 h under BACE-Pipe" in text["memory_model"]
    assert "Measured here" not in text["arrivals"]


def test_job_facts_from_per_job_rows(tmp_path):
    write_runs(tmp_path, {"bace_pipe": runs([10.0, 20.0])}, point="p0")
    rows = [{"seed": 0, "topology": t, "scheduler": s, "job": j, "k_star": 80, "gpus": g,
             "wait_h": 0.0, "jct_h": 10.0, "cost": 1.0, "execution_h": 10.0,
             "path": "EU-West>US-East-2", "name": "FLM-101B"}
            for t in range(2) for s, g in (("bace_pipe", 20), ("ldf", 16)) for j in range(2)]
    write_rows(tmp_path, rows, "jobs", scenario="paper")
    arrive = [{**r, "wait_h": 0.0 if r["job"] == 0 else 1.0} for r in rows]
    write_runs(tmp_path, {"bace_pipe": runs([10.0, 20.0])}, point="p1", arrivals="poisson",
               arrival_rate_per_h=0.5)
    write_rows(tmp_path, arrive, "jobs", scenario="paper", point="p1", arrivals="poisson",
               arrival_rate_per_h=0.5)
    f = measured_facts(scan_runs([tmp_path]), scan_jobs([tmp_path]))
    assert f["ldf_min_gpus"] == "16" and f["arr_start_paper"] == "50"
    assert (f["arr_rate"], f["arr_gap_h"]) == ("0.5", "2")
    assert "arr_start_random" not in f


@pytest.mark.parametrize("key", list(TEMPLATES))
def test_every_explanation_keeps_its_fact_free_sentences(key):
    text = explain_worlds({})[key]
    assert text and "{" not in text
