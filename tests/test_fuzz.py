"""Fuzzing the scenario loader and the single-run CLI: every input ends in a valid result or in
one line naming the field with exit status 2 — never a traceback, a hang or a numba error."""

import copy

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_scenarios import random_scenario
from tiers import examples

from bacepipe import run_scenario
from bacepipe.model.hardware import TOU_STEPPED_MAX_H, Hardware
from bacepipe.model.scenario import parse_scenario
from bacepipe.model.tables import PRICE_PROFILES
from bacepipe.sim.reference import simulate_reference
from bacepipe.simulate import main

# tmp_path and capsys are reused across examples on purpose: each example overwrites the file and
# reads all captured output.
FIXTURES_OK = [HealthCheck.function_scoped_fixture]
ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0, -1, 1e308, -1e308, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
    st.lists(st.integers(0, 2), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                             max_size=2),
)


def _run(tmp_path, data_or_bytes, capsys) -> tuple[int, str]:
    path = tmp_path / "fuzz.yaml"
    if isinstance(data_or_bytes, bytes):
        path.write_bytes(data_or_bytes)
    else:
        path.write_text(yaml.safe_dump(data_or_bytes))
    code = main([str(path), "--json"])
    return code, capsys.readouterr().err


def _assert_clean(code: int, err: str) -> None:
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("bacepipe.simulate: "), err
        assert "Traceback" not in err and "numba" not in err.lower()
    else:
        assert err == ""


@st.composite
def _mutated(draw):
    """A valid random scenario with one field replaced, removed or added."""
    data = random_scenario(np.random.default_rng(draw(st.integers(0, 10_000))), max_regions=4,
                           max_jobs=4, extensions=draw(st.booleans()))
    data = copy.deepcopy(data)
    where = draw(st.sampled_from(["top", "region", "job", "hardware", "links"]))
    value = draw(ODD_VALUES)
    if where == "top":
        key = draw(st.sampled_from(["regions", "jobs", "links_gbps", "latency", "memory_model",
                                    "hardware", "surprise"]))
        data[key] = value
    elif where == "region":
        region = data["regions"][draw(st.integers(0, len(data["regions"]) - 1))]
        key = draw(st.sampled_from(["name", "gpus", "price", "bandwidth_gbps", "lat",
                                    "price_profile", "utc_offset_h", "extra"]))
        if draw(st.booleans()):
            region[key] = value
        else:
            region.pop(key, None)
    elif where == "job":
        job = data["jobs"][draw(st.integers(0, len(data["jobs"]) - 1))]
        key = draw(st.sampled_from(["name", "params_b", "layers", "hidden", "batch_size",
                                    "dataset_samples", "epochs", "arrival_h", "model", "x"]))
        if draw(st.booleans()):
            job[key] = value
        else:
            job.pop(key, None)
    elif where == "hardware":
        key = draw(st.sampled_from(["seq_len", "micro_batch_size", "mfu", "gpu_tflops",
                                    "stage_overhead_ms", "gpu_mem_gb", "volts"]))
        data.setdefault("hardware", {})[key] = value
    else:
        n = len(data["regions"])
        data["links_gbps"] = draw(st.lists(st.lists(ODD_VALUES, min_size=n, max_size=n + 1),
                                           min_size=n - 1, max_size=n + 1))
    return data


@pytest.mark.breadth
@settings(max_examples=examples(300), deadline=None, suppress_health_check=FIXTURES_OK)
@given(data=_mutated())
def test_mutated_scenarios_end_cleanly(data, tmp_path, capsys):
    _assert_clean(*_run(tmp_path, data, capsys))


@pytest.mark.breadth
@settings(max_examples=examples(150), deadline=None, suppress_health_check=FIXTURES_OK)
@given(data=st.recursive(ODD_VALUES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["regions", "jobs", "name", "gpus", "price", "links_gbps", "hardware"]), inner,
        max_size=4)), max_leaves=12))
def test_random_structures_end_cleanly(data, tmp_path, capsys):
    _assert_clean(*_run(tmp_path, data, capsys))


@pytest.mark.breadth
@settings(max_examples=examples(100), deadline=None, suppress_health_check=FIXTURES_OK)
@given(raw=st.binary(max_size=200))
def test_random_bytes_end_cleanly(raw, tmp_path, capsys):
    _assert_clean(*_run(tmp_path, raw, capsys))


def test_edges_stay_finite(tmp_path, capsys):
    """Jobs of years and of seconds together, one-GPU regions, links slower than any job needs,
    equal prices, one region only."""
    for data in (
        {"regions": [{"name": "solo", "gpus": 1, "price": 0.2, "bandwidth_gbps": 1}],
         "jobs": [{"name": "years", "params_b": 1000, "layers": 200, "hidden": 20000,
                   "batch_size": 4096, "dataset_samples": 10**12},
                  {"name": "seconds", "params_b": 0.001, "layers": 1, "hidden": 8,
                   "batch_size": 1, "dataset_samples": 1}]},
        {"regions": [{"name": f"r{i}", "gpus": 1, "price": 0.2} for i in range(5)],
         "links_gbps": [[0 if u == v else 1e-9 for v in range(5)] for u in range(5)],
         "jobs": [{"name": f"j{i}", "params_b": 7, "layers": 32, "hidden": 4096,
                   "batch_size": 64, "dataset_samples": 5000} for i in range(7)]},
    ):
        code, err = _run(tmp_path, data, capsys)
        assert code == 0, err


def test_the_longest_valid_job_ends_under_time_of_use():
    """The largest job validation accepts runs ~10²² hours: past float64's hour (2⁵² h) a
    time-of-use clock stepped hour by hour would never end; the span is priced at the profile's
    mean instead, by the core and the twin alike (they agree)."""
    business = list(PRICE_PROFILES["business"])
    scenario = parse_scenario({
        "regions": [{"name": "A", "gpus": 4, "price": 0.2, "bandwidth_gbps": 10,
                     "price_profile": business}],
        "jobs": [{"name": "longest", "params_b": 1e6, "layers": 8, "hidden": 4096,
                  "batch_size": 512, "dataset_samples": 10**15, "epochs": 1e6}]})
    core, twin = run_scenario(scenario, "bace_pipe"), simulate_reference(scenario, "bace_pipe")
    (job,) = core["jobs"]
    span_h = job["end_h"] - job["start_h"]
    assert span_h > TOU_STEPPED_MAX_H
    mean_price = 0.2 * sum(business) / 24
    assert job["cost"] == pytest.approx(span_h * mean_price * 4 * Hardware().gpu_power_kw)
    assert twin["jobs"][0]["cost"] == job["cost"]
