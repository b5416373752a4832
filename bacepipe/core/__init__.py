"""The numba core: :func:`simulate_batch` runs many topologies × schedulers in one call.

Kernels live in :mod:`~bacepipe.core.model` (job model), :mod:`~bacepipe.core.placement`
(policies, allocators) and :mod:`~bacepipe.core.loop` (event loop); this wrapper validates and
converts. The readable twin of every kernel is :mod:`bacepipe.sim.reference`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bacepipe.core.loop import (
    METRICS,
    STATUS_NEVER_PLACED,
    STATUS_OK,
    STATUS_TOO_FEW_GPUS,
    empty_outputs,
    simulate_batch_kernel,
    simulate_batch_serial,
)
from bacepipe.core.model import C_KSTAR, C_MIN_GPUS
from bacepipe.model.batch import ScenarioBatch
from bacepipe.policies import check_schedulers, scheduler_codes

__all__ = ["METRICS", "STATUS_NEVER_PLACED", "STATUS_OK", "STATUS_TOO_FEW_GPUS", "BatchResult",
           "simulate_batch"]


class BatchResult(NamedTuple):
    """Results of T topologies × S schedulers with J jobs and R regions.

    metrics : float64[T, S, len(METRICS)]  SPEC §10 run metrics, in :data:`METRICS` order.
    status : int64[T, S]       STATUS_OK, or why the run could not finish.
    bad_job : int64[T, S]      the job a non-OK status names (−1 when OK).
    k_star : int64[T, J]       optimal GPU count (Eq. 13).
    min_gpus : int64[T, J]     minimum GPU count (1 unless the memory model is on).
    start_s, end_s, cost : float64[T, S, J]  seconds from t = 0, and $.
    alloc : int64[T, S, J, R]  GPUs per region index.
    path : int64[T, S, J, R]   region indices in pipeline order, −1 padded.
    path_len : int64[T, S, J]
    schedulers : tuple[str, ...]
    """

    metrics: np.ndarray
    status: np.ndarray
    bad_job: np.ndarray
    k_star: np.ndarray
    min_gpus: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    cost: np.ndarray
    alloc: np.ndarray
    path: np.ndarray
    path_len: np.ndarray
    schedulers: tuple[str, ...]


def simulate_batch(batch: ScenarioBatch, schedulers) -> BatchResult:
    """Simulate every topology of ``batch`` under every scheduler (parallel over topologies)."""
    names = check_schedulers(schedulers, "schedulers")
    t, r = batch.gpus.shape
    j = batch.params_b.shape[1]
    out = empty_outputs(t, len(names), j, r)
    c = np.ascontiguousarray
    run = simulate_batch_kernel if t > 1 else simulate_batch_serial
    run(
        batch.hardware.as_array(), scheduler_codes(names), batch.memory_on, batch.time_of_use,
        c(batch.gpus), c(batch.price), c(batch.links_gbps), c(batch.latency_ms) / 1000.0,
        c(batch.price_profile), c(batch.utc_offset_h), c(batch.params_b), c(batch.layers),
        c(batch.hidden), c(batch.batch_size), c(batch.dataset_samples), c(batch.epochs),
        c(batch.arrival_h), *out)
    metrics, status, bad_job, const, start, end, cost, alloc, path, plen = out
    return BatchResult(metrics, status, bad_job, const[:, :, C_KSTAR].astype(np.int64),
                       const[:, :, C_MIN_GPUS].astype(np.int64), start, end, cost, alloc, path,
                       plen, names)
