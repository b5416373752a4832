"""Numba kernels of the event loop (SPEC §5, §6, §10a) and the batched entry point.

:func:`simulate_one` runs one topology under one scheduler; :func:`simulate_batch_kernel` runs T
topologies (``prange``) × S schedulers. The plain-Python twin is :mod:`bacepipe.sim.reference`.
"""

import types

import numpy as np
from numba import prange

from bacepipe.core.jit import kernel
from bacepipe.core.model import (
    C_ACT_BITS,
    C_ARRIVAL_S,
    C_BSTAR,
    C_E1,
    C_ITERS,
    C_MIN_GPUS,
    HW_POWER_KW,
    N_CONST,
    job_constants,
    placement_iter_time,
    price_at,
    t_comp,
    tou_energy_price,
)
from bacepipe.core.placement import place
from bacepipe.metrics import METRICS

STATUS_OK, STATUS_NEVER_PLACED, STATUS_TOO_FEW_GPUS = 0, 1, 2
N_METRICS = len(METRICS)

# Job states.
_FUTURE, _PENDING, _RUNNING, _DONE = 0, 1, 2, 3


@kernel
def _alpha(state, hops, reserved_gbps, link_total):
    """Eq. 11: reserved over nominal inter-region bandwidth, both directions, running jobs in
    index order (0 when there are no links)."""
    if link_total <= 0.0:
        return 0.0
    used = 0.0
    for j in range(state.shape[0]):
        if state[j] == _RUNNING:
            used += 2.0 * hops[j] * reserved_gbps[j]
    return used / link_total


@kernel
def _priorities(const, state, hops, reserved_gbps, link_total, out):
    """Eq. 9–12 over the pending jobs (others untouched)."""
    alpha = _alpha(state, hops, reserved_gbps, link_total)
    max_e1, max_b = 0.0, 0.0
    for j in range(state.shape[0]):
        if state[j] == _PENDING:
            max_e1 = max(max_e1, const[j, C_E1])
            max_b = max(max_b, const[j, C_BSTAR])
    for j in range(state.shape[0]):
        if state[j] == _PENDING:
            intensity = const[j, C_E1] / max_e1
            sensitivity = const[j, C_BSTAR] / max_b
            out[j] = (1.0 - alpha) * (1.0 - intensity) + alpha * (1.0 - sensitivity)


@kernel
def _next_candidate(const, state, tried, priority):
    """The first untried pending job in order: priority (high first), arrival, index."""
    best = -1
    for j in range(state.shape[0]):
        if state[j] != _PENDING or tried[j]:
            continue
        if best < 0 or priority[j] > priority[best] or (
                priority[j] == priority[best]
                and const[j, C_ARRIVAL_S] < const[best, C_ARRIVAL_S]):
            best = j
    return best


@kernel
def simulate_one(const, gpus, price, links, latency_s, profile, utc_offset_h, time_of_use,
                 power_kw, ordering, placement, allocator,
                 start_s, end_s, cost, alloc, path, plen, metrics):
    """Simulate one topology under one scheduler.

    Writes per-job ``start_s``, ``end_s``, ``cost`` (float64[J]), ``alloc`` (int64[J, R], GPUs per
    region index), ``path`` (int64[J, R], region indices in pipeline order, −1 padded), ``plen``
    (int64[J]) and ``metrics`` (float64[N_METRICS], see :data:`METRICS`).
    Returns (status, job): STATUS_OK, or STATUS_NEVER_PLACED with the first job that was stuck.
    """
    n_jobs, n_regions = const.shape[0], gpus.shape[0]
    free = gpus.copy()
    resid = links.copy()
    users = np.zeros((n_regions, n_regions), dtype=np.int64)
    price_now = np.empty(n_regions)
    state = np.zeros(n_jobs, dtype=np.int64)
    tried = np.zeros(n_jobs, dtype=np.bool_)
    priority = np.zeros(n_jobs)
    hops = np.zeros(n_jobs, dtype=np.int64)
    reserved = np.zeros(n_jobs)
    cand_path = np.empty(n_regions, dtype=np.int64)
    cand_alloc = np.zeros(n_regions, dtype=np.int64)
    scratch_path = np.empty(n_regions, dtype=np.int64)
    scratch_alloc = np.zeros(n_regions, dtype=np.int64)
    in_path = np.zeros(n_regions, dtype=np.bool_)
    by_price = np.empty(n_regions, dtype=np.int64)
    alloc[:, :] = 0
    path[:, :] = -1
    link_total = 0.0
    for u in range(n_regions):
        for v in range(n_regions):
            if u != v:
                link_total += links[u, v]

    t = np.inf
    for j in range(n_jobs):
        t = min(t, const[j, C_ARRIVAL_S])
    done = 0
    while done < n_jobs:
        for j in range(n_jobs):  # 1. release every job ending now
            if state[j] == _RUNNING and end_s[j] == t:
                state[j] = _DONE
                done += 1
                for p in range(plen[j]):
                    free[path[j, p]] += alloc[j, path[j, p]]
                for p in range(plen[j] - 1):
                    v, u = path[j, p], path[j, p + 1]
                    for a, b in ((v, u), (u, v)):
                        users[a, b] -= 1
                        resid[a, b] = links[a, b] if users[a, b] == 0 \
                            else resid[a, b] + reserved[j]
        for j in range(n_jobs):  # 2. arrivals join the queue
            if state[j] == _FUTURE and const[j, C_ARRIVAL_S] <= t:
                state[j] = _PENDING
        price_at(price, profile, utc_offset_h, time_of_use, t, price_now)
        while True:  # 3. start jobs in order until none fits
            if free.sum() == 0:  # no policy can place anything: skip trying every pending job
                break
            if ordering == 1:
                _priorities(const, state, hops, reserved, link_total, priority)
            tried[:] = False
            started = False
            while True:
                j = _next_candidate(const, state, tried, priority)
                if j < 0:
                    break
                tried[j] = True
                n_path, g = place(placement, allocator, const[j], free, resid, price_now,
                                  cand_path, cand_alloc, scratch_path, scratch_alloc, in_path,
                                  by_price)
                if g == 0 or g < const[j, C_MIN_GPUS]:
                    continue
                plen[j] = n_path
                weighted_price = 0.0
                for p in range(n_path):
                    r = cand_path[p]
                    path[j, p] = r
                    alloc[j, r] = cand_alloc[r]
                    free[r] -= cand_alloc[r]
                    weighted_price += cand_alloc[r] * price[r]
                execution = const[j, C_ITERS] * placement_iter_time(
                    const[j], path[j], n_path, alloc[j], links, latency_s)
                start_s[j] = t
                end_s[j] = t + execution
                hops[j] = n_path - 1
                reserved[j] = const[j, C_ACT_BITS] / t_comp(const[j], g) / 1e9
                for p in range(n_path - 1):
                    v, u = path[j, p], path[j, p + 1]
                    resid[v, u] -= reserved[j]
                    resid[u, v] -= reserved[j]
                    users[v, u] += 1
                    users[u, v] += 1
                if time_of_use:
                    energy_price = 0.0
                    for p in range(n_path):
                        r = path[j, p]
                        energy_price += alloc[j, r] * tou_energy_price(
                            price[r], profile[r], utc_offset_h[r], t, end_s[j])
                    cost[j] = power_kw * energy_price
                else:
                    cost[j] = execution / 3600.0 * weighted_price * power_kw
                state[j] = _RUNNING
                started = True
                break
            if not started:
                break
        t_next = np.inf
        for j in range(n_jobs):
            if state[j] == _FUTURE:
                t_next = min(t_next, const[j, C_ARRIVAL_S])
            elif state[j] == _RUNNING:
                t_next = min(t_next, end_s[j])
        if t_next == np.inf and done < n_jobs:
            for j in range(n_jobs):
                if state[j] == _PENDING:
                    return STATUS_NEVER_PLACED, j
        t = t_next

    jct, cost_sum, energy, makespan, wait, gpus_used, multi, gpu_seconds = \
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for j in range(n_jobs):
        n = 0
        for p in range(plen[j]):
            n += alloc[j, path[j, p]]
        execution = end_s[j] - start_s[j]
        jct += (end_s[j] - const[j, C_ARRIVAL_S]) / 3600.0
        cost_sum += cost[j]
        energy += execution / 3600.0 * n * power_kw
        makespan = max(makespan, end_s[j])
        wait += (start_s[j] - const[j, C_ARRIVAL_S]) / 3600.0
        gpus_used += n
        multi += 1.0 if plen[j] > 1 else 0.0
        gpu_seconds += n * execution
    metrics[0] = jct / n_jobs
    metrics[1] = cost_sum
    metrics[2] = energy
    metrics[3] = makespan / 3600.0
    metrics[4] = wait / n_jobs
    metrics[5] = gpus_used / n_jobs
    metrics[6] = multi / n_jobs
    metrics[7] = gpu_seconds / (gpus.sum() * makespan) if makespan > 0 else 0.0
    return STATUS_OK, -1


def _simulate_batch(hw, schedulers, memory_on, time_of_use, gpus, price, links, latency_s,
                          profile, utc_offset_h, params_b, layers, hidden, batch_size, samples,
                          epochs, arrival_h, out_metrics, out_status, out_job, out_const,
                          out_start, out_end, out_cost, out_alloc, out_path, out_plen):
    """T topologies (parallel) × S schedulers; every output has leading axes [T, S] ([T] for
    ``out_const``). ``schedulers`` is int64[S, 3] of (ordering, placement, allocator) codes."""
    for t in prange(gpus.shape[0]):
        bad = job_constants(hw, params_b[t], layers[t], hidden[t], batch_size[t], samples[t],
                            epochs[t], arrival_h[t], gpus[t].sum(), memory_on, out_const[t])
        for s in range(schedulers.shape[0]):
            if bad >= 0:
                out_status[t, s], out_job[t, s] = STATUS_TOO_FEW_GPUS, bad
            else:
                out_status[t, s], out_job[t, s] = simulate_one(
                    out_const[t], gpus[t], price[t], links[t], latency_s[t], profile[t],
                    utc_offset_h[t], time_of_use, hw[HW_POWER_KW], schedulers[s, 0],
                    schedulers[s, 1], schedulers[s, 2], out_start[t, s], out_end[t, s],
                    out_cost[t, s], out_alloc[t, s], out_path[t, s], out_plen[t, s],
                    out_metrics[t, s])


def _named(fn, name: str):
    """A copy of ``fn`` under another name, so each compiled variant has its own disk cache."""
    clone = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    clone.__qualname__ = name
    return clone


# One body, compiled twice: threads pay off across topologies, but waking them costs milliseconds,
# which would dominate a single run.
simulate_batch_kernel = kernel(parallel=True)(_named(_simulate_batch, "simulate_batch_parallel"))
simulate_batch_serial = kernel(_named(_simulate_batch, "simulate_batch_serial"))


def empty_outputs(n_topologies: int, n_schedulers: int, n_jobs: int, n_regions: int):
    """The output arrays of :func:`simulate_batch_kernel`, in its argument order."""
    ts, tsj = (n_topologies, n_schedulers), (n_topologies, n_schedulers, n_jobs)
    return (np.zeros(ts + (N_METRICS,)), np.zeros(ts, dtype=np.int64),
            np.full(ts, -1, dtype=np.int64), np.zeros((n_topologies, n_jobs, N_CONST)),
            np.zeros(tsj), np.zeros(tsj), np.zeros(tsj),
            np.zeros(tsj + (n_regions,), dtype=np.int64),
            np.full(tsj + (n_regions,), -1, dtype=np.int64), np.zeros(tsj, dtype=np.int64))
