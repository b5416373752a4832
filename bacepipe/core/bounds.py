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
    t_comp,
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
    """(ℓ, a) of SPEC §15 over k in k_min..k_max GPUs, s and GPU·s: the least execution time
    and the least GPU-time of job ``job`` (its row of constants), every hop at ``r_max`` Gbit/s
    and no latency (inf when the range is empty). ``fast`` is a scratch row of the same length.
    Unless ``prefix`` is empty, ``prefix[k]`` gets ℓ / I_j over k_min..k for each k in the
    range (I_j times it is the value a call with that k_max returns)."""
    copy_into(fast, job)
    h = fast[C_ACT_BITS] / (r_max * 1e9)  # every hop at r_max, no latency
    fast[C_INTRA_S] = h
    best_t, best_area = np.inf, np.inf
    # Eq. 1 for k GPUs in one region, its hop sum grown one hop per k (the same repeated
    # additions as single_region_iter_time, in O(k_max) instead of O(k_max²))
    comm = 0.0
    for _ in range(k_min - 1):
        comm += h
    for k in range(k_min, k_max + 1):
        tc = t_comp(fast, k)
        delta = max(tc, h) if k > 1 else tc
        t = 2.0 * (comm + k * tc + (fast[C_MICRO] - 1.0) * delta)
        best_t = min(best_t, t)
        best_area = min(best_area, k * t)
        if prefix.shape[0] > 0:
            prefix[k] = best_t
        comm += h
    return fast[C_ITERS] * best_t, fast[C_ITERS] * best_area


@kernel(allocates=True)
def lower_bound_h(const, links, intra_gbps, total_gpus):
    """LB = max(LB_solo, LB_area) of SPEC §15, hours.

    Parameters
    ----------
    const : float64[J, N_CONST]  per-job constants of :func:`bacepipe.core.model.job_constants`.
    links : float64[R, R]        nominal link bandwidth u→v, Gbit/s (scaled); 0 = no link.
    intra_gbps : float           the hardware's intra_region_gbps, Gbit/s.
    total_gpus : int             N, the cluster's GPUs.
    """
    r_max = fastest_hop_gbps(links, intra_gbps)
    n_jobs = const.shape[0]
    fast = np.empty(const.shape[1])
    areas = np.empty(n_jobs)
    solo = 0.0
    batch = True
    for j in range(n_jobs):
        time_s, areas[j] = solo_bounds_s(const[j], r_max, fast, int(const[j, C_MIN_GPUS]),
                                         int(const[j, C_KSTAR]), fast[:0])
        solo += time_s
        batch = batch and const[j, C_ARRIVAL_S] == 0.0
    lb_solo = solo / n_jobs
    lb_area = 0.0
    if batch:
        prefix = 0.0
        for a in np.sort(areas):
            prefix += a
            lb_area += prefix / total_gpus
        lb_area /= n_jobs
    return max(lb_solo, lb_area) / 3600.0
