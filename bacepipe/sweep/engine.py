"""One sweep point, end to end: plan the chunks, skip the complete ones, fan out the rest,
write each result atomically, then the manifest and a summary.

:func:`run_point` is the Python entry point (the Hydra app in :mod:`bacepipe.sweep.app` only
validates its config and calls it). Bad input is found before the first chunk is fanned out:
the scenario file and its hardware by :func:`prepare_point`, a results directory cut with
another chunk size by the resume scan, and a job that can never be placed (in topology 0) by
the parent's compile run.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np
import polars as pl

import bacepipe
from bacepipe.errors import InputError, Interrupted
from bacepipe.model.scenario import parse_hardware, read_yaml
from bacepipe.sweep import store
from bacepipe.sweep.backends import iter_results
from bacepipe.sweep.chunks import ChunkSpec, make_batch, run_chunk
from bacepipe.sweep.config import SweepSettings

#: The scheduler every normalized column of the summary is relative to.
BASELINE = "bace_pipe"


class Point(NamedTuple):
    """A validated point, ready to run: where it writes and how it is cut."""

    settings: SweepSettings
    paths: store.PointPaths
    ranges: list[tuple[int, int]]
    identity: dict


class PointReport(NamedTuple):
    """What :func:`run_point` did.

    settings : the settings as run (``num_jobs``: the jobs each topology really has).
    runs : polars.LazyFrame over the point's runs rows (all chunks, resumed ones included).
    summary : per-scheduler means and ratios to bace_pipe (:class:`Summary`).
    chunks_total, chunks_run : chunks of the point, and those simulated by this call.
    wall_s : wall time of this call, s.
    """

    settings: SweepSettings
    paths: store.PointPaths
    runs: pl.LazyFrame
    summary: pl.DataFrame
    chunks_total: int
    chunks_run: int
    wall_s: float


def _check_file_hardware(data: dict, settings: SweepSettings) -> None:
    """A scenario file's own hardware must agree with the sweep's, which applies to all.

    Silently replacing the file's values would simulate other hardware than the file says.
    """
    given = data.get("hardware") or {}
    own = parse_hardware(given, f"{settings.scenario}: hardware").to_dict()
    for key in given:
        if own[key] != getattr(settings.hardware, key):
            raise InputError(f"hardware.{key}", f"the scenario file sets {own[key]!r} but the "
                             f"sweep has {getattr(settings.hardware, key)!r}; pass "
                             f"hardware.{key}={own[key]!r} or drop it from the file")


def prepare_point(settings: SweepSettings) -> Point:
    """Read the scenario file (if any), check it, and name the point's directories.

    Raises
    ------
    InputError
        Missing or invalid scenario file; hardware that disagrees with the file.
    """
    if settings.is_file or settings.scenario == "motivation" or "trace" in settings.extensions:
        # These keep their own jobs: the num_jobs axis says how many, not the ignored setting.
        jobs = make_batch(chunk_spec(settings, 0, 1)).params_b.shape[1]
        settings = dataclasses.replace(settings, num_jobs=jobs)
    identity = {
        "scenario": settings.scenario if not settings.is_file else "file",
        "num_regions": settings.num_regions,
        "seed": settings.seed,
        "topologies": settings.topologies,
        "schedulers": list(settings.schedulers),
        "hardware": settings.hardware.to_dict(),
        "extensions": settings.extensions,
    }
    trace = settings.extensions.get("trace")
    if settings.is_file:
        data = read_yaml(settings.scenario)
        _check_file_hardware(data, settings)
        # Content, not path or mtime: an edited file is another point, a moved one is not.
        blob = json.dumps(data, sort_keys=True, default=str).encode()
        identity["scenario_sha256"] = hashlib.sha256(blob).hexdigest()
        if trace is None and data.get("trace") is not None:
            trace = Path(settings.scenario).parent / str(data["trace"])
    if trace is not None:
        identity["trace_sha256"] = _file_sha256(Path(trace))
    pid = store.point_id(settings.seed, settings.num_regions, settings.topologies, identity)
    part = store.partition(settings.scenario_label, settings.bandwidth_scale,
                           settings.gpu_scale, settings.num_jobs, settings.extensions)
    return Point(settings, store.point_paths(settings.results_dir, part, pid),
                 store.chunk_ranges(settings.topologies, settings.chunk_size), identity)


def _file_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise InputError("trace", f"cannot read {str(path)!r}: {err.strerror}") from None


def chunk_spec(s: SweepSettings, start: int, stop: int) -> ChunkSpec:
    return ChunkSpec(
        scenario=s.scenario, seed=s.seed, start=start, stop=stop,
        bandwidth_scale=s.bandwidth_scale, gpu_scale=s.gpu_scale, num_jobs=s.num_jobs,
        num_regions=s.num_regions, hardware=s.hardware, extensions=dict(s.extensions),
        schedulers=s.schedulers, save_jobs=s.save_jobs,
        record_unplaceable=s.unplaceable == "record", validate=s.validate)


def _show_progress(settings: SweepSettings) -> bool:
    return sys.stderr.isatty() if settings.progress is None else settings.progress


def run_point(settings: SweepSettings, extra_manifest: dict | None = None) -> PointReport:
    """Run (or resume) one sweep point and write its results and manifest.

    Parameters
    ----------
    settings : validated settings (:func:`bacepipe.sweep.config.validate`).
    extra_manifest : more JSON-ready entries for the manifest (e.g. Hydra's overrides).

    Raises
    ------
    InputError
        Bad input found before any work (scenario file, hardware, a results directory cut with
        another chunk_size, a job that can never be placed in topology 0), or a job of a later
        topology that can never be placed; a results directory that cannot be written
        (``results_dir: cannot write <path>: <reason>``, found before any work, or when a
        write fails: no temporary is left behind).
    InvariantViolation
        ``validate=true`` and a schedule breaks SPEC §4 (names topology, scheduler and job).
    WorkerLost
        Worker processes kept dying after the retries of :mod:`bacepipe.sweep.backends`.
    Interrupted
        Ctrl-C (a KeyboardInterrupt): says how many chunks are complete on disk; running the
        same point again resumes from them.

    Two runs of the same point take turns (:func:`bacepipe.sweep.store.point_lock`).
    """
    tic = time.perf_counter()
    point = prepare_point(settings)
    try:
        with store.point_lock(point.paths, on_wait=_say_waiting):
            return _run_locked(point, tic, extra_manifest)
    except KeyboardInterrupt:
        raise Interrupted(_interrupted(point)) from None


def _say_waiting(lock: Path) -> None:
    print(f"bacepipe.sweep: another run is writing this point (it holds {lock}); waiting for it",
          file=sys.stderr, flush=True)


def _interrupted(point: Point) -> str:
    try:
        on_disk = str(len(store.complete_chunks(point.paths.runs, point.ranges)))
    except (InputError, OSError):
        on_disk = "?"
    return (f"{on_disk}/{len(point.ranges)} chunks of point {point.paths.point_id} are complete "
            "on disk; run the same command again to resume")


def _run_locked(point: Point, tic: float, extra_manifest: dict | None) -> PointReport:
    """The body of :func:`run_point`, holding the point's lock."""
    from tqdm import tqdm

    settings, paths = point.settings, point.paths
    store.remove_stale_temporaries(paths)
    done = store.complete_chunks(paths.runs, point.ranges)
    if settings.save_jobs:
        done &= store.complete_chunks(paths.jobs, point.ranges)
    todo = [r for r in point.ranges if r not in done]
    if todo:
        # Compile (or load the cached kernels) here, once, before workers start: a cold cache
        # would otherwise be compiled by every worker. Topology 0 also surfaces a job that can
        # never be placed before any chunk is fanned out.
        run_chunk(chunk_spec(settings, 0, 1))
    summary = Summary(settings.schedulers)
    for start, stop in sorted(done):
        summary.add(store.read_chunk(paths.runs, start, stop, ["avg_jct_h", "total_cost"]))
    specs = [chunk_spec(settings, a, b) for a, b in todo]
    label = f"{settings.scenario_label} bw={settings.bandwidth_scale:g} " \
            f"gpu={settings.gpu_scale:g} jobs={settings.num_jobs}"
    with tqdm(total=len(point.ranges), initial=len(point.ranges) - len(todo), unit="chunk",
              desc=label, disable=not _show_progress(settings), file=sys.stderr) as bar:
        for result in iter_results(specs, backend=settings.backend, workers=settings.workers,
                                   dask_address=settings.dask_address):
            name = store.chunk_name(result["start"], result["stop"])
            # Jobs first: a chunk counts as complete once its runs file exists.
            if result["jobs"] is not None:
                store.write_table(paths.jobs / name, result["jobs"], store.JOB_SCHEMA)
            store.write_table(paths.runs / name, result["runs"], store.RUN_SCHEMA)
            summary.add(result["runs"])
            bar.update()
    runs = store.scan_runs(paths, point.ranges)
    wall = time.perf_counter() - tic
    store.write_json(paths.manifest, _manifest(point, store.count_rows(paths.runs, point.ranges),
                                               len(todo), wall, extra_manifest))
    return PointReport(settings, paths, runs, summary.frame(), len(point.ranges), len(todo),
                       wall)


def _manifest(point: Point, rows: int, chunks_run: int, wall: float, extra: dict | None) -> dict:
    s = point.settings
    return {
        "format": store.FORMAT_VERSION,
        "point": point.paths.point_id,
        "partition": {"scenario": s.scenario_label, "bandwidth_scale": s.bandwidth_scale,
                      "gpu_scale": s.gpu_scale, "num_jobs": s.num_jobs},
        "config": s.to_dict(),
        "identity": point.identity,
        "runs_dir": str(point.paths.runs),
        "jobs_dir": str(point.paths.jobs) if s.save_jobs else None,
        "rows": rows,
        "job_rows": store.count_rows(point.paths.jobs, point.ranges) if s.save_jobs else None,
        "chunks": len(point.ranges),
        "chunks_run": chunks_run,
        "wall_time_s": round(wall, 3),
        "finished_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "bacepipe_version": bacepipe.__version__,
        "numba_version": numba.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        **(extra or {}),
    }


# --------------------------------------------------------------------------- summary


class Summary:
    """Per-scheduler means of a point's runs, fed chunk by chunk, so memory stays flat however
    many topologies the point has.

    Each chunk's rows are topology-major with the schedulers in ``schedulers`` order (as
    :func:`bacepipe.sweep.chunks.run_columns` writes them); ratios to ``bace_pipe`` pair the
    rows of one topology.
    """

    def __init__(self, schedulers):
        self.schedulers = tuple(schedulers)
        self.base = self.schedulers.index(BASELINE) if BASELINE in self.schedulers else None
        self.topologies = 0
        # rows: avg JCT, total cost, JCT ratio, cost ratio; columns: schedulers. Runs recorded
        # as unplaceable (NaN) are left out of both the sums and the counts.
        self.sums = np.zeros((4, len(self.schedulers)))
        self.counts = np.zeros((4, len(self.schedulers)), dtype=np.int64)

    def add(self, runs) -> None:
        """Add one chunk's rows (a mapping of columns)."""
        width = len(self.schedulers)
        jct = np.asarray(runs["avg_jct_h"], dtype=np.float64).reshape(-1, width)
        cost = np.asarray(runs["total_cost"], dtype=np.float64).reshape(-1, width)
        self.topologies += jct.shape[0]
        rows = [jct, cost]
        if self.base is not None:
            rows += [jct / jct[:, [self.base]], cost / cost[:, [self.base]]]
        for i, values in enumerate(rows):
            finite = ~np.isnan(values)
            self.sums[i] += np.where(finite, values, 0.0).sum(axis=0)
            self.counts[i] += finite.sum(axis=0)

    def frame(self) -> pl.DataFrame:
        """Per scheduler: topologies, mean avg JCT (h) and total cost ($), and the mean of
        per-topology ratios to ``bace_pipe`` (null when bace_pipe was not simulated)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(self.counts > 0, self.sums / self.counts, np.nan)
        ratio = (lambda row: means[row]) if self.base is not None \
            else (lambda row: [None] * len(self.schedulers))
        return pl.DataFrame({
            "scheduler": list(self.schedulers),
            "topologies": self.counts[0],
            "avg_jct_h": means[0], "jct_vs_bace_pipe": ratio(2),
            "total_cost": means[1], "cost_vs_bace_pipe": ratio(3),
        }, schema_overrides={"jct_vs_bace_pipe": pl.Float64, "cost_vs_bace_pipe": pl.Float64})


def format_summary(summary: pl.DataFrame) -> str:
    """The summary as a fixed-width text table."""
    head = ("scheduler", "topologies", "avg JCT h", "× bace_pipe", "total cost $", "× bace_pipe")

    def ratio(x):
        return "—" if x is None else f"{x:.3f}"

    rows = [(r["scheduler"], str(r["topologies"]), f"{r['avg_jct_h']:.3f}",
             ratio(r["jct_vs_bace_pipe"]), f"{r['total_cost']:.2f}",
             ratio(r["cost_vs_bace_pipe"])) for r in summary.iter_rows(named=True)]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    return "\n".join([line(head), line(tuple("-" * w for w in widths)), *map(line, rows)])
