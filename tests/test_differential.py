"""The numba core against its plain-Python twin (SPEC §1–7, §12–14) on seeded random scenarios,
for every registered scheduler (so every built-in part) and both start rules.

Both must produce the same schedule: K*, path, GPUs per region, start and end times and costs
(relative 1e-9), the same run metrics, and the same input error when a job can never be placed.
"""

import dataclasses
import math

import numpy as np
import pytest
from random_scenarios import random_scenario
from tiers import full, share

import bacepipe
from bacepipe.core import METRICS, simulate_batch
from bacepipe.core.loop import find_lanes, lane_table_size
from bacepipe.core.model import C_ARRIVAL_S, N_CONST
from bacepipe.core.structs import MEMO_MIN_JOBS
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import START_RULES, Rules, split_rules
from bacepipe.model.scenario import parse_scenario
from bacepipe.policies import SCHEDULER_PARTS
from bacepipe.sim.reference import simulate_reference

RTOL = 1e-9


def _run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except bacepipe.InputError as err:
        return err


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-12)


def assert_same_schedule(fast, slow, label: str) -> None:
    if isinstance(fast, Exception) or isinstance(slow, Exception):
        assert isinstance(fast, bacepipe.InputError) and isinstance(slow, bacepipe.InputError), \
            f"{label}: {fast!r} vs {slow!r}"
        assert fast.field == slow.field, label
        return
    for a, b in zip(fast["jobs"], slow["jobs"], strict=True):
        where = f"{label}, job {a['name']}"
        assert a["k_star"] == b["k_star"], where
        assert a["path"] == b["path"] and a["gpus"] == b["gpus"], where
        for key in ("start_h", "end_h", "jct_h", "cost"):
            assert _close(a[key], b[key]), f"{where}: {key} {a[key]!r} vs {b[key]!r}"
    for key in METRICS:
        assert _close(fast[key], slow[key]), f"{label}: {key} {fast[key]!r} vs {slow[key]!r}"


def assert_every_scheduler_agrees(data: dict, label: str) -> None:
    """The core and the twin on scenario ``data`` (SPEC §9 shape, its rules' keys included),
    under every scheduler."""
    world, rules = split_rules(data)
    scenario = parse_scenario(world)
    for scheduler in SCHEDULER_PARTS:
        assert_same_schedule(_run(bacepipe.run_scenario, scenario, scheduler,
                                  **dataclasses.asdict(rules)),
                             _run(simulate_reference, scenario, scheduler, rules),
                             f"{label}, {scheduler}, {rules.start_rule}")


@pytest.mark.parametrize("extensions", [False, True], ids=["paper-world", "extensions"])
@pytest.mark.breadth
@pytest.mark.parametrize("block", share(range(4)))
def test_core_matches_reference(block, extensions):
    """4 blocks × 60 scenarios × every scheduler, per world (greedy unless a scheduler fixes its
    own start rule)."""
    for seed in range(block * 60, block * 60 + (60 if full() else 30)):
        data = random_scenario(np.random.default_rng([seed, extensions]), extensions=extensions)
        assert_every_scheduler_agrees(data, f"seed {seed}")


@pytest.mark.parametrize("extensions", [False, True], ids=["paper-world", "extensions"])
@pytest.mark.breadth
@pytest.mark.parametrize("block", share(range(3)))
def test_start_rules_and_slack_match(block, extensions):
    """SPEC §13 ``wait_if_faster`` for every scheduler, and spt_plan at several slacks ε
    (SPEC §14): 3 blocks × 40 scenarios, per world."""
    for seed in range(block * 40, (block + 1) * 40):
        rng = np.random.default_rng([seed, extensions, 13])
        data = random_scenario(rng, extensions=extensions, max_jobs=20)
        data["start_rule"] = "wait_if_faster"
        data["plan_slack"] = float(rng.choice([0.0, 0.05, 0.1, 0.2, 0.3, 1.0]))
        assert_every_scheduler_agrees(data, f"seed {seed}")


@pytest.mark.parametrize("extensions", [False, True], ids=["paper-world", "extensions"])
@pytest.mark.breadth
@pytest.mark.parametrize("block", share(range(3)))
def test_mixed_fleets_match(block, extensions):
    """SPEC §16: random mixed fleets (custom and overridden types, with the memory model and
    time-of-use prices on some), every scheduler, either start rule: 3 blocks × 40 scenarios."""
    for seed in range(block * 40, (block + 1) * 40):
        rng = np.random.default_rng([seed, extensions, 16])
        data = random_scenario(rng, extensions=extensions, max_jobs=16, gpu_types=True)
        data["start_rule"] = str(rng.choice(["greedy", "wait_if_faster"]))
        assert_every_scheduler_agrees(data, f"seed {seed}")


@pytest.mark.parametrize("extensions", [False, True], ids=["paper-world", "extensions"])
@pytest.mark.breadth
@pytest.mark.parametrize("block", share(range(2)))
def test_memoized_offers_match(block, extensions):
    """From MEMO_MIN_JOBS jobs a run memoizes offers per offer class and version of the state
    (``core/projection.py``: ``offer_class``, ``recall_offer``; ``wait_if_faster``'s epochs per
    chain of states, ``chain_offer``, and the holds the loop applies, ``certified_hold``):
    2 blocks × 8 scenarios of 32–80 jobs (ten models: more classes than are memoized), either
    start rule, a quarter on mixed fleets, every scheduler."""
    for seed in range(block * 8, block * 8 + (8 if full() else 4)):
        rng = np.random.default_rng([seed, extensions, 17])
        data = random_scenario(rng, extensions=extensions, min_jobs=MEMO_MIN_JOBS, max_jobs=80,
                               gpu_types=seed % 4 == 3)
        data["start_rule"] = "wait_if_faster" if seed % 2 else "greedy"
        assert_every_scheduler_agrees(data, f"seed {seed}")


@pytest.mark.breadth
@pytest.mark.parametrize("block", share(range(2)))
def test_lanes_match(block):
    """From MEMO_MIN_JOBS jobs, under built-in parts, the scan visits only the first pending job
    of each lane — jobs equal but for their arrival (``core/loop.py``: ``find_lanes``): 2 blocks
    × 8 scenarios whose 32–90 jobs are copies of 1–4 jobs (arrival ties included), either start
    rule, half with SPEC §12's switches, a quarter on mixed fleets, every scheduler."""
    for seed in range(block * 8, block * 8 + (8 if full() else 4)):
        rng = np.random.default_rng([seed, 23])
        data = random_scenario(rng, extensions=seed % 2 == 1, min_jobs=MEMO_MIN_JOBS,
                               max_jobs=90, gpu_types=seed % 4 == 3)
        kinds = data["jobs"][:int(rng.integers(1, 5))]
        data["jobs"] = [{**kinds[int(rng.integers(len(kinds)))], "name": job["name"],
                         "arrival_h": job["arrival_h"]} for job in data["jobs"]]
        data["start_rule"] = "wait_if_faster" if seed % 2 else "greedy"
        assert_every_scheduler_agrees(data, f"seed {seed}")


def test_lanes_are_the_jobs_equal_but_for_arrival():
    """``find_lanes`` from its definition: a job's lane is the first job, by index, whose
    constants equal its own bit for bit in every column but C_ARRIVAL_S (−0.0 is not 0.0)."""
    rng = np.random.default_rng(5)
    for n_jobs in (1, 7, 64, 300):
        kinds = rng.choice([0.0, -0.0, 1.0, 2.5, np.nan, 1e300], size=(5, N_CONST))
        jobs = kinds[rng.integers(5, size=n_jobs)]
        jobs[:, C_ARRIVAL_S] = rng.choice([0.0, 3600.0, 7.5], size=n_jobs)
        flip = rng.random(n_jobs) < 0.2  # a job differing in one column but the arrival
        jobs[flip, rng.integers(N_CONST - 1, size=flip.sum())] += 1.0
        jobs = np.ascontiguousarray(jobs)
        lane = np.empty(n_jobs, np.int64)
        find_lanes(jobs, lane, np.empty(lane_table_size(n_jobs), np.int64))
        others = jobs.view(np.int64)[:, [c for c in range(N_CONST) if c != C_ARRIVAL_S]]
        for j in range(n_jobs):
            expected = next(i for i in range(n_jobs) if np.array_equal(others[i], others[j]))
            assert lane[j] == expected, (n_jobs, j)


@pytest.mark.parametrize("name", ["paper", "motivation"])
def test_builtin_scenarios_match(name):
    for rule in ("greedy", "wait_if_faster"):
        scenario = bacepipe.model.generate.generate_batch(name).scenario(0)
        for scheduler in SCHEDULER_PARTS:
            assert_same_schedule(bacepipe.run_scenario(scenario, scheduler, start_rule=rule),
                                 simulate_reference(scenario, scheduler, Rules(start_rule=rule)),
                                 f"{name}, {scheduler}, {rule}")


def test_scaled_random_points_match():
    for bw, gs in ((0.3, 1.0), (1.5, 1.0), (1.0, 0.5), (1.0, 1.25)):
        batch = bacepipe.model.generate.generate_batch("random", 11, range(15), bandwidth_scale=bw,
                                                       gpu_scale=gs, num_jobs=12)
        for t in range(batch.size):
            scenario = batch.scenario(t)
            for scheduler in SCHEDULER_PARTS:
                assert_same_schedule(bacepipe.run_scenario(scenario, scheduler),
                                     simulate_reference(scenario, scheduler),
                                     f"bw {bw}, gpu {gs}, topology {t}, {scheduler}")


@pytest.mark.parametrize("num_jobs", [12, MEMO_MIN_JOBS + 8])
@pytest.mark.parametrize("rule", START_RULES)
def test_a_topology_ends_the_same_in_any_batch(rule, num_jobs):
    """The batched core reuses one workspace per thread across topologies (and caches per-job
    tables, the K* and lower-bound searches, hop sums and, from MEMO_MIN_JOBS jobs, memoized
    offers in it): a topology's schedule must not depend on what ran before it on that thread.
    Each topology of a batch, in reverse order and alone, gives the same arrays."""
    topologies = list(range(30))
    options, rules = dict(num_jobs=num_jobs, gpu_scale=0.75), Rules(start_rule=rule)
    forward = simulate_batch(generate_batch("random", 5, topologies, **options), SCHEDULER_PARTS,
                             rules)
    backward = simulate_batch(generate_batch("random", 5, topologies[::-1], **options),
                              SCHEDULER_PARTS, rules)
    fields = ("start_s", "end_s", "cost", "alloc", "path", "metrics", "status", "k_star",
              "lower_bound_h")
    for field in fields:
        np.testing.assert_array_equal(getattr(forward, field), getattr(backward, field)[::-1],
                                      err_msg=field)
    for t in topologies[::7]:
        alone = simulate_batch(generate_batch("random", 5, [t], **options), SCHEDULER_PARTS,
                               rules)
        for field in fields:
            np.testing.assert_array_equal(getattr(forward, field)[t], getattr(alone, field)[0],
                                          err_msg=f"{field}, topology {t}")


def test_placements_are_kept_in_min_regions_layers_positions():
    """A placement holds at most K*_j ≤ layers_j GPUs, at least one per region (SPEC §2, §15),
    so a result keeps min(R, most layers) path positions per job: regions in pipeline order
    (−1 after the path) and the GPUs on each (0 after it); ``alloc`` is the same placement by
    region index."""
    batch = generate_batch("random", 2, range(20), num_regions=12, num_jobs=10, gpu_scale=0.05)
    batch = batch._replace(layers=np.minimum(batch.layers, 5))  # fewer layers than regions
    result = simulate_batch(batch, SCHEDULER_PARTS)
    assert result.path.shape[-1] == result.path_gpus.shape[-1] == 5
    assert (result.status == 0).all() and result.path_len.max() == 5  # full width used
    assert result.alloc.shape[-1] == 12
    alloc = result.alloc  # expanded on each access
    for t, s, j in np.ndindex(result.path_len.shape):
        n = result.path_len[t, s, j]
        path, gpus = result.path[t, s, j], result.path_gpus[t, s, j]
        assert 1 <= n <= gpus.sum() <= result.k_star[t, j] <= 5
        assert (path[n:] == -1).all() and (gpus[n:] == 0).all() and (gpus[:n] >= 1).all()
        by_region = np.zeros(12, np.int64)
        by_region[path[:n]] = gpus[:n]
        np.testing.assert_array_equal(alloc[t, s, j], by_region)
