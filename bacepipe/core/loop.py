"""Numba kernels of the event loop (SPEC §5, §6, §10a, §13) and the batched entry point.

:func:`simulate_one` runs one topology under one scheduler, calling its parts (orderings, start
rules, placements, allocators of :mod:`bacepipe.policies`) as first-class functions;
:func:`simulate_batch_kernel` runs T topologies (``prange``) × S schedulers. The plain-Python
twin is :mod:`bacepipe.sim.reference`.
"""

import types
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, prange

from bacepipe.core.bounds import fastest_hop_gbps, lower_bound_h
from bacepipe.core.dispatch import load as load_dispatch
from bacepipe.core.jit import copy_into, kernel
from bacepipe.core.model import (
    C_ACT_BITS,
    C_ARRIVAL_S,
    C_KSTAR,
    HW_INTRA_GBPS,
    HW_MFU,
    HW_POWER_KW,
    N_CONST,
    gpu_speed,
    job_constants,
)
from bacepipe.core.projection import (
    accepted,
    execution_s,
    mark_stale,
    placement_cost,
    release_job,
    stage_time_s,
    unit_prices,
)
from bacepipe.core.structs import (
    DONE,
    FUTURE,
    PENDING,
    RUNNING,
    Cluster,
    Decision,
    Run,
    make_work,
)
from bacepipe.metrics import METRICS

#: Direct calls to the built-in parts (generated from the registry, see bacepipe.core.dispatch).
builtin = load_dispatch()

STATUS_OK, STATUS_NEVER_PLACED, STATUS_TOO_FEW_GPUS, STATUS_BAD_DECISION = 0, 1, 2, 3
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
    alloc, path : int64[T, S, J, R]; plen : int64[T, S, J]
    lower_bound_h : float64[T]   SPEC §15's lower bound on any schedule's avg JCT, hours.
    """

    metrics: np.ndarray
    status: np.ndarray
    bad_job: np.ndarray
    const: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    cost: np.ndarray
    alloc: np.ndarray
    path: np.ndarray
    plen: np.ndarray
    lower_bound_h: np.ndarray


#: Columns of the scheduler codes: indices into the part tuples, whether the ordering's key is
#: static, whether every part is built in (a plug-in's decisions are checked, see _valid),
#: whether the start rule is the built-in greedy one, and whether a job it holds stays held
#: until the state or the prices change (``Part.static`` of a built-in start rule).
CODE_ORDERING, CODE_START_RULE, CODE_PLACEMENT, CODE_ALLOCATOR, CODE_STATIC, CODE_BUILTIN, \
    CODE_GREEDY, CODE_STABLE_HOLD = range(8)


class Scan(NamedTuple):
    """The event loop's own bookkeeping (SPEC §5), kept so that an event costs what the jobs
    pending and running at it cost, not what the jobs done or yet to arrive cost.

    keys : float64[J]     ordering keys (a static ordering's are given once per run).
    pending : int64[J]    the pending jobs in scan order (see :func:`_goes_before`).
    by_index : int64[J]   the running jobs in index order (Eq. 11 sums in that order).
    buffer : int64[J]     the jobs an event releases; a long queue's merge sort.
    arrivals : int64[J]   the jobs by arrival time, then index (per topology).
    held_at : int64[J]    the state version at which the start rule last held each job back.
    prices : float64[R]   the previous event's unit prices.
    """

    keys: np.ndarray
    pending: np.ndarray
    by_index: np.ndarray
    buffer: np.ndarray
    arrivals: np.ndarray
    held_at: np.ndarray
    prices: np.ndarray


@kernel(inline=True)
def _alpha(run, by_index, link_total):
    """Eq. 11: reserved over nominal inter-region bandwidth, both directions, running jobs in
    index order (0 when there are no links)."""
    if link_total <= 0.0:
        return 0.0
    used = 0.0
    plen, reserved = run.plen, run.reserved
    for i in range(run.n_running[0]):
        j = by_index[i]
        used += 2.0 * (plen[j] - 1) * reserved[j]
    return used / link_total


@kernel(inline=True)
def _goes_before(a, b, keys, jobs):
    """The scan's order: key (low first), then arrival, then index."""
    if keys[a] != keys[b]:
        return keys[a] < keys[b]
    if jobs[a, C_ARRIVAL_S] != jobs[b, C_ARRIVAL_S]:
        return jobs[a, C_ARRIVAL_S] < jobs[b, C_ARRIVAL_S]
    return a < b


@kernel(inline=True)
def _insert_by_index(jobs, n, j):
    """Insert job j into ``jobs[:n]``, kept in index order (``jobs[n]`` is free)."""
    p = n
    while p > 0 and jobs[p - 1] > j:
        jobs[p] = jobs[p - 1]
        p -= 1
    jobs[p] = j


@kernel(inline=True)
def _enqueue(queue, n, j, keys, jobs):
    """Insert job j into ``queue[:n]``, kept in scan order (``queue[n]`` is free)."""
    p = n
    while p > 0 and _goes_before(j, queue[p - 1], keys, jobs):
        queue[p] = queue[p - 1]
        p -= 1
    queue[p] = j


@kernel(inline=True)
def _sort(queue, n, keys, jobs, buffer):
    """Sort ``queue[:n]`` into scan order: by insertion when short (a queue is nearly sorted
    after the previous scan), else bottom-up merge sort through ``buffer``."""
    if n <= 32:
        for i in range(1, n):
            _enqueue(queue, i, queue[i], keys, jobs)
        return
    src, dst = queue, buffer
    width, in_buffer = 1, False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            a, b = lo, mid
            for k in range(lo, hi):
                if b < hi and (a == mid or _goes_before(src[b], src[a], keys, jobs)):
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
        src, dst = dst, src
        width *= 2
        in_buffer = not in_buffer
    if in_buffer:
        copy_into(queue[:n], buffer[:n])


@kernel(inline=True)
def _valid(run, job, cluster, decision, plen, g, seen):
    """Whether a part's decision keeps SPEC §4: distinct regions, 1..free GPUs each adding up to
    g, every hop wide enough for the bandwidth the placement reserves (Alg. 1 line 13)."""
    n_regions = cluster.free.shape[0]
    if plen < 1 or plen > n_regions:
        return False
    seen[:] = False
    placed = 0
    for p in range(plen):
        r = decision.path[p]
        if r < 0 or r >= n_regions or seen[r]:
            return False
        seen[r] = True
        n = decision.alloc[r]
        if n < 1 or n > cluster.free[r]:
            return False
        placed += n
    if placed != g:
        return False
    tc = stage_time_s(run, job, decision.path, plen, decision.alloc)
    for p in range(1, plen):
        v, u = decision.path[p - 1], decision.path[p]
        bandwidth = min(cluster.resid[v, u], cluster.resid[u, v])
        if not (bandwidth > 0.0 and job[C_ACT_BITS] / (bandwidth * 1e9) <= tc):
            return False
    return True


@kernel(inline=True)
def _ends_before(end_s, start_seq, a, b):
    """Whether running job a ends before b: end time, then start order."""
    return end_s[a] < end_s[b] or (end_s[a] == end_s[b] and start_seq[a] < start_seq[b])


@kernel(inline=True)
def _start(run, cluster, work, by_index, j, t, decision, plen, g, sequence, start_s, cost):
    """Start job j at t on ``decision``: record it, reserve its GPUs and bandwidth, and add it to
    the running jobs (by end time, latest first, and by index)."""
    job, path, alloc, free, resid, users = \
        run.jobs[j], run.path[j], run.alloc[j], cluster.free, cluster.resid, run.users
    run.plen[j] = plen
    for p in range(plen):
        r = decision.path[p]
        path[p] = r
        alloc[r] = decision.alloc[r]
        free[r] -= decision.alloc[r]
    execution = execution_s(run, job, path, plen, alloc)
    start_s[j] = t
    run.end_s[j] = t + execution
    run.start_seq[j] = sequence
    tc = stage_time_s(run, job, path, plen, alloc)
    reserved = job[C_ACT_BITS] / tc / 1e9
    run.reserved[j] = reserved
    for p in range(plen - 1):
        v, u = path[p], path[p + 1]
        resid[v, u] -= reserved
        resid[u, v] -= reserved
        users[v, u] += 1
        users[u, v] += 1
        mark_stale(work, v, u)
        mark_stale(work, u, v)
    cost[j] = placement_cost(run, path, plen, alloc, t, execution)
    run.state[j] = RUNNING
    running, n, end_s, start_seq = run.running, run.n_running[0], run.end_s, run.start_seq
    p = n
    while p > 0 and _ends_before(end_s, start_seq, running[p - 1], j):
        running[p] = running[p - 1]
        p -= 1
    running[p] = j
    _insert_by_index(by_index, n, j)
    run.n_running[0] = n + 1


@kernel(inline=True)
def _release(run, cluster, work, scan, t):
    """Release every running job that ends at t (SPEC §5 step 1), in index order (the order
    decides the sums of residual bandwidth); returns how many."""
    running, end_s, n = run.running, run.end_s, run.n_running[0]
    released, by_index = scan.buffer, scan.by_index
    k = 0
    while n > 0 and end_s[running[n - 1]] == t:
        n -= 1
        _insert_by_index(released, k, running[n])
        k += 1
    if k == 0:
        return 0
    state = run.state
    for i in range(k):
        state[released[i]] = DONE
        release_job(run, released[i], cluster.free, cluster.resid, run.users, work)
    kept, i = 0, 0  # both lists are in index order: drop the released in one pass
    for q in range(n + k):
        j = by_index[q]
        if i < k and released[i] == j:
            i += 1
        else:
            by_index[kept] = j
            kept += 1
    run.n_running[0] = n
    return k


@kernel
def simulate_one(run, gpus, code, parts, out, workspace):
    """Simulate one topology under one scheduler (SPEC §5, §13's scan).

    ``run`` (:class:`~bacepipe.policies.api.Run`) is filled in place: end times, paths,
    allocations; ``code`` is the scheduler's row of codes (``CODE_*``) into ``parts``, the tuples
    of every registered part per kind; ``out`` is (start_s, cost, metrics) of this run;
    ``workspace`` holds the arrays the run may overwrite (see :func:`_workspace`), its
    ``Scan.arrivals`` given. Returns (status, job): STATUS_OK, STATUS_NEVER_PLACED with the first
    job that was stuck, or STATUS_BAD_DECISION with the job a plug-in part placed against SPEC §4.
    """
    start_s, cost, metrics = out
    cluster, work, decision, scan = workspace
    keys, pending, arrivals, by_index = scan.keys, scan.pending, scan.arrivals, scan.by_index
    state, running, n_running, end_s = run.state, run.running, run.n_running, run.end_s
    free, scratch = cluster.free, work.scratch
    orderings, rules, placements, allocators = parts
    place, allocate = placements[code[CODE_PLACEMENT]], allocators[code[CODE_ALLOCATOR]]
    copy_into(free, gpus)
    copy_into(cluster.resid, run.links)
    for slot in range(work.least_job.shape[0]):
        work.least_job[slot] = -1  # the ℓ_j tables cached belong to the previous run's jobs
    work.n_stale[0] = -1  # the projected copy is of the previous run
    static_order = code[CODE_STATIC] != 0
    jobs = run.jobs
    n_jobs, n_regions = jobs.shape[0], gpus.shape[0]
    link_total = 0.0
    for u in range(n_regions):
        for v in range(n_regions):
            if u != v:
                link_total += run.links[u, v]
    if static_order:
        for j in range(n_jobs):
            pending[j] = j
        builtin.ordering(code[CODE_ORDERING], orderings, jobs, pending, n_jobs, 0.0, keys)

    # A stable-hold start rule holds a job again, without deciding, while nothing it reads
    # changed since it last held it: ``version`` counts starts, releases and price changes.
    stable_hold, held_at, version = code[CODE_STABLE_HOLD] != 0, scan.held_at, 0
    t = jobs[arrivals[0], C_ARRIVAL_S]
    done, arrived, n_pending, sequence = 0, 0, 0, 0
    while done < n_jobs:
        released = _release(run, cluster, work, scan, t)
        done += released
        if released > 0:
            version += 1
        while arrived < n_jobs and jobs[arrivals[arrived], C_ARRIVAL_S] <= t:
            j = arrivals[arrived]  # 2. arrivals join the queue
            arrived += 1
            state[j] = PENDING
            held_at[j] = -1
            if static_order:
                _enqueue(pending, n_pending, j, keys, jobs)
            else:  # keyed and sorted at the scan
                pending[n_pending] = j
            n_pending += 1
        if stable_hold:
            copy_into(scan.prices, cluster.price)
            unit_prices(run, t, cluster.price)
            for r in range(n_regions):
                if scan.prices[r] != cluster.price[r]:
                    version += 1
                    break
        else:
            unit_prices(run, t, cluster.price)
        while n_pending > 0:  # 3. scan in order; restart after every start, stop when none starts
            if free.sum() == 0:  # no policy can place anything
                break
            if not static_order:
                builtin.ordering(code[CODE_ORDERING], orderings, jobs, pending, n_pending,
                                 _alpha(run, by_index, link_total), keys)
                _sort(pending, n_pending, keys, jobs, scan.buffer)
            started = False
            for i in range(n_pending):
                j = pending[i]
                if held_at[j] == version:
                    continue
                if code[CODE_GREEDY] != 0:
                    # the default rule, inlined: a start rule's call passes the run's arrays by
                    # value (~0.4 µs a call), which would dominate a greedy simulation
                    plen, g = builtin.placement(code[CODE_PLACEMENT], placements, jobs[j],
                                                int(jobs[j, C_KSTAR]), cluster, scratch,
                                                allocate, decision)
                    plen, g = accepted(run, jobs[j], plen, g, decision)
                else:
                    plen, g = builtin.start_rule(code[CODE_START_RULE], rules, j, t, run, cluster,
                                                 work, place, allocate, decision)
                if g == 0:
                    if stable_hold:
                        held_at[j] = version
                    continue
                if code[CODE_BUILTIN] == 0 and not _valid(run, jobs[j], cluster, decision, plen,
                                                          g, scratch.in_path):
                    return STATUS_BAD_DECISION, j
                _start(run, cluster, work, by_index, j, t, decision, plen, g, sequence, start_s,
                       cost)
                n_pending -= 1
                for q in range(i, n_pending):
                    pending[q] = pending[q + 1]
                sequence += 1
                version += 1
                started = True
                break
            if not started:
                break
        t_next = jobs[arrivals[arrived], C_ARRIVAL_S] if arrived < n_jobs else np.inf
        if n_running[0] > 0:
            t_next = min(t_next, end_s[running[n_running[0] - 1]])
        if t_next == np.inf and done < n_jobs:
            stuck = pending[0]
            for i in range(1, n_pending):
                stuck = min(stuck, pending[i])
            return STATUS_NEVER_PLACED, stuck
        t = t_next
    _metrics(run, gpus, start_s, cost, metrics)
    return STATUS_OK, -1


@kernel(allocates=True)
def _workspace(n_regions, n_jobs, max_kstar):
    """The arrays a run overwrites (the cluster's state, scratch, decisions, the scan's
    bookkeeping) and the run's own state, allocated once per worker and reused by every
    topology and scheduler it simulates."""
    cluster = Cluster(np.empty(n_regions, np.int64), np.empty((n_regions, n_regions)),
                      np.empty(n_regions), np.empty(n_regions))
    decision = Decision(np.empty(n_regions, np.int64), np.zeros(n_regions, np.int64))
    scan = Scan(np.zeros(n_jobs), np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
                np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
                np.empty(n_jobs, np.int64), np.empty(n_regions))
    state = (np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64), np.empty(n_jobs),
             np.empty(n_jobs, np.int64), np.zeros(1, np.int64),
             np.empty((n_regions, n_regions), np.int64))
    return (cluster, make_work(n_regions, n_jobs, max_kstar), decision, scan), state


@kernel(allocates=True)
def reference_type(gpus, tflops, mem_gb):
    """(TFLOP/s, memory GB) of the fastest type on a region with GPUs; the largest memory among
    equally fast ones (SPEC §16)."""
    best = -1
    for r in range(gpus.shape[0]):
        if gpus[r] > 0 and (best < 0 or tflops[r] > tflops[best]
                            or (tflops[r] == tflops[best] and mem_gb[r] > mem_gb[best])):
            best = r
    return np.array([tflops[best], mem_gb[best]])


@kernel(inline=True)
def _metrics(run, gpus, start_s, cost, metrics):
    """SPEC §10 run metrics, in :data:`METRICS` order."""
    jobs, plen, path, alloc, end_s, power_kw = \
        run.jobs, run.plen, run.path, run.alloc, run.end_s, run.gpu_power_kw
    n_jobs = jobs.shape[0]
    jct, cost_sum, energy, makespan, wait, gpus_used, multi, gpu_seconds = \
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for j in range(n_jobs):
        n = 0
        power = 0.0
        for p in range(plen[j]):
            n += alloc[j, path[j, p]]
            power += alloc[j, path[j, p]] * power_kw[path[j, p]]
        execution = end_s[j] - start_s[j]
        jct += (end_s[j] - jobs[j, C_ARRIVAL_S]) / 3600.0
        cost_sum += cost[j]
        if run.hetero:  # Σ_r n_r · power_r (SPEC §16)
            energy += execution / 3600.0 * power
        else:
            energy += execution / 3600.0 * n * run.power_kw
        makespan = max(makespan, end_s[j])
        wait += (start_s[j] - jobs[j, C_ARRIVAL_S]) / 3600.0
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


@kernel(allocates=True)
def _simulate_share(inputs, outputs, codes, parts, first, step):
    """Topologies ``first``, ``first + step``, ... × every scheduler, with one workspace."""
    hw = inputs.hardware
    n_topologies, n_regions = inputs.gpus.shape
    n_jobs = inputs.params_b.shape[1]
    workspace, (state, start_seq, reserved, running, n_running, users) = \
        _workspace(n_regions, n_jobs, inputs.layers.max())  # K* <= layers
    speed, scan = workspace[0].speed, workspace[3]
    for t in range(first, n_topologies, step):
        const = outputs.const[t]
        for r in range(n_regions):
            speed[r] = gpu_speed(inputs.gpu_tflops[t, r], hw[HW_MFU])
        bad = job_constants(hw, reference_type(inputs.gpus[t], inputs.gpu_tflops[t],
                                               inputs.gpu_mem_gb[t]),
                            inputs.params_b[t], inputs.layers[t], inputs.hidden[t],
                            inputs.batch_size[t], inputs.samples[t], inputs.epochs[t],
                            inputs.arrival_h[t], inputs.gpus[t].sum(), inputs.memory_on, const)
        r_max = fastest_hop_gbps(inputs.links[t], hw[HW_INTRA_GBPS])
        if bad < 0:
            outputs.lower_bound_h[t] = lower_bound_h(const, inputs.links[t], hw[HW_INTRA_GBPS],
                                                     inputs.gpus[t].sum())
        for j in range(n_jobs):
            scan.arrivals[j] = j
        _sort(scan.arrivals, n_jobs, const[:, C_ARRIVAL_S], const, scan.buffer)
        for s in range(codes.shape[0]):
            if bad >= 0:
                outputs.status[t, s], outputs.bad_job[t, s] = STATUS_TOO_FEW_GPUS, bad
                continue
            state[:] = FUTURE
            start_seq[:] = 0
            reserved[:] = 0.0
            n_running[0] = 0
            users[:, :] = 0
            run = Run(const, state, outputs.end_s[t, s], start_seq, outputs.path[t, s],
                      outputs.alloc[t, s], outputs.plen[t, s], reserved, running, n_running,
                      users, inputs.links[t], inputs.latency_s[t], inputs.price[t],
                      inputs.profile[t], inputs.utc_offset_h[t], inputs.time_of_use,
                      hw[HW_POWER_KW], inputs.plan_slack, r_max, speed, inputs.gpu_power_kw[t],
                      inputs.gpu_mem_gb[t], inputs.hetero, inputs.memory_on)
            outputs.status[t, s], outputs.bad_job[t, s] = simulate_one(
                run, inputs.gpus[t], codes[s], parts,
                (outputs.start_s[t, s], outputs.cost[t, s], outputs.metrics[t, s]), workspace)


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


def _named(fn, name: str):
    """A copy of ``fn`` under another name, so each compiled variant has its own disk cache."""
    clone = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    clone.__qualname__ = name
    return clone


# One body, compiled twice: threads pay off across topologies, but waking them costs milliseconds,
# which would dominate a single run.
simulate_batch_kernel = kernel(parallel=True, allocates=True)(
    _named(_simulate_batch, "simulate_batch_parallel"))
simulate_batch_serial = kernel(allocates=True)(_named(_simulate_batch, "simulate_batch_serial"))


def empty_outputs(n_topologies: int, n_schedulers: int, n_jobs: int,
                  n_regions: int) -> BatchOutputs:
    """The output arrays of :func:`simulate_batch_kernel`."""
    ts, tsj = (n_topologies, n_schedulers), (n_topologies, n_schedulers, n_jobs)
    return BatchOutputs(
        np.zeros(ts + (N_METRICS,)), np.zeros(ts, dtype=np.int64), np.full(ts, -1, dtype=np.int64),
        np.zeros((n_topologies, n_jobs, N_CONST)), np.zeros(tsj), np.zeros(tsj), np.zeros(tsj),
        np.zeros(tsj + (n_regions,), dtype=np.int64),
        np.full(tsj + (n_regions,), -1, dtype=np.int64), np.zeros(tsj, dtype=np.int64),
        np.full(n_topologies, np.nan))
