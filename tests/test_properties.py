"""SPEC §4 invariants of every schedule the numba core makes (hypothesis): no region and no link
over capacity, every job ends, start >= arrival, execution = I·t_iter, cost = E·Σn·P·power."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_scenarios import random_scenario
from tiers import examples

import bacepipe
from bacepipe.model.scenario import parse_scenario
from bacepipe.sim.invariants import check_schedule


@pytest.mark.breadth
@settings(max_examples=examples(150), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), extensions=st.booleans(),
       scheduler=st.sampled_from(bacepipe.SCHEDULERS))
def test_every_schedule_respects_spec_invariants(seed, extensions, scheduler):
    scenario = parse_scenario(random_scenario(np.random.default_rng(seed), extensions=extensions))
    try:
        result = bacepipe.run_scenario(scenario, scheduler)
    except bacepipe.InputError as err:  # only the memory model can make a job unplaceable
        assert scenario.memory_model == "adam_mixed" and err.field.startswith("jobs[")
        return
    assert check_schedule(scenario, result) == []
    for job, spec in zip(result["jobs"], scenario.jobs, strict=True):
        assert np.isfinite(job["end_h"]) and job["start_h"] >= spec.arrival_h * (1 - 1e-12)
        assert sum(job["gpus"].values()) <= spec.layers


@pytest.mark.breadth
@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scheduler=st.sampled_from(bacepipe.SCHEDULERS),
       bandwidth_scale=st.sampled_from([0.3, 0.9, 1.5]),
       gpu_scale=st.sampled_from([0.5, 0.75, 1.25]), num_jobs=st.integers(1, 24))
def test_sweep_topologies_respect_invariants(seed, scheduler, bandwidth_scale, gpu_scale,
                                             num_jobs):
    data = bacepipe.generate_scenario("random", seed % 1000, seed // 1000,
                                      bandwidth_scale=bandwidth_scale, gpu_scale=gpu_scale,
                                      num_jobs=num_jobs)
    scenario = parse_scenario(data)
    assert check_schedule(scenario, bacepipe.run_scenario(scenario, scheduler)) == []
