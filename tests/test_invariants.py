"""The schedule-replay checker: clean on reference schedules, loud on tampered ones."""

import copy
from dataclasses import replace

import numpy as np
import pytest

from bacepipe.model.generate import generate_batch, load_scenario
from bacepipe.model.scenario import parse_scenario
from bacepipe.policies import SCHEDULERS
from bacepipe.sim.invariants import check_schedule
from bacepipe.sim.model import iteration_time_s, job_cost, job_model
from bacepipe.sim.reference import simulate_reference

RANDOM = generate_batch("random", 0, range(50), num_jobs=10)


def _spread_arrivals(scn, rng, horizon_h):
    jobs = tuple(replace(j, arrival_h=float(rng.uniform(0, horizon_h))) for j in scn.jobs)
    return replace(scn, jobs=jobs)


def _with_extensions(scn, rng):
    """Time-of-use prices, geo-like latency and the memory model on one scenario."""
    n = len(scn.regions)
    regions = tuple(replace(r, price_profile=tuple(float(x) for x in rng.uniform(0.5, 1.5, 24)),
                            utc_offset_h=float(rng.integers(-12, 13))) for r in scn.regions)
    latency = rng.uniform(5, 150, (n, n))
    latency = (latency + latency.T) / 2
    np.fill_diagonal(latency, 0.0)
    return replace(scn, regions=regions, memory_model="adam_mixed",
                   latency_ms=tuple(tuple(float(x) for x in row) for row in latency))


def _assert_clean(scn):
    for name in SCHEDULERS:
        result = simulate_reference(scn, name)
        assert check_schedule(scn, result) == [], name


@pytest.mark.parametrize("chunk", range(5))
def test_reference_schedules_are_clean_on_random_scenarios(chunk):
    for i in range(chunk * 10, chunk * 10 + 10):
        _assert_clean(RANDOM.scenario(i))


def test_reference_schedules_are_clean_with_spread_arrivals():
    rng = np.random.default_rng(1)
    for i in range(20):
        _assert_clean(_spread_arrivals(RANDOM.scenario(i), rng, horizon_h=[1, 50, 500][i % 3]))


def test_reference_schedules_are_clean_with_extensions():
    rng = np.random.default_rng(2)
    for i in range(10):
        scn = _with_extensions(RANDOM.scenario(i), rng)
        _assert_clean(_spread_arrivals(scn, rng, horizon_h=100))


def test_reference_schedules_are_clean_on_builtin_scenarios():
    for name in ("paper", "motivation"):
        _assert_clean(load_scenario(name))
    for i in range(5):
        _assert_clean(generate_batch("paper", i, [0], num_jobs=24, bandwidth_scale=0.3,
                                     gpu_scale=0.5).scenario(0))


# --------------------------------------------------------------------------- tampering


def _two_jobs_one_region():
    job = {"name": "A", "params_b": 14, "layers": 4, "hidden": 5120, "batch_size": 512,
           "dataset_samples": 52002}
    return parse_scenario({"regions": [{"name": "R0", "gpus": 4, "price": 0.2}],
                           "links_gbps": [[0]], "jobs": [job, dict(job, name="B")]})


def test_moving_a_job_earlier_overflows_gpus():
    scn = _two_jobs_one_region()
    result = simulate_reference(scn, "lcf")
    assert check_schedule(scn, result) == []
    a, b = result["jobs"]
    assert b["start_h"] == a["end_h"]  # B waited for A's 4 GPUs
    bad = copy.deepcopy(result)
    shift = bad["jobs"][1]["start_h"]
    for key in ("start_h", "end_h", "jct_h"):
        bad["jobs"][1][key] -= shift
    problems = check_schedule(scn, bad)
    assert any("uses 8 GPUs > capacity 4" in p for p in problems)
    assert any(p.startswith("makespan_h") for p in problems)


def test_changed_cost_duration_or_totals_are_reported():
    scn = RANDOM.scenario(3)
    result = simulate_reference(scn, "bace_pipe")
    bad = copy.deepcopy(result)
    bad["jobs"][2]["cost"] *= 1.001
    problems = check_schedule(scn, bad)
    assert any("cost" in p and "Eq. 4" in p for p in problems)
    assert any(p.startswith("total_cost") for p in problems)

    bad = copy.deepcopy(result)
    bad["jobs"][0]["end_h"] += 0.5
    bad["jobs"][0]["jct_h"] += 0.5
    assert any("Eq. 1-2" in p for p in check_schedule(scn, bad))

    bad = copy.deepcopy(result)
    bad["avg_jct_h"] += 1e-3
    assert check_schedule(scn, bad) == [f"avg_jct_h {bad['avg_jct_h']} != "
                                        f"{result['avg_jct_h']} from the jobs"]


def test_structural_violations_are_reported():
    scn = RANDOM.scenario(5)
    result = simulate_reference(scn, "cr_lcf")
    bad = copy.deepcopy(result)
    bad["jobs"][0]["end_h"] = None
    assert any("no finite start and end" in p for p in check_schedule(scn, bad))

    bad = copy.deepcopy(result)
    row = bad["jobs"][1]
    row["path"] = row["path"] + row["path"][:1]
    assert any("repeats a region" in p for p in check_schedule(scn, bad))

    bad = copy.deepcopy(result)
    bad["jobs"][1]["gpus"] = {name: 0 for name in bad["jobs"][1]["gpus"]}
    assert any("< 1 GPU" in p for p in check_schedule(scn, bad))

    bad = copy.deepcopy(result)
    bad["jobs"][1]["k_star"] += 1
    assert any("k_star" in p for p in check_schedule(scn, bad))


def test_starting_before_arrival_is_reported():
    scn = _spread_arrivals(RANDOM.scenario(7), np.random.default_rng(3), horizon_h=10)
    result = simulate_reference(scn, "ldf")
    late = max(range(len(scn.jobs)), key=lambda j: scn.jobs[j].arrival_h)
    bad = copy.deepcopy(result)
    shift = bad["jobs"][late]["start_h"] - scn.jobs[late].arrival_h + 1.0
    for key in ("start_h", "end_h", "jct_h"):
        bad["jobs"][late][key] -= shift
    assert any("before it arrives" in p for p in check_schedule(scn, bad))


def test_link_overload_is_reported():
    job = {"name": "A", "params_b": 14, "layers": 2, "hidden": 5120, "batch_size": 512,
           "dataset_samples": 52002}
    scn = parse_scenario({"regions": [{"name": "X", "gpus": 1, "price": 0.2},
                                      {"name": "Y", "gpus": 1, "price": 0.3}],
                          "links_gbps": [[0, 0.1], [0.1, 0]], "jobs": [job]})
    jm = job_model(scn.jobs[0], scn.hardware, 2)
    exec_s = jm.iterations * iteration_time_s(jm, scn, [0, 1], [1, 1])
    # a hand-made schedule: X→Y needs a / t_comp(2) ≈ 0.36 Gbit/s > 0.1
    result = {"scheduler": "hand", "avg_jct_h": exec_s / 3600, "makespan_h": exec_s / 3600,
              "total_cost": job_cost(scn, [0, 1], [1, 1], 0.0, exec_s),
              "jobs": [{"name": "A", "k_star": jm.k_star, "start_h": 0.0,
                        "end_h": exec_s / 3600, "jct_h": exec_s / 3600,
                        "cost": job_cost(scn, [0, 1], [1, 1], 0.0, exec_s),
                        "path": ["X", "Y"], "gpus": {"X": 1, "Y": 1}}]}
    problems = check_schedule(scn, result)
    assert len(problems) == 2 and all("link" in p and "> nominal 0.1" in p for p in problems)
