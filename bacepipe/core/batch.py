"""The batched entry point of the core: T topologies (``prange``) × S schedulers, each run by
:func:`bacepipe.core.loop.simulate_topology` in a workspace allocated once per worker, and the run
metrics of SPEC §10."""

from typing import NamedTuple

import numpy as np
from numba import get_num_threads, prange

from bacepipe.core.bounds import N_SOLO_MEMO, fastest_hop_gbps, lower_bound_h
from bacepipe.core.jit import kernel, renamed
from bacepipe.core.loop import (
    STATUS_TOO_FEW_GPUS,
    Scan,
    _sort,
    find_lanes,
    lane_table_size,
    simulate_topology,
)
from bacepipe.core.model import (
    C_ARRIVAL_S,
    HW_INTRA_GBPS,
    HW_MFU,
    N_CONST,
    N_KSTAR_MEMO,
    fill_hop_sums,
    gpu_speed,
    job_constants,
)
from bacepipe.core.structs import (
    HOP_SUM_ROWS,
    MEMO_MIN_JOBS,
    Cluster,
    Decision,
    make_work,
)
from bacepipe.metrics import METRICS

N_METRICS = len(METRICS)


class BatchInputs(NamedTuple):
    """T topologies of R regions and J jobs, as the batched kernel reads them.

    hardware : float64[9]  (:data:`bacepipe.model.hardware.HARDWARE_FIELDS` order)
    memory_on, time_of_use : bool   SPEC §12 switches.
    plan_slack : float     SPEC §14's ε.
    hetero : bool          some region names a GPU type (SPEC §16).
    gpus : int64[T, R]; price, utc_offset_h : float64[T, R]; profile : float64[T, R, 24]
    links, latency_s : float64[T, R, R]   Gbit/s, one-way s.
    params_b, epochs, arrival_h : float64[T, J]; layers, hidden, batch_size, samples : int64[T, J]
    gpu_tflops, gpu_mem_gb, gpu_power_kw : float64[T, R]   each region's GPU type (SPEC §16).
    """

    hardware: np.ndarray
    memory_on: bool
    time_of_use: bool
    plan_slack: float
    hetero: bool
    gpus: np.ndarray
    price: np.ndarray
    links: np.ndarray
    latency_s: np.ndarray
    profile: np.ndarray
    utc_offset_h: np.ndarray
    params_b: np.ndarray
    layers: np.ndarray
    hidden: np.ndarray
    batch_size: np.ndarray
    samples: np.ndarray
    epochs: np.ndarray
    arrival_h: np.ndarray
    gpu_tflops: np.ndarray
    gpu_mem_gb: np.ndarray
    gpu_power_kw: np.ndarray


class BatchOutputs(NamedTuple):
    """What the batched kernel writes; leading axes [T, S] ([T] for ``const``).

    metrics : float64[T, S, N_METRICS]; status, bad_job : int64[T, S]
    const : float64[T, J, N_CONST]; start_s, end_s, cost : float64[T, S, J]
    path, path_gpus : int64[T, S, J, W] (:attr:`Run.path`, W = :func:`path_width`);
    plen : int64[T, S, J]
    lower_bound_h : float64[T]   SPEC §15's lower bound on any schedule's avg JCT, hours.
    """

    metrics: np.ndarray
    status: np.ndarray
    bad_job: np.ndarray
    const: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    cost: np.ndarray
    path: np.ndarray
    path_gpus: np.ndarray
    plen: np.ndarray
    lower_bound_h: np.ndarray


@kernel(allocates=True)
def _workspace(n_regions, n_jobs, max_kstar):
    """The arrays a run overwrites (the cluster's state, scratch, decisions, the scan's
    bookkeeping), the run's own state and the memos of the per-topology searches (NaN: empty),
    allocated once per worker and reused by every topology and scheduler it simulates."""
    cluster = Cluster(np.empty(n_regions, np.int64), np.empty((n_regions, n_regions)),
                      np.empty(n_regions), np.empty(n_regions))
    decision = Decision(np.empty(n_regions, np.int64), np.zeros(n_regions, np.int64))
    scan = Scan(np.zeros(n_jobs), np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
                np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
                np.empty(n_jobs, np.int64), np.empty(n_regions), np.empty(n_jobs, np.int64),
                np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
                np.empty(lane_table_size(n_jobs), np.int64))
    state = (np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64), np.empty(n_jobs),
             np.empty(n_jobs, np.int64), np.zeros(1, np.int64),
             np.empty((n_regions, n_regions), np.int64))
    memos = (np.full((n_jobs, N_KSTAR_MEMO), np.nan), np.full((n_jobs, N_SOLO_MEMO), np.nan),
             np.full((HOP_SUM_ROWS, max_kstar + 1), np.nan))
    return (cluster, make_work(n_regions, n_jobs, max_kstar), decision, scan), state, memos


@kernel
def reference_type(gpus, tflops, mem_gb):
    """(TFLOP/s, memory GB) of the fastest type on a region with GPUs; the largest memory among
    equally fast ones (SPEC §16)."""
    best = -1
    for r in range(gpus.shape[0]):
        if gpus[r] > 0 and (best < 0 or tflops[r] > tflops[best]
                            or (tflops[r] == tflops[best] and mem_gb[r] > mem_gb[best])):
            best = r
    return tflops[best], mem_gb[best]


@kernel(allocates=True)
def _simulate_share(inputs, outputs, codes, parts, first, step):
    """Topologies ``first``, ``first + step``, ... × every scheduler, with one workspace."""
    n_regions, n_jobs = inputs.gpus.shape[1], inputs.params_b.shape[1]
    workspace, state, memos = _workspace(n_regions, n_jobs, inputs.layers.max())  # K* <= layers
    _simulate_topologies(inputs, outputs, codes, parts, first, step, workspace, state, memos)


# Apart from _simulate_share, which counts references: the views made per topology here would
# cost two counts each (~2 % of a paper-setting simulation, docs/performance.md).
@kernel
def _simulate_topologies(inputs, outputs, codes, parts, first, step, workspace, state, memos):
    """The topologies of :func:`_simulate_share` in the workspace it made."""
    hw = inputs.hardware
    n_topologies, n_regions = inputs.gpus.shape
    n_jobs = inputs.params_b.shape[1]
    kstar_memo, solo_memo, hop_sums = memos
    speed, scan = workspace[0].speed, workspace[3]
    for t in range(first, n_topologies, step):
        const = outputs.const[t]
        for r in range(n_regions):
            speed[r] = gpu_speed(inputs.gpu_tflops[t, r], hw[HW_MFU])
        total_gpus = inputs.gpus[t].sum()
        bad = job_constants(hw, reference_type(inputs.gpus[t], inputs.gpu_tflops[t],
                                               inputs.gpu_mem_gb[t]),
                            inputs.params_b[t], inputs.layers[t], inputs.hidden[t],
                            inputs.batch_size[t], inputs.samples[t], inputs.epochs[t],
                            inputs.arrival_h[t], total_gpus, inputs.memory_on, const,
                            kstar_memo)
        r_max = fastest_hop_gbps(inputs.links[t], hw[HW_INTRA_GBPS])
        if bad < 0:
            outputs.lower_bound_h[t] = lower_bound_h(const, r_max, total_gpus, workspace[1].row,
                                                     scan.keys, solo_memo)
            for j in range(n_jobs):
                scan.arrivals[j] = j
            _sort(scan.arrivals, n_jobs, const[:, C_ARRIVAL_S], const, scan.buffer)
            fill_hop_sums(hop_sums, const)
            if n_jobs >= MEMO_MIN_JOBS:  # lanes are read only where offers are memoized
                find_lanes(const, scan.lane, scan.lane_table)
            simulate_topology(inputs, outputs, t, r_max, codes, parts, workspace, state,
                              hop_sums)
        else:
            for s in range(codes.shape[0]):
                outputs.status[t, s], outputs.bad_job[t, s] = STATUS_TOO_FEW_GPUS, bad


def _simulate_batch(inputs, outputs, codes, n_shares, orderings, start_rules, placements,
                    allocators):
    """T topologies (parallel) × S schedulers. ``codes`` is int64[S, 8] (``CODE_*`` columns);
    the part tuples hold every registered part of each kind, as compiled kernels. Topologies go
    to ``n_shares`` shares (interleaved, for balance: a few per thread, :func:`shares`), each
    simulated with one workspace."""
    for w in prange(n_shares):
        # the tuple is made here: a parfor takes no tuple of functions from outside
        _simulate_share(inputs, outputs, codes,
                        (orderings, start_rules, placements, allocators), w, n_shares)


def shares(n_topologies: int) -> int:
    """How many shares :func:`_simulate_batch` splits T topologies into: four per thread. (Given
    by the caller: a kernel that asks numba for its thread count cannot be cached.)"""
    return max(1, min(n_topologies, 4 * get_num_threads()))


# One body, compiled twice: threads pay off across topologies, but waking them costs milliseconds,
# which would dominate a single run.
simulate_batch_kernel = kernel(parallel=True, allocates=True)(
    renamed(_simulate_batch, "simulate_batch_parallel"))
simulate_batch_serial = kernel(allocates=True)(
    renamed(_simulate_batch, "simulate_batch_serial"))


def path_width(n_regions: int, layers: np.ndarray) -> int:
    """Path positions a run keeps per job: a placement holds at most K*_j ≤ layers_j GPUs
    (SPEC §2, §15; the loop rejects a part's decision with more), at least one per region."""
    return max(1, min(n_regions, int(layers.max(initial=1))))


def empty_outputs(n_topologies: int, n_schedulers: int, n_jobs: int,
                  width: int) -> BatchOutputs:
    """The output arrays of :func:`simulate_batch_kernel`, ``width`` path positions per job."""
    ts, tsj = (n_topologies, n_schedulers), (n_topologies, n_schedulers, n_jobs)
    return BatchOutputs(
        np.zeros(ts + (N_METRICS,)), np.zeros(ts, dtype=np.int64), np.full(ts, -1, dtype=np.int64),
        np.zeros((n_topologies, n_jobs, N_CONST)), np.zeros(tsj), np.zeros(tsj), np.zeros(tsj),
        np.full(tsj + (width,), -1, dtype=np.int64), np.zeros(tsj + (width,), dtype=np.int64),
        np.zeros(tsj, dtype=np.int64), np.full(n_topologies, np.nan))
