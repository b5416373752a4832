"""Numba kernel of SPEC §15's lower bound on the avg JCT of any schedule: LB = max(LB_solo,
LB_area). Its plain-Python twin, with the argument why both parts are valid, is
:mod:`bacepipe.sim.bounds`; tests compare the two.
"""

import numpy as np

from bacepipe.core.jit import copy_into, kernel
from bacepipe.core.model import (
    C_ACT_BITS,
    C_ARRIVAL_S,
    C_INTRA_S,
    C_ITERS,
    C_KSTAR,
    C_MICRO,
    C_MIN_GPUS,
    C_OVERHEAD_S,
    C_WORK,
    hops_summed,
    one_region_iter_s,
)


@kernel
def fastest_hop_gbps(links, intra_gbps):
    """r_max = max(intra_region_gbps, max over u != v of min(B[u,v], B[v,u])), Gbit/s."""
    r_max = intra_gbps
    n_regions = links.shape[0]
    for u in range(n_regions):
        for v in range(n_regions):
            if u != v:
                r_max = max(r_max, min(links[u, v], links[v, u]))
    return r_max


@kernel
def solo_bounds_s(job, r_max, fast, k_min, k_max, prefix):
    """(ℓ, a) / I_j of SPEC §15 over k in k_min..k_max GPUs, s and GPU·s per iteration: the least
    iteration time and the least GPU-time per iteration of job ``job`` (its row of constants),
    every hop at ``r_max`` Gbit/s and no latency (inf when the range is empty); I_j times them
    are ℓ_j and a_j. ``fast`` is a scratch row of the same length. Unless ``prefix`` is empty,
    ``prefix[k]`` gets ℓ / I_j over k_min..k for each k in the range."""
    copy_into(fast, job)
    h = fast[C_ACT_BITS] / (r_max * 1e9)  # every hop at r_max, no latency
    fast[C_INTRA_S] = h
    best_t, best_area = np.inf, np.inf
    # Eq. 1 for k GPUs in one region, its hop sum grown one hop per k (the same repeated
    # additions as single_region_iter_time, in O(k_max) instead of O(k_max²))
    comm = hops_summed(h, k_min - 1)
    for k in range(k_min, k_max + 1):
        t = one_region_iter_s(fast, k, comm)
        best_t = min(best_t, t)
        best_area = min(best_area, k * t)
        if prefix.shape[0] > 0:
            prefix[k] = best_t
        comm += h
    return best_t, best_area


@kernel(inline=True)
def _sift_down(values, root, end):
    """Restore the max-heap of ``values[:end]`` below ``root``."""
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and values[child + 1] > values[child]:
            child += 1
        if values[root] >= values[child]:
            return
        values[root], values[child] = values[child], values[root]
        root = child


@kernel
def heap_sort(values):
    """Sort ``values`` ascending in place, in O(n log n) without allocating (numba's
    ``ndarray.sort`` needs reference counting, see :func:`bacepipe.core.jit.kernel`)."""
    n = values.shape[0]
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(values, root, n)
    for end in range(n - 1, 0, -1):
        values[0], values[end] = values[end], values[0]
        _sift_down(values, 0, end)


#: Columns of a row of :func:`lower_bound_h`'s memo: what a job's search reads, and (ℓ, a) / I_j.
N_SOLO_MEMO = 9


@kernel
def lower_bound_h(const, r_max, total_gpus, fast, areas, memo=None):
    """LB = max(LB_solo, LB_area) of SPEC §15, hours.

    Parameters
    ----------
    const : float64[J, N_CONST]  per-job constants of :func:`bacepipe.core.model.job_constants`.
    r_max : float                the fastest hop, Gbit/s (:func:`fastest_hop_gbps`).
    total_gpus : int             N, the cluster's GPUs.
    fast, areas : float64[N_CONST], float64[J]   scratch, overwritten (given by the caller: an
                                 allocating kernel counts references, ~3 % of a paper-setting
                                 simulation, docs/performance.md).
    memo : float64[J, N_SOLO_MEMO], optional
        NaN when empty: per job, what its search over k read (W, overhead, micro-batches,
        activation bits, r_max, m, K*) and the (ℓ, a) / I_j found; a job whose row reads the
        same (the next topology's, typically) skips the O(K*) search, bit for bit.
    """
    n_jobs = const.shape[0]
    solo = 0.0
    batch = True
    for j in range(n_jobs):
        job = const[j]
        k_min, k_max = int(job[C_MIN_GPUS]), int(job[C_KSTAR])
        if memo is not None:
            m = memo[j]
            if m[0] == job[C_WORK] and m[1] == job[C_OVERHEAD_S] and m[2] == job[C_MICRO] \
                    and m[3] == job[C_ACT_BITS] and m[4] == r_max and m[5] == k_min \
                    and m[6] == k_max:
                per_iter_t, per_iter_area = m[7], m[8]
            else:
                per_iter_t, per_iter_area = solo_bounds_s(job, r_max, fast, k_min, k_max,
                                                          fast[:0])
                m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8] = \
                    job[C_WORK], job[C_OVERHEAD_S], job[C_MICRO], job[C_ACT_BITS], r_max, \
                    k_min, k_max, per_iter_t, per_iter_area
        else:
            per_iter_t, per_iter_area = solo_bounds_s(job, r_max, fast, k_min, k_max, fast[:0])
        solo += job[C_ITERS] * per_iter_t
        areas[j] = job[C_ITERS] * per_iter_area
        batch = batch and job[C_ARRIVAL_S] == 0.0
    lb_solo = solo / n_jobs
    lb_area = 0.0
    if batch:
        prefix = 0.0
        heap_sort(areas)
        for a in areas:
            prefix += a
            lb_area += prefix / total_gpus
        lb_area /= n_jobs
    return max(lb_solo, lb_area) / 3600.0
