"""Shared fixtures: small scenarios written as the YAML of SPEC §9, and the plug-in registry."""

import copy
import os

import pytest
import tiers
from hypothesis import settings

import bacepipe.policies as policies

# Property and fuzz tests draw the same examples on every run, so that a failure in CI reproduces
# on any machine; HYPOTHESIS_PROFILE=explore draws new ones each run.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

TIERS = ("fast", "long", "all")


def pytest_addoption(parser):
    parser.addoption("--tier", choices=TIERS, default="fast",
                     help="fast (default: the README's test command), long (what fast leaves "
                          "out: recompiles, many seeds, full hypothesis counts), or all")


def pytest_configure(config):
    tiers.TIER = config.getoption("--tier")


def pytest_collection_modifyitems(config, items):
    """Keep the tier's tests: fast = unmarked and ``breadth``; long = ``long`` and ``breadth``."""
    tier = config.getoption("--tier")
    if tier == "all":
        return
    keep, drop = [], []
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        wanted = "breadth" in marks or ("long" in marks) == (tier == "long")
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


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


@pytest.fixture
def registry():
    """Plug-ins register into process-wide tables: restore them after the test."""
    saved = (dict(policies._user_parts), dict(policies.SCHEDULER_PARTS),
             dict(policies._plugin_hashes), dict(policies._plugin_sources))
    yield policies
    for table, old in zip((policies._user_parts, policies.SCHEDULER_PARTS,
                           policies._plugin_hashes, policies._plugin_sources), saved, strict=True):
        table.clear()
        table.update(old)
