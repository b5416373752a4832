"""What ``python -m bacepipe.sweep`` leaves on disk (issue 48.6, docs/reliability.md "Nothing left
behind"): a refused command leaves the working directory, the results directory and the
temporary folder as it found them; a finished one writes only its results, whose manifests hold
Hydra's record.

The command runs in this process (``app.main``) from a temporary working directory, as one
point and as a multirun; ``tempfile.tempdir`` points at a folder of the test, where the
multirun's scratch folder goes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from sweep_cli import sweep_in_process

from bacepipe.sweep import run_point, store, validate

#: Every refused command below runs this point (a refusal must not touch its results).
POINT = ("topologies=2", "workers=1", "progress=false", "results_dir=results")
#: A placement (plain-Python twin only: it needs no compile) that takes one GPU more than free.
GRAB = """
from bacepipe.policies import register_part, register_scheduler

def grab_twin(state, jm, k, prices, allocate):
    return [0], [state.free[0] + 1]

register_part("placement", "grab", twin=grab_twin)
register_scheduler("grabber", ordering="fcfs", placement="grab", allocator="fill")
"""


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (hidden ones included), with the content of each file."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def earlier(tmp_path_factory) -> Path:
    """Results of an earlier run of the same point (other schedulers): a refused run must leave
    them, and the partition folders it shares with them, as they are."""
    root = tmp_path_factory.mktemp("earlier") / "results"
    run_point(validate({"topologies": 2, "workers": 1, "progress": False,
                        "schedulers": ["lcf"], "results_dir": str(root)}))
    return root


@pytest.fixture
def where(tmp_path, monkeypatch):
    """(working directory, temporary folder), both empty, both in use for the test."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return cwd, tmp




def _scenario(cwd: Path, base: dict, name: str, **changes) -> str:
    path = cwd / name
    path.write_text(yaml.safe_dump({**base, **changes}))
    return f"scenario={path}"


def _refusals(cwd: Path, base: dict) -> dict[str, tuple[list[str], str]]:
    """name -> (arguments, what the one line says)."""
    grab = cwd / "grab.py"
    grab.write_text(GRAB)
    never = dict(base, memory_model="adam_mixed",
                 jobs=[dict(base["jobs"][0], params_b=500)])  # more GPUs than exist
    return {
        "bad value": (["topologies=0"], "topologies"),
        "bad value found in the job": (["topologies=100000000", "chunk_size=1"], "chunk_size"),
        "unknown key": (["nosuch=1"], "unknown key"),
        "unknown config group option": (["hydra/launcher=nosuch"], "hydra/launcher"),
        "unknown preset": (["+preset=fig9"], "preset"),
        "missing scenario file": (["scenario=nope.yaml"], "scenario"),
        "bad scenario file": ([_scenario(cwd, base, "bad.yaml", regions=[])], "regions"),
        "invalid plug-in placement": ([f"plugins=[{grab}]", "schedulers=[grabber]"],
                                      "SPEC §4"),
        "job that can never be placed": ([_scenario(cwd, never, "never.yaml")], "jobs[0]"),
    }


CASES = ["bad value", "bad value found in the job", "unknown key", "unknown config group option",
         "unknown preset", "missing scenario file", "bad scenario file",
         "invalid plug-in placement", "job that can never be placed"]


@pytest.mark.parametrize("multirun", [False, True], ids=["one point", "multirun"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("results", ["new", "earlier"])
def test_a_refused_sweep_leaves_nothing_behind(case, multirun, results, where, earlier,
                                               base_scenario, registry, capsys):
    cwd, tmp = where
    if results == "earlier":
        shutil.copytree(earlier, cwd / "results")
    args, says = _refusals(cwd, base_scenario)[case]
    before = tree(cwd)
    code, err = sweep_in_process([*(["-m"] if multirun else []), *POINT, *args], capsys)  # args win
    assert code == 2, err
    # A plug-in's first run compiles it and says so first (bacepipe.core.compile_notice).
    err = "".join(line for line in err.splitlines(keepends=True)
                  if not line.startswith(("compiling the simulator", "compiled the simulator")))
    assert err.startswith("bacepipe.sweep: ") and err.count("\n") == 1 and says in err, err
    # No Hydra folder, no lock file, no partition or point folder; the earlier results intact.
    assert tree(cwd) == before
    assert not list(tmp.iterdir())  # the multirun's scratch folder is gone too


def test_a_finished_multirun_writes_only_its_results(where, capsys):
    cwd, tmp = where
    code, err = sweep_in_process(["-m", "bandwidth_scale=0.5,1.5", "schedulers=[lcf,bace_pipe]",
                                  *POINT], capsys)
    assert code == 0, err
    assert [p.name for p in cwd.iterdir()] == ["results"]
    assert not list(tmp.iterdir())
    results = cwd / "results"
    assert sorted(p.name for p in results.iterdir()) == [store.MANIFESTS, store.RUNS]
    assert not [p for p in results.rglob(".*")]  # no lock file, no temporary
    # Hydra's record, in each point's manifest: the config and the overrides that made it.
    manifests = sorted(results.rglob("*.json"))
    assert len(manifests) == 2
    for number, path in enumerate(manifests):
        manifest = json.loads(path.read_text())
        hydra = manifest["hydra"]
        assert hydra["mode"] == "MULTIRUN" and hydra["job_num"] == number
        assert {f"bandwidth_scale={(0.5, 1.5)[number]}", "schedulers=[lcf,bace_pipe]",
                "results_dir=results"} <= set(hydra["overrides"])
        assert manifest["config"]["bandwidth_scale"] == (0.5, 1.5)[number]


def test_a_hydra_folder_asked_for_is_kept(where, capsys):
    cwd, tmp = where
    code, err = sweep_in_process(["-m", "schedulers=[lcf]", *POINT, "hydra.sweep.dir=mr",
                       "hydra.output_subdir=.hydra"], capsys)
    assert code == 0, err
    assert (cwd / "mr" / "multirun.yaml").is_file()
    assert (cwd / "mr" / "0" / ".hydra" / "overrides.yaml").is_file()
    assert not list(tmp.iterdir())


def test_chdir_is_refused_before_anything_is_written(where, capsys):
    cwd, tmp = where
    code, err = sweep_in_process(["hydra.job.chdir=true", *POINT], capsys)
    assert code == 2 and err.startswith("bacepipe.sweep: hydra.job.chdir: "), err
    assert not list(cwd.iterdir()) and not list(tmp.iterdir())
