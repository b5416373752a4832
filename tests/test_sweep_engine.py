"""Fan-out and resume of the sweep engine: identical frames for any workers, chunk size and
backend (loky, dask); a run interrupted at any moment resumes to the uninterrupted result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from bacepipe.errors import InputError
from bacepipe.sweep import chunks, engine, run_point, validate

KEYS = ["scenario", "bandwidth_scale", "gpu_scale", "num_jobs", "topology", "scheduler"]


def settings(root, **overrides):
    # validate: every schedule these tests simulate is replayed against SPEC §4 as well
    values = {"topologies": 30, "chunk_size": 7, "workers": 1, "results_dir": str(root),
              "progress": False, "validate": True}
    values.update(overrides)
    return validate(values)


def frame(root: Path, what: str = "runs") -> pl.DataFrame:
    """Every row under ``root`` (without the point id, which names the run's settings)."""
    df = pl.scan_parquet(str(root / what / "**" / "*.parquet"), hive_partitioning=True).collect()
    keys = KEYS + (["job"] if what == "jobs" else [])
    return df.drop("point").sort(keys)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The reference: workers=1, chunk_size=7, jobs table on."""
    root = tmp_path_factory.mktemp("clean")
    run_point(settings(root, save_jobs=True))
    return root


@pytest.mark.parametrize("overrides", [
    {"workers": 2},
    {"workers": 2, "chunk_size": 4},
    {"chunk_size": 30},
    {"chunk_size": 1, "workers": 2},
])
def test_same_frame_for_any_workers_and_chunk_size(tmp_path, clean, overrides):
    run_point(settings(tmp_path, save_jobs=True, **overrides))
    assert_frame_equal(frame(tmp_path), frame(clean))
    assert_frame_equal(frame(tmp_path, "jobs"), frame(clean, "jobs"))


def test_dask_local_cluster_matches_loky(tmp_path, clean):
    run_point(settings(tmp_path, save_jobs=True, backend="dask", workers=2))
    assert_frame_equal(frame(tmp_path), frame(clean))
    assert_frame_equal(frame(tmp_path, "jobs"), frame(clean, "jobs"))


def test_dask_existing_cluster_address(tmp_path, clean):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False}
                      ) as cluster:
        run_point(settings(tmp_path, backend="dask", dask_address=cluster.scheduler_address,
                           save_jobs=True))
        assert cluster.status.name == "running"  # left running: not ours to close
    assert_frame_equal(frame(tmp_path), frame(clean))


def test_unreachable_dask_address_is_an_input_error(tmp_path, monkeypatch):
    monkeypatch.setattr("bacepipe.sweep.backends.CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(InputError, match="dask_address: cannot connect"):
        run_point(settings(tmp_path, backend="dask", dask_address="tcp://127.0.0.1:9"))


def _files(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_resume_rewrites_only_the_missing_chunk(tmp_path, clean):
    first = run_point(settings(tmp_path, save_jobs=True))
    runs_dir = first.paths.runs
    lost = runs_dir / "chunk-000000014-000000021-lcf.parquet"
    lost.unlink()
    before = {p: m for p, m in _files(tmp_path).items() if "manifests" not in p.parts}
    stray = runs_dir / ".chunk-000000021-000000028-lcf.parquet.123.tmp"
    stray.write_bytes(b"half a parquet file")
    time.sleep(0.01)

    report = run_point(settings(tmp_path, save_jobs=True, workers=2))
    n = len(report.settings.schedulers)
    assert (report.chunks_total, report.chunks_run) == (5 * n, 1)
    assert lost.exists() and not stray.exists()
    after = _files(tmp_path)
    changed = {p for p, m in before.items() if after.get(p) != m}
    # The lost chunk's runs file is new, and its jobs twin was rewritten with it; no other file.
    assert changed == {first.paths.jobs / lost.name}
    assert_frame_equal(frame(tmp_path), frame(clean))
    assert_frame_equal(frame(tmp_path, "jobs"), frame(clean, "jobs"))

    # Asking for the jobs table later recomputes exactly the chunks that lack it.
    (first.paths.jobs / lost.name).unlink()
    assert run_point(settings(tmp_path, save_jobs=True)).chunks_run == 1
    assert run_point(settings(tmp_path)).chunks_run == 0


def test_other_chunk_size_into_the_same_point_is_refused(tmp_path):
    run_point(settings(tmp_path))
    with pytest.raises(InputError, match=r"chunk_size: .* re-run with chunk_size=7"):
        run_point(settings(tmp_path, chunk_size=10))
    assert frame(tmp_path).height == 30 * len(validate({}).schedulers)  # nothing duplicated


def test_adding_a_scheduler_runs_only_its_chunks_one_core_call_each(tmp_path, clean,
                                                                     monkeypatch):
    first = run_point(settings(tmp_path, schedulers=["bace_pipe", "lcf"]))
    before = _files(tmp_path / "runs")
    calls = []
    real = chunks.simulate_batch

    def spy(batch, schedulers, rules):
        calls.append((batch.size, tuple(schedulers)))
        return real(batch, schedulers, rules)

    monkeypatch.setattr(chunks, "simulate_batch", spy)
    report = run_point(settings(tmp_path))  # every scheduler
    names = report.settings.schedulers
    missing = tuple(s for s in names if s not in ("bace_pipe", "lcf"))
    assert report.paths.point_id == first.paths.point_id
    assert (report.chunks_total, report.chunks_run) == (5 * len(names), 5 * len(missing))
    # The parent's compile run of the kernels the chunks use (chunks of 7 and 2 topologies:
    # the parallel ones, on topologies 0-1), then one call per topology range.
    assert calls == [(2, missing)] + [(b - a, missing) for a, b in
                                      ((0, 7), (7, 14), (14, 21), (21, 28), (28, 30))]
    after = _files(tmp_path / "runs")
    assert all(after[p] == m for p, m in before.items())  # the first run's files untouched
    assert_frame_equal(frame(tmp_path), frame(clean))
    assert report.summary["scheduler"].to_list() == list(names)


def test_other_code_never_resumes_into_a_point(tmp_path, monkeypatch, capsys):
    first = run_point(settings(tmp_path, topologies=7))
    monkeypatch.setattr(engine, "source_hash", lambda: "f" * 64)
    again = run_point(settings(tmp_path, topologies=7))
    assert again.paths.point_id != first.paths.point_id
    assert again.chunks_run == again.chunks_total
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "computed by other code" in err[0]
    assert first.paths.point_id in err[0] and again.paths.point_id in err[0]
    assert run_point(settings(tmp_path, topologies=7)).chunks_run == 0
    assert not capsys.readouterr().err  # its own point: resumed silently


def test_a_changed_plugin_scheduler_runs_again(tmp_path, monkeypatch, capsys):
    version = {"lcf": "plug-in v1"}  # lcf stands in for a plug-in scheduler
    monkeypatch.setattr(engine, "identity_of", lambda name: version.get(name, ""))
    s = settings(tmp_path, topologies=14, schedulers=["bace_pipe", "lcf"])
    run_point(s)
    assert run_point(s).chunks_run == 0
    version["lcf"] = "plug-in v2"
    assert run_point(s).chunks_run == 2
    assert "lcf: 2 chunks were computed by another version of its plug-in" \
        in capsys.readouterr().err
    assert run_point(s).chunks_run == 0
    assert frame(tmp_path).height == 14 * 2


def test_an_old_layout_results_dir_is_refused(tmp_path):
    old = tmp_path / "runs" / "scenario=random" / "bandwidth_scale=1.0" / "gpu_scale=1.0" \
        / "num_jobs=8" / "point=s0-r6-t30-0123456789ab"
    old.mkdir(parents=True)
    pl.DataFrame({"topology": [0]}).write_parquet(old / "chunk-000000000-000000001.parquet")
    with pytest.raises(InputError, match=r"^results_dir: .*point=s0-r6-t30-0123456789ab is in "
                       r"the layout of an older bacepipe \(expected arrivals="):
        run_point(settings(tmp_path))
    assert len(list(tmp_path.rglob("*.parquet"))) == 1


@pytest.mark.long
def test_kill_9_then_resume_equals_a_clean_run(tmp_path):
    """SIGKILL a sweep mid-run: only complete *.parquet files remain, and re-running the same
    command completes it to the uninterrupted result."""
    args = [sys.executable, "-m", "bacepipe.sweep", "topologies=3000", "chunk_size=10",
            "workers=1", "save_jobs=true", "progress=false", "num_jobs=12"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    killed = tmp_path / "killed"
    proc = subprocess.Popen([*args, f"results_dir={killed}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((killed / "runs").rglob("*.parquet"))) >= 20:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    total = 300 * len(validate({}).schedulers)
    done = list((killed / "runs").rglob("*.parquet"))
    assert 20 <= len(done) < total, len(done)
    # Every file a reader would pick up is a complete Parquet file.
    for path in [*done, *(killed / "jobs").rglob("*.parquet")]:
        pl.read_parquet(path)

    resumed = subprocess.run([*args, f"results_dir={killed}"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert not list(killed.rglob("*.tmp"))
    # A jobs file without its runs file (killed between the two) is redone with its chunk.
    assert f"{total - len(done)} of {total} chunks run" in resumed.stdout
    clean = tmp_path / "clean"
    run_point(validate({"topologies": 3000, "chunk_size": 100, "workers": 2, "save_jobs": True,
                        "num_jobs": 12, "results_dir": str(clean), "progress": False}))
    assert_frame_equal(frame(killed), frame(clean))
    assert_frame_equal(frame(killed, "jobs"), frame(clean, "jobs"))
