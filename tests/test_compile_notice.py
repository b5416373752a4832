"""A run that compiles the simulator says so before it starts compiling (issue 48.1): the
simulate and sweep commands on their stderr, ``run_scenario`` on the ``bacepipe`` logger."""

import io
import logging
import os
import subprocess
import sys

import pytest

import bacepipe
from bacepipe import simulate
from bacepipe.core import compile_notice
from bacepipe.core.compile_notice import announce_on
from bacepipe.sweep import app


@pytest.fixture
def fresh_markers(tmp_path, monkeypatch):
    """No kernel variant counts as compiled (the kernels themselves stay cached: fast)."""
    monkeypatch.setattr(compile_notice, "CACHE_DIR", tmp_path)
    return tmp_path


def test_the_notice_comes_first_and_once(fresh_markers):
    stream = io.StringIO()
    with announce_on(stream):
        with compile_notice.compile_notice("serial"):
            stream.write("work\n")
        with compile_notice.compile_notice("serial"):
            stream.write("again\n")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("compiling the simulator (serial kernels")
    assert lines[1] == "work"
    assert lines[2].startswith("compiled the simulator's serial kernels in")
    assert lines[3:] == ["again"]
    assert len(list(fresh_markers.glob("compiled-*"))) == 1


def test_a_failed_compile_is_announced_again(fresh_markers):
    stream = io.StringIO()
    with announce_on(stream), pytest.raises(RuntimeError):
        with compile_notice.compile_notice("parallel"):
            raise RuntimeError("stopped")
    assert not list(fresh_markers.glob("compiled-*"))
    assert stream.getvalue().startswith("compiling the simulator (parallel kernels")


def test_simulate_announces_on_stderr(fresh_markers, capsys):
    assert simulate.main(["motivation", "--scheduler", "lcf"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("compiling the simulator (serial kernels")
    assert err[1].startswith("compiled the simulator's serial kernels in")
    assert simulate.main(["motivation", "--scheduler", "lcf"]) == 0
    assert capsys.readouterr().err == ""


def test_run_scenario_logs_it(fresh_markers, caplog):
    with caplog.at_level(logging.WARNING, logger="bacepipe"):
        bacepipe.run_scenario("motivation", "lcf")
    assert [r.getMessage()[:24] for r in caplog.records] == ["compiling the simulator ",
                                                              "compiled the simulator's"]


def test_the_sweep_compiles_what_its_chunks_run_before_the_progress_bar(fresh_markers, tmp_path,
                                                                      capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = app.main([f"results_dir={tmp_path / 'results'}", "topologies=3", "chunk_size=2",
                     "workers=1", "schedulers=[lcf]", "progress=true"])
    assert code == 0
    err = capsys.readouterr().err
    # Chunks of 2 and 1 topologies: both variants, compiled in the parent before any chunk.
    assert err.index("compiling the simulator (parallel") < err.index("compiled the simulator's "
                                                                       "parallel")
    assert "compiling the simulator (serial" in err
    assert err.rindex("compiled the simulator's") < err.index("chunk")


def test_importing_the_engine_compiles_nothing(tmp_path):
    """Every compile happens inside the notice: importing the front doors writes no kernel."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", "import bacepipe.core.entry, bacepipe.simulate, "
                           "bacepipe.sweep.engine"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # (The structures' constructors excepted: the parts' signatures are typed from their output.)
    compiled = [p.name for p in tmp_path.rglob("*.nbi") if not p.name.startswith("structs.")]
    assert not compiled, f"compiled at import: {compiled}"
