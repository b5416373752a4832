"""Shared fixtures: small scenarios written as the YAML of SPEC §9."""

import copy
import os

import pytest
from hypothesis import settings

# Property and fuzz tests draw the same examples on every run, so that a failure in CI reproduces
# on any machine; HYPOTHESIS_PROFILE=explore draws new ones each run.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

BASE = {
    "regions": [
        {"name": "A", "gpus": 4, "price": 0.230, "bandwidth_gbps": 1.0},
        {"name": "B", "gpus": 3, "price": 0.222, "bandwidth_gbps": 0.5},
    ],
    "jobs": [
        {"name": "P", "model": "Qwen2.5-14B", "params_b": 14, "layers": 48, "hidden": 5120,
         "batch_size": 512, "dataset_samples": 52002},
    ],
}


@pytest.fixture
def base_scenario() -> dict:
    """A valid two-region, one-job scenario; tests mutate their own copy."""
    return copy.deepcopy(BASE)
