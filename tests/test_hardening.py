"""Hardening (docs/reliability.md): invariants checked by ``validate=true``, faults (a worker
killed mid-chunk, Ctrl-C, an unwritable or full results directory, two runs of one point at
once) and numerical edges. Each fault ends in a complete result or one clear line, never in a
half-written file or a lost chunk.

Most tests call the Python API in-process; subprocesses only where a signal or a second process
is the point of the test. The fuzz of the command line is in tests/test_hydra_fuzz.py.
"""

from __future__ import annotations

import errno
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
import yaml
from faults import KillChunk
from polars.testing import assert_frame_equal
from sweep_cli import sweep_in_process

import bacepipe
from bacepipe.errors import InputError, Interrupted, InvariantViolation, WorkerLost
from bacepipe.model.generate import load_scenario
from bacepipe.policies import SCHEDULERS
from bacepipe.sim.invariants import check_schedule
from bacepipe.sweep import backends, chunks, run_point, store, tables, validate

KEYS = ["scenario", "bandwidth_scale", "gpu_scale", "num_jobs", "topology", "scheduler"]
PROG = "bacepipe.sweep: "
#: Schedulers of a default point; a chunk file holds one topology range of one of them.
N = len(SCHEDULERS)


def settings(root, **overrides):
    values = {"topologies": 30, "chunk_size": 7, "workers": 1, "results_dir": str(root),
              "progress": False, "validate": True}
    values.update(overrides)
    return validate(values)


def frame(root: Path, what: str = "runs") -> pl.DataFrame:
    """Every row under ``root`` without the point id (which hashes the run's settings)."""
    df = pl.scan_parquet(str(root / what / "**" / "*.parquet"), hive_partitioning=True).collect()
    return df.drop("point").sort(KEYS + (["job"] if what == "jobs" else []))


def leftovers(root: Path) -> list[Path]:
    """Temporaries left behind; there must never be any after a run ends, however it ends."""
    return sorted(root.rglob("*.tmp"))


def readable(root: Path) -> int:
    """Every ``*.parquet`` a reader would pick up is a complete file; returns how many."""
    files = list(root.rglob("*.parquet"))
    for path in files:
        pl.read_parquet(path)
    return len(files)




def sweep_cmd(*args) -> tuple[list[str], dict]:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return [sys.executable, "-m", "bacepipe.sweep", *args], env


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The reference: 30 topologies, chunk_size 7, in-process, jobs table on."""
    root = tmp_path_factory.mktemp("clean")
    run_point(settings(root, save_jobs=True))
    return root


# --------------------------------------------------------------------------- validate=true


@pytest.mark.parametrize("options", [
    {},
    {"scenario": "paper", "bandwidth_scale": 0.3, "gpu_scale": 0.5},
    {"latency": "geo", "price_profile": "business", "arrivals": "poisson",
     "arrival_rate_per_h": 0.5},
    {"memory_model": "adam_mixed", "gpu_scale": 0.25, "unplaceable": "record"},
    {"scenario": "aws10", "num_jobs": 14},
])
def test_validate_passes_and_changes_no_row(tmp_path, options):
    """Every schedule of these sweeps obeys SPEC §4, and checking them changes nothing."""
    plain = run_point(settings(tmp_path / "plain", topologies=12, chunk_size=5,
                               validate=False, **options))
    checked = run_point(settings(tmp_path / "checked", topologies=12, chunk_size=5,
                                 validate=True, **options))
    assert checked.paths.point_id == plain.paths.point_id  # not a setting that changes rows
    assert_frame_equal(frame(tmp_path / "checked"), frame(tmp_path / "plain"))


def _corrupt(kind: str):
    """A simulate_batch whose result breaks one invariant in topology 3 under ``lcf`` (row 3
    of the first chunk of 7 topologies; the parent's compile run has one)."""
    real = chunks.simulate_batch
    corrupted = []

    def simulate(batch, schedulers, rules):
        result = real(batch, schedulers, rules)
        if batch.size == 7 and not corrupted:
            corrupted.append(True)
            s = list(schedulers).index("lcf")
            if kind == "duration":
                result.end_s[3, s, 2] += 3600.0  # job 2 runs an hour longer than Eq. 1-2 say
            else:  # every job starts at 0 and keeps its duration: 8 jobs on 6 full regions
                result.end_s[3, s] -= result.start_s[3, s]
                result.start_s[3, s] = 0.0
        return result

    return simulate


@pytest.mark.parametrize("kind, problem", [
    ("duration", r"job 2 \(.*\): runs .* s, Eq. 1-2 give"),
    ("capacity", r"at 0.0 h region R\d uses \d+ GPUs > capacity \d+"),
])
def test_validate_stops_on_a_violation_naming_topology_scheduler_job(tmp_path, monkeypatch,
                                                                      kind, problem):
    monkeypatch.setattr(chunks, "simulate_batch", _corrupt(kind))
    with pytest.raises(InvariantViolation) as err:
        # gpu_scale 0.25: each job fills a region under lcf, so some jobs have to wait
        run_point(settings(tmp_path, validate=True, gpu_scale=0.25))
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("topology 3, lcf: invariant violated: "), text
    assert re.search(problem, text), text
    # The bad chunk [0, 7) was not written; nothing is half-written.
    assert not (tmp_path / "runs").exists() or not any(
        p.name.startswith("chunk-000000000-") for p in (tmp_path / "runs").rglob("*.parquet"))
    assert not leftovers(tmp_path)
    # Without validate the corrupt rows would have gone to disk unnoticed.
    monkeypatch.setattr(chunks, "simulate_batch", _corrupt(kind))
    run_point(settings(tmp_path / "unchecked", validate=False, gpu_scale=0.25))


def test_invariant_violation_exits_3_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(chunks, "simulate_batch", _corrupt("duration"))
    code, err = sweep_in_process(["topologies=10", "chunk_size=7", "workers=1", "validate=true",
                                f"results_dir={tmp_path / 'res'}"], capsys)
    assert code == 3, err
    assert err.count("\n") == 1 and err.startswith(PROG + "topology 3, lcf: invariant"), err


# --------------------------------------------------------------------------- workers killed


def test_loky_worker_killed_mid_chunk_is_retried(tmp_path, monkeypatch, clean, capfd):
    killer = KillChunk(start=7, marks=tmp_path)
    monkeypatch.setattr(backends, "run_chunk", killer)
    report = run_point(settings(tmp_path / "res", workers=2, save_jobs=True))
    assert killer.kills() == 1 and report.chunks_run == 5 * N
    assert "a worker process died (exit codes {SIGKILL(-9)})" in capfd.readouterr().err
    assert_frame_equal(frame(tmp_path / "res"), frame(clean))
    assert_frame_equal(frame(tmp_path / "res", "jobs"), frame(clean, "jobs"))
    assert not leftovers(tmp_path)


def test_loky_worker_killed_every_time_is_one_line_exit_4(tmp_path, monkeypatch, capsys):
    killer = KillChunk(start=7, marks=tmp_path, times=99)
    monkeypatch.setattr(backends, "run_chunk", killer)
    monkeypatch.chdir(tmp_path)
    res = tmp_path / "res"
    code, err = sweep_in_process(["topologies=30", "chunk_size=7", "workers=2",
                                f"results_dir={res}"], capsys)
    assert code == 4, err
    assert killer.kills() == backends.MAX_RETRIES + 1
    *notes, last = err.strip().splitlines()
    assert len(notes) == backends.MAX_RETRIES and all("re-running" in n for n in notes), err
    assert last.startswith(PROG + "a worker process died 3 times (exit codes"), err
    assert "chunks not done" in last and "re-run resumes" in last
    done = readable(res)
    assert not leftovers(res) and done < 5 * N
    # The chunks that finished are kept: a re-run (without the fault) does only the rest. (How
    # many finished before the pool broke depends on how fast the other worker started.)
    monkeypatch.undo()
    report = run_point(settings(res))
    assert report.chunks_run == 5 * N - done and frame(res).height == 30 * N


def test_dask_worker_killed_mid_chunk_is_retried(tmp_path, monkeypatch, clean, capfd):
    killer = KillChunk(start=7, marks=tmp_path, inner="run_chunk_one_thread")
    monkeypatch.setattr(backends, "run_chunk_one_thread", killer)
    run_point(settings(tmp_path / "res", backend="dask", workers=2, save_jobs=True))
    assert killer.kills() == 1
    assert capfd.readouterr().err == ""  # the nanny's and scheduler's logs stay quiet
    assert_frame_equal(frame(tmp_path / "res"), frame(clean))
    assert_frame_equal(frame(tmp_path / "res", "jobs"), frame(clean, "jobs"))


@pytest.mark.long
def test_dask_worker_killed_every_time_is_worker_lost(tmp_path, monkeypatch, capfd):
    killer = KillChunk(start=7, marks=tmp_path, times=99, inner="run_chunk_one_thread")
    monkeypatch.setattr(backends, "run_chunk_one_thread", killer)
    with pytest.raises(WorkerLost) as err:
        run_point(settings(tmp_path / "res", backend="dask", workers=2))
    text = str(err.value)
    assert "\n" not in text and text.startswith("topologies 7-13: the worker process running "
                                                "them died 3 times;"), text
    assert killer.kills() == backends.MAX_RETRIES + 1
    assert not leftovers(tmp_path / "res")
    assert capfd.readouterr().err == ""  # the one line is the exception's


def interrupt_after(proc: subprocess.Popen, res: Path, chunks: int) -> str:
    """Ctrl-C the sweep's process group once ``chunks`` chunk files exist; its stderr."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((res / "runs").rglob("*.parquet"))) >= chunks:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=60)[1]


# --------------------------------------------------------------------------- Ctrl-C


@pytest.mark.long
def test_ctrl_c_stops_cleanly_and_resume_equals_a_clean_run(tmp_path):
    """SIGINT to the sweep's whole process group (as a terminal's Ctrl-C): exit 130 with one
    line, only complete files, and running the same command again completes the point."""
    res = tmp_path / "res"
    args = ["topologies=1000", "chunk_size=5", "workers=2", "save_jobs=true", "progress=false",
            "num_jobs=12", f"results_dir={res}"]
    cmd, env = sweep_cmd(*args)
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    err = interrupt_after(proc, res, chunks=10)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PROG + "interrupted: "), err
    assert f"/{200 * N} chunks of point" in lines[0] and "run the same command again" in lines[0]
    assert not leftovers(res)
    done = readable(res / "runs")
    assert 10 <= done < 200 * N

    resumed = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{200 * N - done} of {200 * N} chunks run" in resumed.stdout
    run_point(validate({"topologies": 1000, "chunk_size": 250, "workers": 2, "save_jobs": True,
                        "num_jobs": 12, "results_dir": str(tmp_path / "clean"),
                        "progress": False}))
    assert_frame_equal(frame(res), frame(tmp_path / "clean"))
    assert_frame_equal(frame(res, "jobs"), frame(tmp_path / "clean", "jobs"))
    assert not leftovers(res)


def test_ctrl_c_with_dask_is_one_line_too(tmp_path):
    """The dask LocalCluster's workers ignore the group's SIGINT; the parent stops them."""
    res = tmp_path / "res"
    cmd, env = sweep_cmd("topologies=1000", "chunk_size=5", "workers=2", "backend=dask",
                         "progress=false", f"results_dir={res}")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    err = interrupt_after(proc, res, chunks=5)
    assert proc.returncode == 130, err
    assert err.count("\n") == 1 and err.startswith(PROG + "interrupted: "), err
    assert not leftovers(res) and readable(res) >= 5


def test_keyboard_interrupt_in_process_names_what_is_on_disk(tmp_path, monkeypatch):
    real = tables.write_table
    calls = []

    def interrupt_third(path, columns, schema, identity=""):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(path, columns, schema, identity)

    monkeypatch.setattr(tables, "write_table", interrupt_third)
    with pytest.raises(Interrupted, match=rf"^2/{5 * N} chunks of point s0-r6-t30-[\w-]+ are "
                                          "complete on disk; run the same command again to "
                                          "resume$"):
        run_point(settings(tmp_path))
    assert not leftovers(tmp_path) and readable(tmp_path) == 2


# --------------------------------------------------------------------------- results_dir


def test_results_dir_under_a_file_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory is expected")
    code, err = sweep_in_process(["topologies=5", "workers=1", f"results_dir={blocker / 'res'}"],
                               capsys)
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{PROG}results_dir: cannot write '{blocker / 'res'}/"), err
    assert err.strip().endswith(": Not a directory"), err
    assert blocker.read_text().startswith("a file")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes through mode 0o555 (the file-in-the-way test covers it)")
def test_read_only_results_dir_is_an_input_error(tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o555)
    with pytest.raises(InputError, match=rf"results_dir: cannot write '{locked}/.*Permission"):
        run_point(settings(locked / "res"))


def test_full_disk_mid_write_leaves_nothing_and_resumes(tmp_path, monkeypatch, clean):
    """ENOSPC while a chunk file is being written: one line naming it, no partial or
    temporary file; once there is room, the same run completes to the clean result."""
    real = tables.pq.write_table
    written = []

    def fill_disk(table, f):
        if len(written) == 2:
            f.write(b"PAR1" + b"\0" * 4096)  # part of a file, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(1)
        real(table, f)

    monkeypatch.setattr(tables.pq, "write_table", fill_disk)
    with pytest.raises(InputError) as err:
        run_point(settings(tmp_path, save_jobs=True))
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"results_dir: cannot write '{tmp_path}/"), text
    # Jobs, then runs, per scheduler: the third file is the second scheduler's jobs.
    second = validate({}).schedulers[1]
    assert text.endswith(f"chunk-000000000-000000007-{second}.parquet': No space left on "
                         "device"), text
    assert not leftovers(tmp_path) and readable(tmp_path) == 2  # the first one's jobs and runs
    monkeypatch.undo()
    assert run_point(settings(tmp_path, save_jobs=True)).chunks_run == 5 * N - 1
    assert_frame_equal(frame(tmp_path), frame(clean))
    assert_frame_equal(frame(tmp_path, "jobs"), frame(clean, "jobs"))


# --------------------------------------------------------------------------- two runs, one point


def test_second_run_of_a_point_waits_for_the_lock(tmp_path, capfd, clean):
    s = settings(tmp_path, save_jobs=True)
    paths = bacepipe.sweep.engine.prepare_point(s).paths
    outcome = {}
    with store.point_lock(paths):
        runner = threading.Thread(target=lambda: outcome.update(report=run_point(s)))
        runner.start()
        runner.join(timeout=1.0)
        assert runner.is_alive() and not (tmp_path / "runs").exists()
        assert "another run is writing this point" in capfd.readouterr().err
    runner.join(timeout=60)
    assert outcome["report"].chunks_run == 5 * N
    assert_frame_equal(frame(tmp_path), frame(clean))


def test_other_points_manifest_temporaries_are_not_swept_away(tmp_path):
    first = run_point(settings(tmp_path, topologies=3))
    other = first.paths.manifest.with_name(".point=s1-r6-t3-000000000000.json.4242.tmp")
    mine = first.paths.manifest.with_name(f".{first.paths.manifest.name}.4242.tmp")
    other.write_text("{")
    mine.write_text("{")
    run_point(settings(tmp_path, topologies=3))
    assert other.exists() and not mine.exists()


@pytest.mark.long
def test_two_identical_sweeps_at_once_equal_a_clean_run(tmp_path):
    res = tmp_path / "res"
    cmd, env = sweep_cmd("topologies=3000", "chunk_size=50", "workers=1", "num_jobs=12",
                         "save_jobs=true", "progress=false", f"results_dir={res}")
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
    runs = sorted(int(out.split(" chunks run")[0].rsplit("· ", 1)[1].split(" of ")[0])
                  for out, _ in outs)
    assert runs == [0, 60 * N]  # one wrote every chunk, the other found them written
    assert not leftovers(res)
    run_point(validate({"topologies": 3000, "chunk_size": 50, "workers": 1, "num_jobs": 12,
                        "save_jobs": True, "results_dir": str(tmp_path / "clean"),
                        "progress": False}))
    assert_frame_equal(frame(res), frame(tmp_path / "clean"))
    assert_frame_equal(frame(res, "jobs"), frame(tmp_path / "clean", "jobs"))


# --------------------------------------------------------------------------- numerical edges


def _job(name, params_b, layers, hidden, batch_size, samples, **extra):
    return {"name": name, "params_b": params_b, "layers": layers, "hidden": hidden,
            "batch_size": batch_size, "dataset_samples": samples, **extra}


YEARS = _job("years", 1000, 200, 20000, 4096, 10**12)          # ~4 million years on 1 GPU
SECONDS = _job("seconds", 0.001, 1, 8, 1, 1)                    # a few milliseconds
MID = _job("mid", 7, 32, 4096, 64, 5000)

EDGES = {
    "years and seconds, one region of one GPU": {
        "regions": [{"name": "solo", "gpus": 1, "price": 0.2, "bandwidth_gbps": 1}],
        "jobs": [YEARS, SECONDS, {**SECONDS, "name": "late", "arrival_h": 1e3}]},
    "seconds after years, one-GPU regions, equal prices": {
        "regions": [{"name": f"r{i}", "gpus": 1, "price": 0.2, "bandwidth_gbps": 10}
                    for i in range(3)],
        "jobs": [YEARS, {**YEARS, "name": "years2"}, {**YEARS, "name": "years3"},
                 {**SECONDS, "arrival_h": 1}, _job("seconds2", 0.001, 4, 8, 2, 3, arrival_h=1)]},
    "links slower than any job needs": {
        "regions": [{"name": f"r{i}", "gpus": 2, "price": 0.1 + 0.05 * i} for i in range(4)],
        "links_gbps": [[0 if u == v else 1e-9 for v in range(4)] for u in range(4)],
        "jobs": [{**MID, "name": f"j{i}"} for i in range(6)]},
    "no links at all": {
        "regions": [{"name": f"r{i}", "gpus": 3, "price": 0.2} for i in range(3)],
        "links_gbps": [[0.0] * 3 for _ in range(3)],
        "jobs": [{**MID, "name": f"j{i}"} for i in range(5)]},
    "equal prices and GPUs everywhere (ties)": {
        "regions": [{"name": f"r{i}", "gpus": 8, "price": 0.25, "bandwidth_gbps": 40}
                    for i in range(5)],
        "jobs": [{**MID, "name": f"j{i}", "layers": 40} for i in range(8)]},
    "one region only": {
        "regions": [{"name": "only", "gpus": 64, "price": 0.3, "bandwidth_gbps": 50}],
        "jobs": [{**MID, "name": f"j{i}", "arrival_h": i * 0.5} for i in range(6)]},
    "huge capacity": {
        "regions": [{"name": f"r{i}", "gpus": 100_000, "price": 0.2, "bandwidth_gbps": 1e6}
                    for i in range(2)],
        "jobs": [YEARS, SECONDS, MID]},
    "seconds and years with geo latency and time-of-use prices": {
        "latency": "geo",
        "regions": [{"name": "a", "gpus": 1, "price": 0.2, "bandwidth_gbps": 1e-6,
                     "lat": 53.35, "lon": -6.26, "price_profile": [0.5] * 12 + [1.5] * 12},
                    {"name": "b", "gpus": 2, "price": 0.2, "bandwidth_gbps": 1e-6,
                     "lat": -33.87, "lon": 151.21, "utc_offset_h": 10,
                     "price_profile": [1.5] * 12 + [0.5] * 12}],
        "jobs": [YEARS, SECONDS, MID]},
}


def _finite(result: dict) -> bool:
    numbers = [v for k, v in result.items() if isinstance(v, float)]
    for job in result["jobs"]:
        numbers += [job[k] for k in ("start_h", "end_h", "jct_h", "cost")]
    return all(math.isfinite(x) for x in numbers)


@pytest.mark.parametrize("name", list(EDGES))
def test_numerical_edges_stay_finite_and_obey_the_invariants(name):
    data = EDGES[name]
    scenario = load_scenario(data)
    for scheduler in SCHEDULERS:
        result = bacepipe.run_scenario(data, scheduler)
        assert _finite(result), (scheduler, result)
        assert check_schedule(scenario, result) == [], scheduler
        assert bacepipe.run_scenario(data, scheduler) == result  # ties break the same way


def test_edges_through_the_sweep_with_validate(tmp_path):
    """The same edges as scenario files swept at extreme scales, every schedule replayed."""
    for i, name in enumerate(["years and seconds, one region of one GPU",
                              "links slower than any job needs",
                              "equal prices and GPUs everywhere (ties)"]):
        path = tmp_path / f"edge{i}.yaml"
        path.write_text(yaml.safe_dump(EDGES[name]))
        for scales in ({"bandwidth_scale": 1e-6, "gpu_scale": 1e-3},
                       {"bandwidth_scale": 1e6, "gpu_scale": 1e3}):
            report = run_point(settings(tmp_path / "res", scenario=str(path), topologies=2,
                                        validate=True, **scales))
            runs = report.runs.collect()
            assert runs.height == 2 * N
            assert runs.select(pl.all_horizontal(pl.col("avg_jct_h", "total_cost",
                                                        "makespan_h").is_finite())).to_series().all()
    random = run_point(settings(tmp_path / "res", num_regions=1, gpu_scale=1e-3, num_jobs=20,
                                topologies=4, validate=True))
    assert random.runs.collect()["avg_jct_h"].is_finite().all()
