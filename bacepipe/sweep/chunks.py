"""The unit of work of a sweep: one chunk of topologies of one point, simulated under the
schedulers it still lacks in ONE call of the batched numba core.

:func:`run_chunk` is a pure function of its :class:`ChunkSpec`: it generates topologies
``start .. stop-1`` (each from (seed, topology) alone, SPEC §8), simulates them and returns the
result rows of each scheduler as columns (dict of numpy arrays). It writes nothing, so it can run
in-process, in a loky worker or on a dask worker and give the same bits; only the parent writes
files (one per scheduler).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.core import METRICS, STATUS_BAD_DECISION, STATUS_OK, BatchResult, simulate_batch
from bacepipe.model.batch import ScenarioBatch
from bacepipe.model.generate import generate_batch
from bacepipe.model.tables import DATASETS
from bacepipe.policies import load_plugins
from bacepipe.settings import COLUMNS, SweepSettings
from bacepipe.sim.run import raise_for_status
from bacepipe.sweep.verify import check_chunk

#: Columns of the runs table, in order: identity, SPEC §10 metrics (all float64), then the
#: settings declared as columns (:data:`bacepipe.settings.COLUMNS`: ``plan_slack``, SPEC §14's
#: setting of spt_plan, on every row of the point), then the yardsticks of SPEC §15, per
#: topology (the same on every scheduler's row): ``lower_bound_h`` (float64, the core's LB; null
#: when a job can never fit), ``opt_avg_jct_h`` (float64, OPT of
#: :func:`bacepipe.optimal.solve_batch`) and ``opt_proven`` (bool), both null unless
#: ``optimal=true`` (and ``opt_avg_jct_h`` null when CP-SAT found nothing in time).
RUN_COLUMNS = ("seed", "topology", "scheduler", *METRICS, *COLUMNS, "lower_bound_h",
               "opt_avg_jct_h", "opt_proven")
#: Columns of the per-job table (SPEC §10), in order. ``path_gpus`` and ``path_gpu_types`` are
#: the GPU count and the GPU type name (SPEC §16; "" for a region without a type) of each region
#: of ``path``, in the same order and with the same separator (``8>2``, ``A100>H100``).
JOB_COLUMNS = ("seed", "topology", "scheduler", "job", "name", "model", "dataset", "k_star",
               "gpus", "regions", "path", "path_gpus", "path_gpu_types", "wait_h",
               "execution_h", "jct_h", "cost")
#: Separator of the regions in the jobs table's ``path*`` columns (pipeline order).
PATH_SEPARATOR = ">"


class ChunkSpec(NamedTuple):
    """A chunk: topologies ``start .. stop-1`` of the point ``settings`` (validated once, passed
    unchanged; a file scenario is an absolute path that a remote dask worker must be able to
    read), under ``schedulers`` (those of the point this range still lacks, in output order)."""

    settings: SweepSettings
    start: int
    stop: int
    schedulers: tuple[str, ...]


def make_batch(s: SweepSettings, start: int, stop: int) -> ScenarioBatch:
    """Topologies ``start .. stop-1`` of a point as one batch, from its world settings: exactly
    what ``generate_scenario`` gives for each row, so any row can be replayed."""
    return generate_batch(topologies=np.arange(start, stop), **s.world())


def optimum(spec: ChunkSpec, batch: ScenarioBatch, result: BatchResult) -> dict[str, np.ndarray]:
    """SPEC §15's OPT of every topology of the chunk: ``opt_avg_jct_h`` float64[T] (h) and
    ``opt_proven`` bool[T] (:func:`bacepipe.optimal.solve_batch`, one CP-SAT solve each within
    ``optimal_time_limit_s``). A topology with a job that can never fit (its LB is NaN) has no
    schedule: NaN and False."""
    from bacepipe.optimal import solve_batch  # OR-Tools is loaded only for optimal=true

    t = batch.size
    out = {"opt_avg_jct_h": np.full(t, np.nan), "opt_proven": np.zeros(t, dtype=bool)}
    rows = np.flatnonzero(np.isfinite(result.lower_bound_h))
    if rows.size:
        got = solve_batch(batch, rows, spec.settings.optimal_time_limit_s)
        out["opt_avg_jct_h"][rows] = got["opt_avg_jct_h"]
        out["opt_proven"][rows] = got["opt_proven"]
    return out


def run_columns(spec: ChunkSpec, result: BatchResult, s: int,
                opt: dict | None = None) -> dict[str, np.ndarray]:
    """Scheduler ``s``'s rows, one per topology, in topology order; ``opt``: :func:`optimum`
    (None: the OPT columns are null)."""
    t = result.status.shape[0]
    out = {
        "seed": np.full(t, spec.settings.seed, dtype=np.int64),
        "topology": np.arange(spec.start, spec.stop, dtype=np.int64),
        "scheduler": np.full(t, spec.schedulers[s], dtype=object),
    }
    for i, name in enumerate(METRICS):
        out[name] = np.ascontiguousarray(result.metrics[:, s, i], dtype=np.float64)
    for name, value in spec.settings.columns().items():
        out[name] = np.full(t, value)
    out["lower_bound_h"] = np.ascontiguousarray(result.lower_bound_h, dtype=np.float64)
    if opt is None:
        out["opt_avg_jct_h"] = np.full(t, np.nan)
        out["opt_proven"] = np.full(t, None, dtype=object)
    else:
        out.update(opt)
    return out


def job_columns(spec: ChunkSpec, batch: ScenarioBatch, result: BatchResult, s: int) -> dict:
    """Scheduler ``s``'s rows, one per (topology, job), in that nesting order (SPEC §10 per-job
    table).

    Times follow :func:`bacepipe.sim.run.result_dict` exactly (seconds → hours at the end), so a
    replayed row matches to the bit.
    """
    t = result.status.shape[0]
    j = len(batch.job_names)
    arrival_s = batch.arrival_h * 3600.0
    start_s, end_s = result.start_s[:, s], result.end_s[:, s]
    names = np.asarray(batch.region_names, dtype=object)
    # Type name per (topology, region); index -1 (no type: the hardware's values) picks "".
    type_names = np.asarray([name for name, _ in batch.gpu_types] + [""], dtype=object)
    region_types = type_names[batch.gpu_type]
    paths, counts, types = (np.empty((t, j), dtype=object) for _ in range(3))
    for idx in np.ndindex(t, j):
        n = result.path_len[idx[0], s, idx[1]]
        on_path = result.path[idx[0], s, idx[1]][:n]
        paths[idx] = PATH_SEPARATOR.join(names[on_path])
        counts[idx] = PATH_SEPARATOR.join(map(str, result.path_gpus[idx[0], s, idx[1]][:n]))
        types[idx] = PATH_SEPARATOR.join(region_types[idx[0], on_path])
    dataset_names = np.asarray([d for d, _ in DATASETS] + [""], dtype=object)
    return {
        "seed": np.full(t * j, spec.settings.seed, dtype=np.int64),
        "topology": np.repeat(np.arange(spec.start, spec.stop, dtype=np.int64), j),
        "scheduler": np.full(t * j, spec.schedulers[s], dtype=object),
        "job": np.tile(np.arange(j, dtype=np.int64), t),
        "name": np.tile(np.asarray(batch.job_names, dtype=object), t),
        "model": np.tile(np.asarray(batch.job_models, dtype=object), t),
        "dataset": dataset_names[batch.dataset].reshape(-1),  # index -1 (a file's) picks ""
        "k_star": result.k_star.reshape(-1),
        "gpus": result.path_gpus[:, s].sum(axis=2).reshape(-1),
        "regions": result.path_len[:, s].reshape(-1),
        "path": paths.reshape(-1),
        "path_gpus": counts.reshape(-1),
        "path_gpu_types": types.reshape(-1),
        "wait_h": ((start_s - arrival_s) / 3600.0).reshape(-1),
        "execution_h": ((end_s - start_s) / 3600.0).reshape(-1),
        "jct_h": ((end_s - arrival_s) / 3600.0).reshape(-1),
        "cost": result.cost[:, s].reshape(-1).copy(),
    }


def run_chunk(spec: ChunkSpec) -> dict:
    """Simulate one chunk.

    Returns
    -------
    dict
        ``start``, ``stop`` (ints), ``runs`` (scheduler -> columns of :data:`RUN_COLUMNS`) and
        ``jobs`` (scheduler -> columns of :data:`JOB_COLUMNS`, or None unless ``save_jobs``).

    Raises
    ------
    InputError
        A job of some topology can never be placed (SPEC §5; unless ``unplaceable=record``),
        or a plug-in part placed one against SPEC §4, naming topology and scheduler.
    InvariantViolation
        With ``validate=true``: a schedule breaks SPEC §4 (:mod:`bacepipe.sweep.verify`).
    """
    s = spec.settings
    batch, rules = make_batch(s, spec.start, spec.stop), s.rules()
    # A worker is a fresh process: the plug-ins' schedulers must be registered there too
    # (idempotent where they already are).
    load_plugins(s.plugins)
    result = simulate_batch(batch, spec.schedulers, rules)
    stops = result.status
    if s.unplaceable == "record":
        # a part's decision against SPEC §4 is a bug of the plug-in, not a run to record
        stops = np.where(result.status == STATUS_BAD_DECISION, result.status, STATUS_OK)
    # The first failed run that stops the sweep, named by its topology's index in the point.
    raise_for_status(batch, rules, result._replace(status=stops),
                     "topology {topology}, {scheduler}: ", spec.start)
    failed = result.status != STATUS_OK
    result.metrics[failed] = np.nan
    for per_job in (result.start_s, result.end_s, result.cost):
        per_job[failed] = np.nan
    if s.validate:
        check_chunk(batch, result, spec.start)
    opt = optimum(spec, batch, result) if s.optimal else None
    names = range(len(spec.schedulers))
    return {
        "start": spec.start,
        "stop": spec.stop,
        "runs": {spec.schedulers[i]: run_columns(spec, result, i, opt) for i in names},
        "jobs": ({spec.schedulers[i]: job_columns(spec, batch, result, i) for i in names}
                 if s.save_jobs else None),
    }


def run_chunk_one_thread(spec: ChunkSpec) -> dict:
    """:func:`run_chunk` with numba's parallel loops on one thread: the dask task.

    Dask workers, unlike loky's, do not set NUMBA_NUM_THREADS=1, so each task would spread its
    prange over every core while the other workers do the same. The setting is per thread,
    hence set in the task itself.
    """
    import numba

    numba.set_num_threads(1)
    return run_chunk(spec)
