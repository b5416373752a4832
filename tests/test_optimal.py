"""OPT of SPEC §15 (bacepipe.optimal): against an exhaustive search written here, against every
scheduler and the lower bound, its duration tables against every explicit placement, the CLI."""

import json
import math
from itertools import permutations, product

import numpy as np
import pytest

import bacepipe
from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch
from bacepipe.model.scenario import Scenario, parse_scenario
from bacepipe.optimal import rounding_slack_h, solve, solve_batch
from bacepipe.optimal.__main__ import main
from bacepipe.optimal.classes import job_classes
from bacepipe.sim.bounds import lower_bound_h
from bacepipe.sim.model import iteration_time_s, job_model, min_bandwidth_bps
from tests.random_scenarios import MODELS, PRICES

# --------------------------------------------------------------------------- tiny instances


def tiny_scenario(seed: int, regions: int, jobs: int, max_gpus: int) -> Scenario:
    """A small scenario that exercises every part of the class: thin, asymmetric and missing
    links (bandwidth binds), directional latency (path order matters), the memory minimum,
    staggered arrivals (waiting for a later job)."""
    rng = np.random.default_rng(seed)
    links = 10 ** rng.uniform(-1.3, 1.0, size=(regions, regions))
    if rng.random() < 0.5:
        links = np.triu(links, 1) + np.triu(links, 1).T
    links[rng.random((regions, regions)) < 0.15] = 0.0
    np.fill_diagonal(links, 0.0)
    data = {
        "regions": [{"name": f"r{r}", "gpus": int(rng.integers(1, max_gpus + 1)),
                     "price": float(rng.choice(PRICES))} for r in range(regions)],
        "links_gbps": links.round(4).tolist(),
        "jobs": [],
    }
    if rng.random() < 0.5:
        latency = rng.uniform(0, 80, size=(regions, regions))
        np.fill_diagonal(latency, 0.0)
        data["latency_ms"] = latency.round(2).tolist()
    memory = rng.random() < 0.3
    if memory:
        data["memory_model"] = "adam_mixed"
        data["hardware"] = {"gpu_mem_gb": 80.0}
    small = [m for m in MODELS if m[1] <= 14] if memory else MODELS
    staggered = rng.random() < 0.5
    for j in range(jobs):
        model, params_b, layers, hidden, batch = small[int(rng.integers(len(small)))]
        data["jobs"].append({
            "name": f"j{j}", "model": model, "params_b": params_b, "layers": layers,
            "hidden": hidden, "batch_size": batch,
            "dataset_samples": int(rng.choice([5_000, 52_002, 200_000])),
            "arrival_h": float(rng.uniform(0, 3)) if staggered and j else 0.0})
    return parse_scenario(data)


def tiny_instances(count: int, seed0: int, **shape):
    """``count`` tiny scenarios every job of which has a placement (others are skipped)."""
    out, seed = [], seed0
    while len(out) < count:
        scenario = tiny_scenario(seed, **shape)
        seed += 1
        try:
            job_classes(scenario)
        except InputError:
            continue
        out.append(scenario)
    return out


# --------------------------------------------------------------------------- an independent search


def explicit_placements(scenario: Scenario, j: int) -> list[tuple]:
    """Every placement of job j in SPEC §15's class, each (path, GPUs per path region, demand
    kbit/s, duration s): every ordered path of distinct regions, every split n_r in 1..G_r with
    m_j ≤ L ≤ K*_j, and every hop direction able to carry ceil(b_j(L)/1000) kbit/s within
    floor(B·1e6) kbit/s."""
    regions, links = scenario.regions, scenario.links_gbps
    total = sum(r.gpus for r in regions)
    jm = job_model(scenario.jobs[j], scenario.hardware, total, scenario.memory_model, j)
    out = []
    for m in range(1, len(regions) + 1):
        for path in permutations(range(len(regions)), m):
            for counts in product(*(range(1, regions[r].gpus + 1) for r in path)):
                gpus = sum(counts)
                if not jm.min_gpus <= gpus <= jm.k_star:
                    continue
                demand = math.ceil(min_bandwidth_bps(jm, gpus) / 1000) if m > 1 else 0
                if any(demand > math.floor(links[a][b] * 1e6)
                       for u, v in zip(path[:-1], path[1:], strict=False)
                       for a, b in ((u, v), (v, u))):
                    continue
                exec_s = jm.iterations * iteration_time_s(jm, scenario, path, counts)
                out.append((path, counts, demand, math.ceil(exec_s)))
    return out


def fits(scenario: Scenario, runs: list[tuple]) -> bool:
    """Whether ``runs`` (start, end, placement) never exceed a region's GPUs or a link
    direction's kbit/s. Usage only rises at a start, so the starts are the instants to check."""
    regions, links = scenario.regions, scenario.links_gbps
    for t, _, _ in runs:
        gpus = [0] * len(regions)
        load: dict[tuple[int, int], int] = {}
        for start, end, (path, counts, demand, _) in runs:
            if start <= t < end:
                for r, n in zip(path, counts, strict=True):
                    gpus[r] += n
                for u, v in zip(path[:-1], path[1:], strict=False):
                    for hop in ((u, v), (v, u)):
                        load[hop] = load.get(hop, 0) + demand
        if any(g > r.gpus for g, r in zip(gpus, regions, strict=True)):
            return False
        if any(kbps > math.floor(links[u][v] * 1e6) for (u, v), kbps in load.items()):
            return False
    return True


def exhaustive_opt_h(scenario: Scenario) -> float:
    """OPT by enumeration: every placement of every job, every start order, and for each job in
    that order a start at its release ceil(arrival) or at the end of a job started before it.

    Why these starts suffice: fix the placements and take an optimal grid schedule with the
    least sum of starts. If some job j started at s_j above both its release and every end
    e_i ≤ s_j, move it to t' = max(release_j, max{e_i ≤ s_j}) < s_j. A job i running at some
    instant of [t', s_j) has s_i < s_j and e_i > t'; e_i ≤ s_j would contradict t' ≥ e_i, so i
    still runs at s_j. So the jobs beside j anywhere in [t', s_j + d_j) ran beside it at s_j or
    later in its old interval: the moved schedule fits, with a smaller sum of starts and no
    larger avg JCT, a contradiction. Every such anchor is an earlier start's end, so scanning
    the jobs in start order reaches every such schedule. (Waiting is allowed: a job may start
    at another's end while GPUs stood free before.)
    """
    jobs = scenario.jobs
    release = [math.ceil(job.arrival_h * 3600) for job in jobs]
    options = [explicit_placements(scenario, j) for j in range(len(jobs))]

    def best_end_sum(order, placement, runs, last_start):
        if len(runs) == len(order):
            return sum(end for _, end, _ in runs)
        j = order[len(runs)]
        best = math.inf
        for start in {release[j]} | {end for _, end, _ in runs}:
            if start < max(release[j], last_start):
                continue
            run = (start, start + placement[j][3], placement[j])
            if fits(scenario, runs + [run]):
                best = min(best, best_end_sum(order, placement, runs + [run], start))
        return best

    best = math.inf
    for placement in product(*options):
        for order in permutations(range(len(jobs))):
            best = min(best, best_end_sum(order, placement, [], -math.inf))
    arrivals = sum(job.arrival_h * 3600 for job in jobs)
    return (best - arrivals) / len(jobs) / 3600


# --------------------------------------------------------------------------- checks of a result


def check_schedule(scenario: Scenario, result: dict) -> None:
    """The returned schedule is in the class on the grid and its numbers add up."""
    index = {r.name: i for i, r in enumerate(scenario.regions)}
    runs = []
    for j, (job, row) in enumerate(zip(scenario.jobs, result["jobs"], strict=True)):
        path = tuple(index[name] for name in row["path"])
        counts = tuple(row["gpus"][name] for name in row["path"])
        match = [p for p in explicit_placements(scenario, j) if (p[0], p[1]) == (path, counts)]
        assert len(match) == 1, (j, path, counts)
        start, end = round(row["start_h"] * 3600), round(row["end_h"] * 3600)
        assert start >= math.ceil(job.arrival_h * 3600)
        assert end - start == match[0][3]
        np.testing.assert_allclose(row["jct_h"], row["end_h"] - job.arrival_h, atol=1e-9)
        runs.append((start, end, match[0]))
    assert fits(scenario, runs)
    np.testing.assert_allclose(np.mean([row["jct_h"] for row in result["jobs"]]),
                               result["opt_avg_jct_h"], rtol=1e-12)


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("scenario", tiny_instances(12, 0, regions=2, jobs=2, max_gpus=3))
def test_opt_equals_exhaustive_search(scenario):
    result = solve(scenario, time_limit_s=30, workers=2, hint=False)
    assert result["proven"]
    np.testing.assert_allclose(result["opt_avg_jct_h"], exhaustive_opt_h(scenario), rtol=1e-12)
    check_schedule(scenario, result)


@pytest.mark.parametrize("scenario", tiny_instances(3, 500, regions=2, jobs=3, max_gpus=2))
def test_opt_equals_exhaustive_search_three_jobs(scenario):
    result = solve(scenario, time_limit_s=30, workers=2, hint=False)
    assert result["proven"]
    np.testing.assert_allclose(result["opt_avg_jct_h"], exhaustive_opt_h(scenario), rtol=1e-12)


def test_duration_tables_exact():
    """For every explicit placement (every order, every split) of 3-region instances with
    latency and thin links, its class (same regions, same binding hops) allows its L with its
    demand, and the class's duration at L is the least ceil(E) of the class's placements; and
    every (class, L) is some explicit placement."""
    for scenario in tiny_instances(8, 100, regions=3, jobs=2, max_gpus=4):
        for j, job in enumerate(job_classes(scenario)):
            best: dict[tuple, tuple[int, int]] = {}
            for path, counts, demand, duration in explicit_placements(scenario, j):
                k = job.find(path)
                assert k is not None and set(job.classes[k].regions) == set(path)
                key = (k, sum(counts))
                binding = demand if job.classes[k].hops else 0
                if key not in best or duration < best[key][1]:
                    best[key] = (binding, duration)
            tables = {(k, c.l_min + i): (c.demand_kbps[i], c.duration_s[i])
                      for k, c in enumerate(job.classes) for i in range(c.l_max - c.l_min + 1)}
            assert tables == best


@pytest.mark.parametrize("shape", [dict(regions=2, jobs=3, max_gpus=8),
                                   dict(regions=3, jobs=4, max_gpus=8),
                                   dict(regions=3, jobs=3, max_gpus=4)])
def test_every_scheduler_at_least_opt_at_least_lb(shape):
    for scenario in tiny_instances(6, 1000 + 10 * shape["jobs"], **shape):
        result = solve(scenario, time_limit_s=30, workers=2)
        assert result["proven"]
        check_schedule(scenario, result)
        opt = result["opt_avg_jct_h"]
        assert lower_bound_h(scenario) <= opt * (1 + 1e-12)
        assert result["lower_bound_h"] <= opt * (1 + 1e-12)
        slack = rounding_slack_h(len(scenario.jobs))
        for name in bacepipe.SCHEDULERS:
            try:
                avg = bacepipe.run_scenario(scenario, name)["avg_jct_h"]
            except InputError:  # this scheduler can never place some job
                continue
            assert avg >= opt - slack, (name, avg, opt)
        assert result["hint"]["avg_jct_h"] >= opt - slack


def test_random_topologies_of_the_sweep():
    """The shape the optimality preset sweeps: 3 random regions at gpu_scale 1/16, 4 jobs (most
    are proven in a second; the check holds for the best found too)."""
    batch = generate_batch("random", 3, range(3), num_regions=3, num_jobs=4, gpu_scale=0.0625)
    for t in range(batch.size):
        scenario = batch.scenario(t)
        result = solve(scenario, time_limit_s=5, workers=2)
        check_schedule(scenario, result)
        assert lower_bound_h(scenario) <= result["lower_bound_h"] <= result["opt_avg_jct_h"]
        assert result["hint"]["avg_jct_h"] >= result["opt_avg_jct_h"] - rounding_slack_h(4)


def test_solve_batch_matches_solve():
    batch = generate_batch("random", 5, range(3), num_regions=2, num_jobs=2, gpu_scale=0.0625)
    out = solve_batch(batch, [2, 0], time_limit_s=10, workers=2)
    assert out["opt_proven"].all()
    for i, t in enumerate([2, 0]):
        expected = solve(batch.scenario(t), time_limit_s=10, workers=2)["opt_avg_jct_h"]
        np.testing.assert_allclose(out["opt_avg_jct_h"][i], expected, rtol=1e-12)


def test_time_limit_returns_best_found_and_bound():
    """Too large to prove in a moment: the best schedule found (no worse than the hint) and a
    bound below it."""
    scenario = generate_batch("random", 0, [0], num_regions=4, num_jobs=8).scenario(0)
    result = solve(scenario, time_limit_s=0.5, workers=2)
    assert result["status"] in ("optimal", "feasible", "hint")
    assert result["lower_bound_h"] <= result["opt_avg_jct_h"] * (1 + 1e-12)
    assert result["opt_avg_jct_h"] <= result["hint"]["avg_jct_h"] + rounding_slack_h(8)
    assert len(result["jobs"]) == 8


def test_progress_line(capsys):
    solve("motivation", time_limit_s=10, workers=1, progress=True)
    assert "bacepipe.optimal: best" in capsys.readouterr().err
    solve("motivation", time_limit_s=10, workers=1, progress=False)
    assert capsys.readouterr().err == ""


def test_cli_json_and_table(capsys):
    assert main(["motivation", "--json", "--time-limit", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["proven"] and [j["name"] for j in out["jobs"]] == ["P", "Q"]
    assert main(["motivation", "--time-limit", "10"]) == 0
    assert "OPT avg JCT" in capsys.readouterr().out


def test_heterogeneous_gpus_refused():
    scenario = tiny_scenario(0, regions=2, jobs=2, max_gpus=2).to_dict()
    scenario["regions"][0]["gpu_type"] = "H100"
    with pytest.raises(InputError, match="^regions: "):
        solve(scenario, time_limit_s=1)


@pytest.mark.parametrize("argv,field", [(["no-such.yaml"], "scenario"),
                                        (["motivation", "--time-limit", "0"], "time_limit_s"),
                                        (["motivation", "--time-limit", "x"], "--time-limit")])
def test_cli_bad_input_is_one_line(capsys, argv, field):
    try:
        status = main(argv)
    except SystemExit as stop:  # argparse's own errors
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and field in err
