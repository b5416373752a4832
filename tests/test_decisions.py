"""A part's decision against SPEC §4 is refused in one line naming the check that failed and its
numbers (bacepipe.sim.decisions), on every path that runs a part: the reference loop, the
compiled core (its verdict explained by the reference replay), the simulate command, a sweep's
chunk.

One plug-in breaks each check: its placement twins (and, in one subprocess, their kernels: each
compiled plug-in costs a compile of the event loop) run on one scenario where job 1 (Q) arrives
first, so the job the message names comes from the run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import bacepipe
from bacepipe.errors import InputError
from bacepipe.model.generate import topology_batch
from bacepipe.model.scenario import parse_scenario
from bacepipe.sim.decisions import decision_problem
from bacepipe.sim.model import job_models, reservation_gbps
from bacepipe.sim.reference import ReferenceRun
from bacepipe.sim.run import bad_decision
from bacepipe.sweep import validate
from bacepipe.sweep.chunks import ChunkSpec, run_chunk

JOB = {"model": "Qwen2.5-14B", "params_b": 14, "layers": 48, "hidden": 5120, "batch_size": 512,
       "dataset_samples": 52002}
#: A holds more GPUs than K*, B fewer; the link between them is far too thin for any pipeline.
SCENARIO = {
    "regions": [{"name": "A", "gpus": 64, "price": 0.23}, {"name": "B", "gpus": 2, "price": 0.22}],
    "links_gbps": [[0, 0.001], [0.001, 0]],
    "jobs": [dict(JOB, name="P", arrival_h=1.0), dict(JOB, name="Q", arrival_h=0.0)],
}
FIRST = 1  # the job decided first (it arrives first)

#: Each twin breaks exactly one check (the scenario gives it the regions to do so).
TWINS = """
from bacepipe.policies import register_part, register_scheduler

def over_free(state, jm, k, prices, allocate):  # one GPU more than a region has, within K*
    r = next(r for r, g in enumerate(state.free) if 0 < g < k)
    return [r], [state.free[r] + 1]

def over_k_star(state, jm, k, prices, allocate):  # K* + 1 GPUs of one region, all free
    r = next(r for r, g in enumerate(state.free) if g > k)
    return [r], [k + 1]

def twice(state, jm, k, prices, allocate):  # one GPU twice in the same region
    r = next(r for r, g in enumerate(state.free) if g >= 2)
    return [r, r], [1, 1]

def thin_hop(state, jm, k, prices, allocate):  # one GPU in each of the first two regions
    return [0, 1], [1, 1]
"""
#: The same decisions compiled.
KERNELS = """
from bacepipe.policies.api import placement_kernel

@placement_kernel
def over_free_kernel(job, k, cluster, scratch, allocate, out):
    for r in range(cluster.free.shape[0]):
        if 0 < cluster.free[r] < k:
            out.path[0] = r
            out.alloc[r] = cluster.free[r] + 1
            return 1, cluster.free[r] + 1
    return 0, 0

@placement_kernel
def over_k_star_kernel(job, k, cluster, scratch, allocate, out):
    for r in range(cluster.free.shape[0]):
        if cluster.free[r] > k:
            out.path[0] = r
            out.alloc[r] = k + 1
            return 1, k + 1
    return 0, 0

@placement_kernel
def twice_kernel(job, k, cluster, scratch, allocate, out):
    for r in range(cluster.free.shape[0]):
        if cluster.free[r] >= 2:
            out.path[0] = r
            out.path[1] = r
            out.alloc[r] = 1
            return 2, 2
    return 0, 0

@placement_kernel
def thin_hop_kernel(job, k, cluster, scratch, allocate, out):
    out.path[0] = 0
    out.path[1] = 1
    out.alloc[0] = 1
    out.alloc[1] = 1
    return 2, 2
"""
CHECKS = ("over_free", "over_k_star", "twice", "thin_hop")
REGISTER = f"""
for name in {CHECKS!r}:
    register_part("placement", name, kernel=globals().get(name + "_kernel"), twin=globals()[name])
    register_scheduler("break_" + name, ordering="fcfs", placement=name, allocator="fill")
"""


def _plugin(folder: Path, compiled: bool) -> Path:
    path = folder / ("compiled_breaks.py" if compiled else "breaks.py")
    path.write_text(TWINS + (KERNELS if compiled else "") + REGISTER)
    return path.resolve()


def _scenario():
    return parse_scenario(SCENARIO)


def _check_phrase(check: str, message: str) -> None:
    """``message`` names ``check`` with the numbers the scenario gives it, and no other check."""
    scenario = _scenario()
    model = job_models(scenario)[FIRST]
    a, b = (r.gpus for r in scenario.regions)
    if check == "over_free":
        assert f"on region 'B' with {b + 1} GPUs but it has {b} free (SPEC §4)" in message
    elif check == "over_k_star":
        assert f"with {model.k_star + 1} GPUs but K* is {model.k_star} (SPEC §15)" in message
    elif check == "twice":
        assert "on region 'A' twice on the path (SPEC §3)" in message
    else:
        got = re.search(r"on path A→B: hop A→B has (\S+) Gbit/s residual but a pipeline of "
                        r"(\d+) GPUs needs (\S+) Gbit/s \(SPEC §4\)", message)
        assert got, message
        have, gpus, need = float(got[1]), int(got[2]), float(got[3])
        assert have == pytest.approx(scenario.links_gbps[0][1]) and gpus == 2
        assert need == pytest.approx(reservation_gbps(model, scenario, [0, 1], [1, 1]), rel=1e-3)
        assert have < need
    others = {"over_free": "free (SPEC", "over_k_star": "K* is", "twice": "twice",
              "thin_hop": "Gbit/s"}
    assert not [c for c, phrase in others.items() if c != check and phrase in message], message


def _expect(line: str, check: str, plugin: Path, prefix: str = "") -> None:
    assert "\n" not in line
    assert line.startswith(f"{prefix}scheduler break_{check}: placed job {FIRST} ('Q') "), line
    assert f"; parts from {plugin}" in line, line
    _check_phrase(check, line)


# --------------------------------------------------------------------------- the checks alone


@pytest.mark.parametrize("placed, check", [
    (([0], [1]), None),
    (([0, 1], [1, 1]), "thin_hop"),
    (([1], [3]), "over_free"),
    (([0], [49]), "over_k_star"),
    (([1], [49]), "over_k_star"),  # K* before the region's free GPUs, as the core checks
    (([0, 0], [1, 1]), "twice"),
    (([0, 0], [1, 0]), "twice"),  # a region twice before its GPU count
    (([0, 1], [1, 3]), "over_free"),  # the GPUs of a region before the hops
])
def test_the_first_failed_check_is_named_in_the_cores_order(placed, check):
    scenario = _scenario()
    sim = ReferenceRun(scenario, job_models(scenario))
    assert sim.models[FIRST].k_star == 48  # the placements above are written for it
    problem = decision_problem(sim, FIRST, placed)
    if check is None:
        assert problem is None
    else:
        _check_phrase(check, problem)


@pytest.mark.parametrize("placed, phrase", [
    (([], []), "on an empty path (SPEC §3)"),
    (([0, 1, 0], [1, 1, 1]), "on a path of 3 regions but the cluster has 2 (SPEC §3)"),
    (([2], [1]), "on region index 2 but the cluster has 2 regions (SPEC §3)"),
    (([0], [0]), "on region 'A' with 0 GPUs, fewer than 1 (SPEC §3)"),
    (([0, 1], [1]), "as ([0, 1], [1]), not a path of region indices with a GPU count for each"),
    (([0.5], [1]), "as ([0.5], [1]), not a path of region indices"),
])
def test_malformed_decisions_are_named_too(placed, phrase):
    scenario = _scenario()
    assert phrase in decision_problem(ReferenceRun(scenario, job_models(scenario)), 0, placed)


def test_a_decision_the_replay_does_not_repeat_lists_every_check():
    # lcf's twin places job 1 within SPEC §4: the core's verdict cannot be explained.
    batch, rules = topology_batch(SCENARIO)
    message = bad_decision(batch, rules, 0, "lcf", FIRST)
    assert message.startswith(f"placed job {FIRST} ('Q') against SPEC §4 (more GPUs than free")
    assert "a region twice, an infeasible hop" in message
    assert message.endswith("its parts' twins place that job within SPEC §4, unlike their kernels")


# --------------------------------------------------------------------------- plug-ins


@pytest.mark.parametrize("check", CHECKS)
def test_a_plain_python_part_is_refused_naming_its_check(registry, tmp_path, check):
    plugin = _plugin(tmp_path, compiled=False)
    with pytest.raises(InputError) as err:
        bacepipe.run_scenario(SCENARIO, f"break_{check}", plugins=[str(plugin)])
    _expect(str(err.value), check, plugin)


@pytest.mark.parametrize("record", ["error", "record"])
def test_a_sweep_chunk_names_topology_and_check(registry, tmp_path, record):
    plugin = _plugin(tmp_path, compiled=False)
    scenario = tmp_path / "breaks.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    settings = validate({"scenario": str(scenario), "plugins": [str(plugin)], "topologies": 5,
                         "schedulers": ["break_thin_hop"], "unplaceable": record,
                         "results_dir": str(tmp_path / "results")})
    # a bad decision is a plug-in's bug: never recorded as a run, whatever unplaceable says
    with pytest.raises(InputError) as err:
        run_chunk(ChunkSpec(settings, 3, 5, ("break_thin_hop",)))
    _expect(str(err.value), "thin_hop", plugin, prefix="topology 3, break_thin_hop: ")


@pytest.fixture(scope="module")
def compiled_lines(tmp_path_factory) -> tuple[Path, list[str]]:
    """The simulate command's stderr for each compiled plug-in, in CHECKS order: one
    subprocess, so the event loop is compiled with the plug-ins once."""
    folder = tmp_path_factory.mktemp("compiled")
    plugin = _plugin(folder, compiled=True)
    scenario = folder / "breaks.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    script = ("import json, sys\nfrom bacepipe.simulate import main\n"
              f"print(json.dumps([main([{str(scenario)!r}, '--scheduler', 'break_' + c, "
              f"'--plugin', {str(plugin)!r}]) for c in {CHECKS!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=folder, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [2] * len(CHECKS)
    # (other lines, such as a note that the simulator is being compiled, may come first)
    return plugin, [line for line in proc.stderr.splitlines() if ": placed job " in line]


@pytest.mark.long
@pytest.mark.parametrize("check", CHECKS)
def test_a_compiled_part_is_refused_naming_its_check(compiled_lines, check):
    plugin, lines = compiled_lines
    assert len(lines) == len(CHECKS), lines
    _expect(lines[CHECKS.index(check)], check, plugin, prefix="bacepipe.simulate: ")
