"""SPEC §15's lower bound: the numba kernel against its plain-Python twin, and LB ≤ every
scheduler's avg JCT on random topologies."""

from dataclasses import replace

import numpy as np
import pytest
from tiers import share

import bacepipe
from bacepipe.core.bounds import fastest_hop_gbps, heap_sort
from bacepipe.core.bounds import lower_bound_h as lower_bound_kernel
from bacepipe.core.model import N_CONST, job_constants
from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch
from bacepipe.model.scenario import Scenario, parse_scenario
from bacepipe.sim.bounds import lower_bound_h
from bacepipe.sim.model import reference_hardware
from tests.random_scenarios import random_scenario


def kernel_bound(scenario: Scenario) -> float:
    """The kernel's LB of one scenario, with the job constants the core computes."""
    jobs, hw = scenario.jobs, scenario.hardware
    total = sum(r.gpus for r in scenario.regions)
    const = np.zeros((len(jobs), N_CONST))
    col = lambda field, dtype: np.array([getattr(j, field) for j in jobs], dtype=dtype)  # noqa: E731
    ref = reference_hardware(scenario)
    bad = job_constants(hw.as_array(), np.array([ref.gpu_tflops, ref.gpu_mem_gb]),
                        col("params_b", np.float64), col("layers", np.int64),
                        col("hidden", np.int64), col("batch_size", np.int64),
                        col("dataset_samples", np.int64), col("epochs", np.float64),
                        col("arrival_h", np.float64), total, scenario.memory_model != "none",
                        const)
    assert bad == -1
    r_max = fastest_hop_gbps(np.array(scenario.links_gbps, dtype=np.float64),
                             hw.intra_region_gbps)
    return lower_bound_kernel(const, r_max, total, np.empty(N_CONST), np.empty(len(jobs)))


def parsed_random(seed: int, **options) -> Scenario | None:
    """A random scenario (tests/random_scenarios.py), or None when its memory model makes a job
    unplaceable (an input error, not a bound)."""
    scenario = parse_scenario(random_scenario(np.random.default_rng(seed), **options))
    try:
        bacepipe.run_scenario(scenario, "lcf")
    except InputError:
        return None
    return scenario


def test_kernel_matches_twin():
    compared = 0
    for seed in range(300):
        scenario = parse_scenario(random_scenario(np.random.default_rng(seed), max_regions=8,
                                                  max_jobs=12, extensions=True))
        try:
            expected = lower_bound_h(scenario)
        except InputError:  # a memory minimum above every K: the core refuses it too
            with pytest.raises(AssertionError):
                kernel_bound(scenario)
            continue
        np.testing.assert_allclose(kernel_bound(scenario), expected, rtol=1e-12, err_msg=seed)
        compared += 1
    assert compared > 200


def test_area_part_counts_only_batch_arrivals():
    """With every job at 0 the pooled-area part can decide; one late arrival switches it off,
    and LB then equals the solo part (the mean of each job's LB alone)."""
    batch = generate_batch("paper", 0, [0], gpu_scale=0.0625).scenario(0)
    assert all(j.arrival_h == 0 for j in batch.jobs)
    solo = np.mean([lower_bound_h(replace(batch, jobs=(j,))) for j in batch.jobs])
    assert lower_bound_h(batch) > solo  # 8 big jobs on 21 GPUs: the pool is the tighter part
    late = replace(batch, jobs=batch.jobs[:-1] + (replace(batch.jobs[-1], arrival_h=1.0),))
    np.testing.assert_allclose(lower_bound_h(late), solo, rtol=1e-12)


@pytest.mark.breadth
@pytest.mark.parametrize("gpu_scale,num_jobs", share([(1.0, 8), (0.25, 8), (0.0625, 4), (0.5, 24)]))
def test_bound_below_every_scheduler(gpu_scale, num_jobs):
    """LB ≤ avg JCT of every scheduler on random topologies (SPEC §15: valid over the class)."""
    batch = generate_batch("random", 7, share(range(300)), gpu_scale=gpu_scale,
                           num_jobs=num_jobs, num_regions=4)
    for t in range(batch.size):
        scenario = batch.scenario(t)
        bound = lower_bound_h(scenario)
        assert bound > 0
        for name in bacepipe.SCHEDULERS:
            avg = bacepipe.run_scenario(scenario, name)["avg_jct_h"]
            assert bound <= avg * (1 + 1e-12), (t, name, bound, avg)


def test_bound_below_every_scheduler_with_extensions():
    """The same on the stress scenarios: asymmetric and missing links, latency, memory minimum,
    staggered arrivals (LB_area off)."""
    checked = 0
    for seed in range(200):
        scenario = parsed_random(1000 + seed, max_regions=5, max_jobs=8, extensions=True)
        if scenario is None:
            continue
        bound = lower_bound_h(scenario)
        for name in bacepipe.SCHEDULERS:
            avg = bacepipe.run_scenario(scenario, name)["avg_jct_h"]
            assert bound <= avg * (1 + 1e-12), (seed, name, bound, avg)
        checked += 1
    assert checked > 100


def test_heap_sort_sorts_like_numpy():
    """The bound's in-place sort gives np.sort's order on draws with ties, zeros and inf."""
    rng = np.random.default_rng(11)
    for n in list(range(12)) + [50, 333]:
        values = rng.choice([0.0, 1.5, 2.0, np.inf, 1e-300], n) * rng.integers(1, 4, n) \
            + (rng.random(n) if n % 2 else 0.0)
        expected = np.sort(values)
        heap_sort(values)
        np.testing.assert_array_equal(values, expected)
