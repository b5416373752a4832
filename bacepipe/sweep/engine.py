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
from bacepipe.model.scenario import parse_hardware, read_yaml, scale_gpus
from bacepipe.model.tables import GPU_CHOICES
from bacepipe.policies import engine_of, identity_of
from bacepipe.sources import source_hash
from bacepipe.sweep import store
from bacepipe.sweep.backends import iter_results
from bacepipe.sweep.chunks import ChunkSpec, make_batch, run_chunk
from bacepipe.sweep.config import SweepSettings, check_optimal_size

#: The scheduler every normalized column of the summary is relative to.
BASELINE = "bace_pipe"


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
    summary : per-scheduler means and ratios to bace_pipe (:class:`Summary`).
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
    store.check_layout(settings.results_dir)
    if settings.is_file or settings.scenario == "motivation" or "trace" in settings.extensions:
        # These keep their own jobs: the num_jobs axis says how many, not the ignored setting.
        jobs = make_batch(settings, 0, 1).params_b.shape[1]
        settings = dataclasses.replace(settings, num_jobs=jobs)
    if settings.optimal:
        _check_optimal_size(settings)
    identity = {
        "scenario": settings.scenario if not settings.is_file else "file",
        "num_regions": settings.num_regions,
        "seed": settings.seed,
        "topologies": settings.topologies,
        "hardware": settings.hardware.to_dict(),
        "extensions": settings.extensions,
        "start_rule": settings.start_rule,
        "plan_slack": settings.plan_slack,
        "gpu_mix": settings.gpu_mix,
    }
    if settings.optimal:  # the OPT columns are filled: other rows than without
        identity["optimal_time_limit_s"] = settings.optimal_time_limit_s
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
    pid = store.point_id(settings.seed, settings.num_regions, settings.topologies, identity,
                         source_hash())
    levels = store.level_values(settings.scenario_label, settings.bandwidth_scale,
                                settings.gpu_scale, settings.num_jobs, settings.extensions,
                                settings.start_rule, settings.gpu_mix)
    schedulers = {name: _digest(identity_of(name)) for name in settings.schedulers}
    return Point(settings, store.point_paths(settings.results_dir, store.partition(levels), pid),
                 store.chunk_ranges(settings.topologies, settings.chunk_size), identity, levels,
                 schedulers)


#: Scenarios whose GPU counts are drawn per topology from GPU_CHOICES (SPEC §8).
_DRAWN_GPUS = ("random", "aws10")


def _check_optimal_size(settings: SweepSettings) -> None:
    """``optimal=true`` only on small points (:func:`bacepipe.sweep.config.check_optimal_size`):
    sized from topology 0, GPUs from the largest possible draw where they are drawn."""
    batch = make_batch(settings, 0, 1)
    if settings.scenario in _DRAWN_GPUS:
        gpus = int(scale_gpus(np.asarray([max(GPU_CHOICES)]), settings.gpu_scale)[0])
    else:
        gpus = int(batch.gpus.max())
    check_optimal_size(batch.gpus.shape[1], batch.params_b.shape[1], gpus)


def _digest(identity: str) -> str:
    """A plug-in scheduler's identity as 16 hex digits ("" stays "": a built-in)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:16] if identity else ""


def _file_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise InputError("trace", f"cannot read {str(path)!r}: {err.strerror}") from None


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


def _complete(point: Point) -> tuple[set, dict[str, int]]:
    """Chunk files of the point already on disk (runs, and jobs with save_jobs)."""
    done, stale = store.complete_chunks(point.paths.runs, point.ranges, point.schedulers)
    if point.settings.save_jobs:
        done &= store.complete_chunks(point.paths.jobs, point.ranges, point.schedulers)[0]
    return done, stale


def _interrupted(point: Point) -> str:
    try:
        on_disk = str(len(_complete(point)[0]))
    except (InputError, OSError):
        on_disk = "?"
    total = len(point.ranges) * len(point.schedulers)
    return (f"{on_disk}/{total} chunks of point {point.paths.point_id} are complete on disk; "
            "run the same command again to resume")


def _say(text: str) -> None:
    print(f"bacepipe.sweep: {text}", file=sys.stderr, flush=True)


def _plan(point: Point) -> list[ChunkSpec]:
    """One spec per topology range that lacks some scheduler, naming only the missing ones;
    says on stderr why results already on disk are not used."""
    settings, paths = point.settings, point.paths
    done, stale = _complete(point)
    if not done:
        for old in store.other_code_points(paths):
            _say(f"point {old} was computed by other code (the sources changed); running "
                 f"these settings anew as point {paths.point_id}")
    for name, count in stale.items():
        _say(f"{name}: {count} chunks were computed by another version of its plug-in; "
             "running them again")
    specs = []
    for start, stop in point.ranges:
        missing = tuple(s for s in settings.schedulers if ((start, stop), s) not in done)
        if missing:
            specs.append(ChunkSpec(settings, start, stop, missing))
    return specs


def _run_locked(point: Point, tic: float, extra_manifest: dict | None) -> PointReport:
    """The body of :func:`run_point`, holding the point's lock."""
    from tqdm import tqdm

    settings, paths = point.settings, point.paths
    store.remove_stale_temporaries(paths)
    specs = _plan(point)
    if specs:
        # Compile (or load the cached kernels) here, once, before workers start: a cold cache
        # would otherwise be compiled by every worker. Topology 0 also surfaces a job that can
        # never be placed before any chunk is fanned out.
        # (Without OPT: CP-SAT compiles nothing, and its answer here would be thrown away.)
        run_chunk(ChunkSpec(dataclasses.replace(settings, optimal=False), 0, 1,
                            specs[0].schedulers))
    total = len(point.ranges) * len(settings.schedulers)
    todo = sum(len(spec.schedulers) for spec in specs)
    label = f"{settings.scenario_label} bw={settings.bandwidth_scale:g} " \
            f"gpu={settings.gpu_scale:g} jobs={settings.num_jobs}"
    with tqdm(total=total, initial=total - todo, unit="chunk", desc=label,
              disable=not _show_progress(settings), file=sys.stderr) as bar:
        for result in iter_results(specs, backend=settings.backend, workers=settings.workers,
                                   dask_address=settings.dask_address):
            for name, runs in result["runs"].items():
                file = store.chunk_name(result["start"], result["stop"], name)
                # Jobs first: a chunk counts as complete once its runs file exists.
                if result["jobs"] is not None:
                    store.write_table(paths.jobs / file, result["jobs"][name], store.JOB_SCHEMA,
                                      point.schedulers[name])
                store.write_table(paths.runs / file, runs, store.RUN_SCHEMA,
                                  point.schedulers[name])
                bar.update()
    summary = Summary(settings.schedulers)
    for start, stop in point.ranges:
        summary.add({name: store.read_chunk(paths.runs, start, stop, name,
                                            ["avg_jct_h", "total_cost"])
                     for name in settings.schedulers})
    wall = time.perf_counter() - tic
    store.write_json(paths.manifest, _manifest(point, todo, wall, extra_manifest))
    return PointReport(settings, paths, store.scan_runs(paths, point.ranges, settings.schedulers),
                       summary.frame(), total, todo, wall)


def _manifest(point: Point, chunks_run: int, wall: float, extra: dict | None) -> dict:
    s, paths = point.settings, point.paths
    return {
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
        "rows": store.count_rows(paths.runs, point.ranges, s.schedulers),
        "job_rows": (store.count_rows(paths.jobs, point.ranges, s.schedulers)
                     if s.save_jobs else None),
        "chunks": len(point.ranges) * len(s.schedulers),
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
    """Per-scheduler means of a point's runs, fed one topology range at a time, so memory stays
    flat however many topologies the point has. Ratios to ``bace_pipe`` pair the rows of one
    topology (each scheduler's rows of a range are in topology order)."""

    def __init__(self, schedulers):
        self.schedulers = tuple(schedulers)
        self.base = BASELINE if BASELINE in self.schedulers else None
        # rows: avg JCT, total cost, JCT ratio, cost ratio; columns: schedulers. Runs recorded
        # as unplaceable (NaN) are left out of both the sums and the counts.
        self.sums = np.zeros((4, len(self.schedulers)))
        self.counts = np.zeros((4, len(self.schedulers)), dtype=np.int64)

    def add(self, runs: dict) -> None:
        """Add one topology range: scheduler -> its columns ``avg_jct_h`` and ``total_cost``."""
        for i, name in enumerate(self.schedulers):
            jct = np.asarray(runs[name]["avg_jct_h"], dtype=np.float64)
            cost = np.asarray(runs[name]["total_cost"], dtype=np.float64)
            rows = [jct, cost]
            if self.base is not None:
                base = runs[self.base]
                rows += [jct / np.asarray(base["avg_jct_h"], dtype=np.float64),
                         cost / np.asarray(base["total_cost"], dtype=np.float64)]
            for k, values in enumerate(rows):
                finite = ~np.isnan(values)
                self.sums[k, i] += np.where(finite, values, 0.0).sum()
                self.counts[k, i] += finite.sum()

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
