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
from bacepipe.headline import cell, gmean_ci, header
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
    summary : per-scheduler means and the geometric mean of the paired ratios to bace_pipe
        with its 95 % CI, as the report computes them (:class:`Summary`).
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

    Two runs of the same point take turns (:func:`bacepipe.sweep.store.point_lock`). However
    it ends, a run leaves no lock file and none of the folders it made empty: refused before its
    first chunk, it leaves the results directory as it found it.
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
        # would otherwise be compiled by every worker. A chunk of one topology runs the
        # serial kernels, a larger one the parallel: compile those the chunks use. Topology 0
        # also surfaces a job that can never be placed before any chunk is fanned out.
        # (Without OPT: CP-SAT compiles nothing, and its answer here would be thrown away.)
        for size in sorted({min(2, spec.stop - spec.start) for spec in specs}):
            run_chunk(ChunkSpec(dataclasses.replace(settings, optimal=False), 0, size,
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

#: The columns summed by :class:`Summary`, and the prefix of their ratio columns.
_SUMMED = {"avg_jct_h": "jct", "total_cost": "cost"}


class Summary:
    """Per-scheduler means of a point's runs and the headline of its paired ratios to
    ``bace_pipe``, fed one topology range at a time.

    The headline is the report's (:func:`bacepipe.headline.gmean_ci`, the function
    :func:`bacepipe.analysis.summarize` calls, with its resamples and seed): the geometric mean of
    the per-topology ratios value / bace_pipe's value with its 95 % bootstrap CI, so the same
    rows give the same numbers in both. The means are running sums (memory flat in topologies);
    the ratios themselves are kept, 8 bytes × topologies × schedulers × 2, since the bootstrap
    resamples them all. A ratio pairs the rows of one topology (each scheduler's rows of a range
    are in topology order, the order the report reads them in). Runs recorded as unplaceable
    (null in the files, NaN here) are left out of the means and the ratios.
    """

    def __init__(self, schedulers):
        self.schedulers = tuple(schedulers)
        self.base = BASELINE if BASELINE in self.schedulers else None
        # rows: avg JCT, total cost; columns: schedulers.
        self.sums = np.zeros((len(_SUMMED), len(self.schedulers)))
        self.counts = np.zeros((len(_SUMMED), len(self.schedulers)), dtype=np.int64)
        self.rows = np.zeros(len(self.schedulers), dtype=np.int64)
        self.ratios: dict[tuple[str, str], list[np.ndarray]] = {
            (q, name): [] for q in _SUMMED.values() for name in self.schedulers}

    def add(self, runs: dict) -> None:
        """Add one topology range: scheduler -> its columns ``avg_jct_h`` and ``total_cost``."""
        for i, name in enumerate(self.schedulers):
            for k, (column, q) in enumerate(_SUMMED.items()):
                values = np.asarray(runs[name][column], dtype=np.float64)
                finite = ~np.isnan(values)
                self.sums[k, i] += np.where(finite, values, 0.0).sum()
                self.counts[k, i] += finite.sum()
                if self.base is not None:
                    base = np.asarray(runs[self.base][column], dtype=np.float64)
                    with np.errstate(invalid="ignore", divide="ignore"):  # gmean_ci drops them
                        self.ratios[q, name].append(values / base)
            self.rows[i] += len(runs[name]["avg_jct_h"])

    def frame(self) -> pl.DataFrame:
        """Per scheduler, under the names of :func:`bacepipe.analysis.summarize`'s columns:
        ``n_topologies``; ``avg_jct_h_mean`` (h) and ``total_cost_mean`` ($), over the runs that
        finished; ``jct_ratio_gmean`` and ``cost_ratio_gmean`` with their ``_ci_low`` /
        ``_ci_high`` (null when bace_pipe was not simulated)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(self.counts > 0, self.sums / self.counts, np.nan)
        columns = {"scheduler": list(self.schedulers), "n_topologies": self.rows}
        for k, (column, q) in enumerate(_SUMMED.items()):
            heads = [gmean_ci(np.concatenate(self.ratios[q, name]) if self.base else [])
                     for name in self.schedulers]
            columns[f"{column}_mean"] = means[k]
            columns[f"{q}_ratio_gmean"] = [h.gmean for h in heads]
            columns[f"{q}_ratio_gmean_ci_low"] = [h.ci_low for h in heads]
            columns[f"{q}_ratio_gmean_ci_high"] = [h.ci_high for h in heads]
        frame = pl.DataFrame(columns, schema_overrides={"n_topologies": pl.Int64})
        return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def format_summary(summary: pl.DataFrame) -> str:
    """The summary as a fixed-width text table: per scheduler its topologies, mean avg JCT and
    total cost, each followed by its geometric mean × bace_pipe with the 95 % CI (as the report
    prints it: :func:`bacepipe.headline.cell`)."""
    ratio = header(BASELINE)
    head = ("scheduler", "topologies", "avg JCT h", ratio, "total cost $", ratio)

    def geo(r: dict, q: str) -> str:
        return cell(r[f"{q}_ratio_gmean"], r[f"{q}_ratio_gmean_ci_low"],
                    r[f"{q}_ratio_gmean_ci_high"])

    rows = [(r["scheduler"], str(r["n_topologies"]), cell(r["avg_jct_h_mean"]), geo(r, "jct"),
             cell(r["total_cost_mean"], digits=2), geo(r, "cost"))
            for r in summary.iter_rows(named=True)]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    return "\n".join([line(head), line(tuple("-" * w for w in widths)), *map(line, rows)])
