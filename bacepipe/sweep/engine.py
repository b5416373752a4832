"""One sweep point, end to end: name it, skip the chunks already complete, fan out the rest,
write each result atomically, then the manifest and a summary.

:func:`run_point` is the Python entry point (the Hydra app in :mod:`bacepipe.sweep.app` only
validates its config and calls it). The settings flow one way through it: their identity and
levels name the point (:func:`prepare_point`, :mod:`~bacepipe.sweep.store`), the chunks still
to run go to the workers (:mod:`~bacepipe.sweep.backends`, :mod:`~bacepipe.sweep.chunks`),
their results to the tables (:mod:`~bacepipe.sweep.tables`) and from there to the summary
(:mod:`~bacepipe.sweep.summary`). Bad input is found before the first chunk is fanned out: the
scenario file and its hardware by :func:`prepare_point`, a results directory cut with another
chunk size by the resume scan, and a job that can never be placed (in topology 0) by the
parent's compile run.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl
from tqdm import tqdm

import bacepipe
from bacepipe.errors import Interrupted
from bacepipe.model.generate import generate_batch
from bacepipe.policies import engine_of, identity_of
from bacepipe.settings import SweepSettings
from bacepipe.sources import source_hash
from bacepipe.sweep import store, tables
from bacepipe.sweep.backends import iter_results
from bacepipe.sweep.chunks import ChunkSpec, run_chunk
from bacepipe.sweep.config import check_optimal_size
from bacepipe.sweep.summary import summarize


class Point(NamedTuple):
    """A validated point, ready to run: where it writes, how it is cut, and the identity of
    each scheduler's files (:func:`bacepipe.policies.identity_of`)."""

    settings: SweepSettings
    paths: store.PointPaths
    ranges: list[tuple[int, int]]
    identity: dict
    levels: dict
    schedulers: dict[str, str]


class PointReport(NamedTuple):
    """What :func:`run_point` did.

    settings : the settings as run (``num_jobs``: the jobs each topology really has).
    runs : polars.LazyFrame over the point's runs rows (all chunks, resumed ones included).
    summary : per-scheduler means and the geometric mean of the paired ratios to bace_pipe
        with its 95 % CI, as the report computes them (:class:`~bacepipe.sweep.summary.Summary`).
    chunks_total, chunks_run : chunk files of the point (topology ranges × schedulers), and
        those simulated by this call.
    wall_s : wall time of this call, s.
    """

    settings: SweepSettings
    paths: store.PointPaths
    runs: pl.LazyFrame
    summary: pl.DataFrame
    chunks_total: int
    chunks_run: int
    wall_s: float


def prepare_point(settings: SweepSettings) -> Point:
    """Check the point's world and name its directories, before any work.

    The point's identity is every setting that changes results
    (:meth:`~bacepipe.settings.SweepSettings.identity`) and the world of its topology 0: a
    scenario or trace file is known by what it says (an edited file is another point, a moved
    one is not).

    Raises
    ------
    InputError
        Missing or invalid scenario file; hardware that disagrees with the file; a point too
        large for ``optimal=true``; a results directory of an older layout.
    """
    first = generate_batch(topologies=[0], **settings.world())
    # A file, motivation or a trace keep their own jobs: the num_jobs level says how many.
    settings = dataclasses.replace(settings, num_jobs=first.params_b.shape[1])
    if settings.optimal:
        check_optimal_size(settings, first)
    world = json.dumps(first.scenario(0).to_dict(), sort_keys=True).encode()
    identity = {**settings.identity(), "world_sha256": hashlib.sha256(world).hexdigest()}
    levels = settings.levels()
    schedulers = {name: _digest(identity_of(name)) for name in settings.schedulers}
    store.check_layout(settings.results_dir)
    pid = store.point_id(settings.seed, settings.num_regions, settings.topologies, identity,
                         source_hash())
    return Point(settings, store.point_paths(settings.results_dir, store.partition(levels), pid),
                 store.chunk_ranges(settings.topologies, settings.chunk_size), identity, levels,
                 schedulers)


def _digest(identity: str) -> str:
    """A plug-in scheduler's identity as 16 hex digits ("" stays "": a built-in)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:16] if identity else ""


def _say_waiting(lock: Path) -> None:
    print(f"bacepipe.sweep: another run is writing this point (it holds {lock}); waiting for it",
          file=sys.stderr, flush=True)


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

    Two runs of the same point take turns (:func:`bacepipe.sweep.store.point_lock`). However
    it ends, a run leaves no lock file and none of the folders it made empty: refused before its
    first chunk, it leaves the results directory as it found it.
    """
    tic = time.perf_counter()
    point = prepare_point(settings)
    s, paths = point.settings, point.paths
    total = len(point.ranges) * len(s.schedulers)
    on_disk = "?"  # unknown until the lock is held
    try:
        with store.point_lock(paths, on_wait=_say_waiting):
            store.remove_stale_temporaries(paths)
            plan = store.plan(paths, point.ranges, point.schedulers, s.save_jobs)
            for note in plan.notes:
                print(f"bacepipe.sweep: {note}", file=sys.stderr, flush=True)
            on_disk = plan.done
            specs = [ChunkSpec(s, start, stop, names) for start, stop, names in plan.todo]
            if specs:
                # Compile (or load the cached kernels) here, once, before workers start: a cold
                # cache would otherwise be compiled by every worker. A chunk of one topology
                # runs the serial kernels, a larger one the parallel: compile those the chunks
                # use. Topology 0 also surfaces a job that can never be placed before any chunk
                # is fanned out. (Without OPT: CP-SAT compiles nothing, and its answer here
                # would be thrown away.)
                for size in sorted({min(2, spec.stop - spec.start) for spec in specs}):
                    run_chunk(ChunkSpec(dataclasses.replace(s, optimal=False), 0, size,
                                        specs[0].schedulers))
            label = f"{s.scenario_label} bw={s.bandwidth_scale:g} gpu={s.gpu_scale:g} " \
                    f"jobs={s.num_jobs}"
            show = sys.stderr.isatty() if s.progress is None else s.progress
            with tqdm(total=total, initial=plan.done, unit="chunk", desc=label,
                      disable=not show, file=sys.stderr) as bar:
                for result in iter_results(specs, backend=s.backend, workers=s.workers,
                                           dask_address=s.dask_address):
                    for _ in tables.write_result(paths, result, point.schedulers):
                        on_disk += 1
                        bar.update()
            chunks_run = total - plan.done
            manifest = {
                "format": store.FORMAT_VERSION,
                "point": paths.point_id,
                "partition": point.levels,
                "source_hash": source_hash(),
                "config": s.to_dict(),
                "identity": point.identity,
                "schedulers": {name: {"engine": engine_of(name), "identity": point.schedulers[name]}
                               for name in s.schedulers},
                "runs_dir": str(paths.runs),
                "jobs_dir": str(paths.jobs) if s.save_jobs else None,
                "rows": tables.count_rows(paths.runs, point.ranges, s.schedulers),
                "job_rows": (tables.count_rows(paths.jobs, point.ranges, s.schedulers)
                             if s.save_jobs else None),
                "chunks": total,
                "chunks_run": chunks_run,
                # Until the results are written (the summary below reads them back).
                "wall_time_s": round(time.perf_counter() - tic, 3),
                "finished_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "bacepipe_version": bacepipe.__version__,
                "numba_version": version("numba"),
                "numpy_version": np.__version__,
                "python_version": platform.python_version(),
                **(extra_manifest or {}),
            }
            tables.write_json(paths.manifest, manifest)
            runs = tables.scan_runs(paths, point.ranges, s.schedulers)
            ranges = tables.read_ranges(paths.runs, point.ranges, s.schedulers,
                                        ["avg_jct_h", "total_cost"])
            summary = summarize(s.schedulers, ranges)
            return PointReport(s, paths, runs, summary, total, chunks_run,
                               time.perf_counter() - tic)
    except KeyboardInterrupt:
        raise Interrupted(f"{on_disk}/{total} chunks of point {paths.point_id} are complete "
                          "on disk; run the same command again to resume") from None
