"""Every sweep setting is declared once (bacepipe/settings.py, issue 49): the validation, the
results layout and its readers' types, the point's identity, the generation keywords, the
schedulers' rules and the help all come from the declaration."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from bacepipe.analysis.schema import AXIS_DEFAULTS, HIVE_SCHEMA, POINT_COLUMNS
from bacepipe.errors import InputError
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import Rules
from bacepipe.settings import (
    COLUMNS,
    DEFAULTS,
    LEVELS,
    RUN,
    SCHEDULER,
    SETTINGS,
    WORLD,
    Setting,
    SweepConfig,
    SweepSettings,
    help_text,
)
from bacepipe.sweep import config, run_point, validate
from bacepipe.sweep.chunks import RUN_COLUMNS
from bacepipe.validation import number

REPO = Path(__file__).resolve().parents[1]


def test_every_setting_is_declared_with_help_a_check_and_a_domain():
    assert list(SETTINGS) == [f.name for f in dataclasses.fields(SweepConfig)]
    assert [f.name for f in dataclasses.fields(SweepSettings)] == list(SETTINGS)
    for name, s in SETTINGS.items():
        assert s.help and callable(s.check) and s.domain in (WORLD, SCHEDULER, RUN), name


def test_the_world_settings_are_the_generation_keywords_and_the_rules_scheduler_settings():
    keywords = set(inspect.signature(generate_batch).parameters) - {"topologies"}
    assert {n for n, s in SETTINGS.items() if s.domain == WORLD} == keywords
    rules = {f.name for f in dataclasses.fields(Rules)}
    assert rules <= {n for n, s in SETTINGS.items() if s.domain == SCHEDULER}
    assert all(DEFAULTS[name] == getattr(Rules(), name) for name in rules)


def test_layout_columns_and_reader_types_come_from_the_declaration():
    assert LEVELS == ("scenario", "bandwidth_scale", "gpu_scale", "num_jobs", "arrivals",
                      "latency", "memory_model", "price_profile", "start_rule", "gpu_mix")
    assert list(HIVE_SCHEMA) == [*LEVELS, "point"] and list(POINT_COLUMNS) == list(COLUMNS)
    assert set(COLUMNS) <= set(RUN_COLUMNS)
    assert AXIS_DEFAULTS == {"bandwidth_scale": 1.0, "gpu_scale": 1.0, "num_jobs": 8,
                             "start_rule": "greedy", "gpu_mix": "none", "plan_slack": 0.2}


def test_the_settings_give_the_level_values_as_the_layout_writes_them():
    s = validate({"bandwidth_scale": 1, "arrivals": "poisson", "arrival_rate_per_h": 2,
                  "latency": "geo", "start_rule": "wait_if_faster"})
    assert s.levels() == {
        "scenario": "random", "bandwidth_scale": "1.0", "gpu_scale": "1.0", "num_jobs": "8",
        "arrivals": "poisson-2.0", "latency": "geo", "memory_model": "default",
        "price_profile": "default", "start_rule": "wait_if_faster", "gpu_mix": "none"}
    assert s.rules() == Rules(start_rule="wait_if_faster")
    assert s.world()["arrival_rate_per_h"] == 2.0 and "plan_slack" not in s.world()


def test_the_identity_holds_every_setting_but_those_declared_not_to_change_results():
    s = validate({})
    ignored = {n for n, d in SETTINGS.items() if d.identity is False}
    assert set(s.identity()) == set(SETTINGS) - ignored
    assert ignored == {"plugins", "schedulers", "workers", "chunk_size", "backend",
                       "dask_address", "save_jobs", "validate", "unplaceable", "results_dir",
                       "progress"}


def test_help_lists_every_setting_with_its_default_and_roles():
    text = help_text()
    for name, s in SETTINGS.items():
        assert f"\n{name} = " in f"\n{text}" and s.domain in text
    assert "gpu_mix = \"none\"  [none | cloud]  (world, level)" in text
    assert "plan_slack = 0.2  [>= 0, <= 1e+06]  (scheduler, column)" in text


@pytest.mark.long
def test_the_command_line_help_is_the_declarations():
    proc = subprocess.run([sys.executable, "-m", "bacepipe.sweep", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert help_text() in proc.stdout


@pytest.fixture
def throwaway(monkeypatch):
    """A setting declared for this test only: a number >= 0 that changes results."""
    monkeypatch.setitem(SETTINGS, "throwaway", Setting(
        "a setting of this test", partial(number, minimum=0.0), RUN))
    monkeypatch.setitem(DEFAULTS, "throwaway", 0.0)
    extended = dataclasses.make_dataclass("SweepSettings", [("throwaway", float)],
                                          bases=(SweepSettings,), frozen=True)
    monkeypatch.setattr(config, "SweepSettings", extended)
    return "throwaway"


def test_a_new_setting_is_checked_and_in_the_identity_by_construction(tmp_path, throwaway):
    with pytest.raises(InputError, match="^throwaway: must be >= 0, got -1"):
        validate({throwaway: -1})
    values = {"topologies": 4, "chunk_size": 2, "workers": 1, "progress": False,
              "schedulers": ["bace_pipe", "lcf"], "results_dir": str(tmp_path)}
    zero, one = (validate({**values, throwaway: v}) for v in (0.0, 1.0))
    assert zero.identity()[throwaway] == 0.0 and one.identity()[throwaway] == 1.0
    first = run_point(zero)
    assert first.chunks_run == first.chunks_total == 4
    # Another value is another point: nothing of the first is resumed into it, nor touched.
    files = sorted(first.paths.runs.iterdir())
    stamps = [f.stat().st_mtime_ns for f in files]
    other = run_point(one)
    assert other.paths.point_id != first.paths.point_id
    assert other.chunks_run == other.chunks_total == 4
    assert [f.stat().st_mtime_ns for f in sorted(first.paths.runs.iterdir())] == stamps
    # The same value resumes its own point, running nothing.
    again = run_point(zero)
    assert again.paths.point_id == first.paths.point_id and again.chunks_run == 0
