"""The unit of work of a sweep: one chunk of topologies of one point, simulated under every
scheduler in ONE call of the batched numba core.

:func:`run_chunk` is a pure function of its :class:`ChunkSpec`: it generates topologies
``start .. stop-1`` (each from (seed, topology) alone, SPEC §8), simulates them and returns the
result rows as columns (dict of numpy arrays). It writes nothing, so it can run in-process, in a
loky worker or on a dask worker and give the same bits; only the parent writes files.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.core import METRICS, STATUS_OK, BatchResult, simulate_batch
from bacepipe.model.batch import ScenarioBatch
from bacepipe.model.generate import generate_batch
from bacepipe.model.hardware import Hardware
from bacepipe.model.tables import DATASETS
from bacepipe.sim.run import raise_for_status
from bacepipe.sweep.verify import check_chunk

#: Columns of the runs table, in order: identity, then SPEC §10 metrics (all float64).
RUN_COLUMNS = ("seed", "topology", "scheduler", *METRICS)
#: Columns of the per-job table (SPEC §10), in order.
JOB_COLUMNS = ("seed", "topology", "scheduler", "job", "name", "model", "dataset", "k_star",
               "gpus", "regions", "path", "wait_h", "execution_h", "jct_h", "cost")
#: Separator of region names in the jobs table's ``path`` column (pipeline order).
PATH_SEPARATOR = ">"


class ChunkSpec(NamedTuple):
    """Everything a worker needs to simulate topologies ``start .. stop-1`` of one point.

    Attributes
    ----------
    scenario : built-in scenario name, or the absolute path of a scenario YAML file (a remote
        dask worker must be able to read it at that path).
    seed, start, stop : the sweep seed and the half-open topology range.
    bandwidth_scale, gpu_scale, num_jobs, num_regions : generation parameters (SPEC §8).
    hardware : SPEC §1 constants for every topology.
    extensions : SPEC §12 switches that are set, as keyword arguments of ``generate_batch``.
    schedulers : scheduler names, in output order.
    save_jobs : also return the per-job columns.
    record_unplaceable : a run with a job that can never be placed gets NaN (null on disk)
        metrics instead of stopping the sweep.
    validate : replay every finished schedule against SPEC §4 (:mod:`bacepipe.sweep.verify`).
    """

    scenario: str
    seed: int
    start: int
    stop: int
    bandwidth_scale: float
    gpu_scale: float
    num_jobs: int
    num_regions: int
    hardware: Hardware
    extensions: dict
    schedulers: tuple[str, ...]
    save_jobs: bool
    record_unplaceable: bool = False
    validate: bool = False


def make_batch(spec: ChunkSpec) -> ScenarioBatch:
    """The chunk's topologies as one batch: exactly what ``generate_scenario`` gives for each
    row, so any row can be replayed."""
    return generate_batch(
        spec.scenario, spec.seed, np.arange(spec.start, spec.stop),
        bandwidth_scale=spec.bandwidth_scale, gpu_scale=spec.gpu_scale, num_jobs=spec.num_jobs,
        num_regions=spec.num_regions, hardware=spec.hardware, **spec.extensions)


def check_status(batch: ScenarioBatch, result: BatchResult, start: int) -> None:
    """Raise the InputError of the first failed run, naming its global topology index."""
    bad = np.argwhere(result.status != STATUS_OK)
    if bad.size:
        # raise_for_status reports the same (first, row-major) run; we only fix the topology
        # index, which it knows within the chunk alone.
        raise_for_status(batch, result, where=f"topology {start + int(bad[0][0])}, "
                                              "{scheduler}: ")


def run_columns(spec: ChunkSpec, result: BatchResult) -> dict[str, np.ndarray]:
    """One row per (topology, scheduler), topology-major, schedulers in ``spec`` order."""
    t, s = result.status.shape
    out = {
        "seed": np.full(t * s, spec.seed, dtype=np.int64),
        "topology": np.repeat(np.arange(spec.start, spec.stop, dtype=np.int64), s),
        "scheduler": np.tile(np.asarray(spec.schedulers, dtype=object), t),
    }
    flat = result.metrics.reshape(t * s, len(METRICS))
    for i, name in enumerate(METRICS):
        out[name] = np.ascontiguousarray(flat[:, i], dtype=np.float64)
    return out


def job_columns(spec: ChunkSpec, batch: ScenarioBatch, result: BatchResult) -> dict:
    """One row per (topology, scheduler, job), in that nesting order (SPEC §10 per-job table).

    Times follow :func:`bacepipe.sim.run.result_dict` exactly (seconds → hours at the end), so a
    replayed row matches to the bit.
    """
    t, s = result.status.shape
    j = len(batch.job_names)
    shape = (t, s, j)
    arrival_s = np.broadcast_to((batch.arrival_h * 3600.0)[:, None, :], shape)
    names = np.asarray(batch.region_names, dtype=object)
    paths = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        n = result.path_len[idx]
        paths[idx] = PATH_SEPARATOR.join(names[result.path[idx][:n]])
    dataset_names = np.asarray([d for d, _ in DATASETS] + [""], dtype=object)
    dataset = dataset_names[batch.dataset]  # index -1 (given by a file) picks ""
    return {
        "seed": np.full(t * s * j, spec.seed, dtype=np.int64),
        "topology": np.repeat(np.arange(spec.start, spec.stop, dtype=np.int64), s * j),
        "scheduler": np.tile(np.repeat(np.asarray(spec.schedulers, dtype=object), j), t),
        "job": np.tile(np.arange(j, dtype=np.int64), t * s),
        "name": np.tile(np.asarray(batch.job_names, dtype=object), t * s),
        "model": np.tile(np.asarray(batch.job_models, dtype=object), t * s),
        "dataset": np.broadcast_to(dataset[:, None, :], shape).reshape(-1),
        "k_star": np.broadcast_to(result.k_star[:, None, :], shape).reshape(-1),
        "gpus": result.alloc.sum(axis=3).reshape(-1),
        "regions": result.path_len.reshape(-1),
        "path": paths.reshape(-1),
        "wait_h": ((result.start_s - arrival_s) / 3600.0).reshape(-1),
        "execution_h": ((result.end_s - result.start_s) / 3600.0).reshape(-1),
        "jct_h": ((result.end_s - arrival_s) / 3600.0).reshape(-1),
        "cost": result.cost.reshape(-1).copy(),
    }


def run_chunk(spec: ChunkSpec) -> dict:
    """Simulate one chunk.

    Returns
    -------
    dict
        ``start``, ``stop`` (ints), ``runs`` (columns of :data:`RUN_COLUMNS`) and ``jobs``
        (columns of :data:`JOB_COLUMNS`, or None unless ``spec.save_jobs``).

    Raises
    ------
    InputError
        A job of some topology can never be placed (SPEC §5), naming topology and scheduler.
    InvariantViolation
        With ``spec.validate``: a schedule breaks SPEC §4 (:mod:`bacepipe.sweep.verify`).
    """
    batch = make_batch(spec)
    result = simulate_batch(batch, spec.schedulers)
    if spec.record_unplaceable:
        failed = result.status != STATUS_OK
        result.metrics[failed] = np.nan
        for per_job in (result.start_s, result.end_s, result.cost):
            per_job[failed] = np.nan
    else:
        check_status(batch, result, spec.start)
    if spec.validate:
        check_chunk(batch, result, spec.start)
    return {
        "start": spec.start,
        "stop": spec.stop,
        "runs": run_columns(spec, result),
        "jobs": job_columns(spec, batch, result) if spec.save_jobs else None,
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
