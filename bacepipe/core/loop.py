"""Numba kernels of the event loop (SPEC §5, §6, §10a, §13).

:func:`simulate_topology` runs one topology under each scheduler, calling their parts (orderings,
start rules, placements, allocators of :mod:`bacepipe.policies`) as first-class functions; the
batched entry point around it is :mod:`bacepipe.core.batch`. The plain-Python twin is
:mod:`bacepipe.sim.reference`.
"""

from typing import NamedTuple

import numpy as np

from bacepipe.core.dispatch import load as load_dispatch
from bacepipe.core.jit import copy_into, kernel
from bacepipe.core.model import C_ACT_BITS, C_ARRIVAL_S, C_KSTAR, HW_POWER_KW
from bacepipe.core.placement import order_by_price
from bacepipe.core.projection import (
    accepted,
    certified_hold,
    execution_s,
    keep_offer,
    lane_hold,
    lane_hold_of,
    lane_hold_reaches,
    mark_stale,
    placement_cost,
    recall_offer,
    release_job,
    stage_time_s,
    unit_prices,
)
from bacepipe.core.structs import DONE, FUTURE, MEMO_MIN_JOBS, PENDING, RUNNING, Run

#: Direct calls to the built-in parts (generated from the registry, see bacepipe.core.dispatch).
builtin = load_dispatch()

STATUS_OK, STATUS_NEVER_PLACED, STATUS_TOO_FEW_GPUS, STATUS_BAD_DECISION = 0, 1, 2, 3

#: Columns of the scheduler codes: indices into the part tuples, whether the ordering's key is
#: static, whether every part is built in (a plug-in's decisions are checked, see _valid),
#: whether the start rule is the built-in greedy one, and whether a job it holds stays held
#: until the state or the prices change (``Part.static`` of a built-in start rule).
CODE_ORDERING, CODE_START_RULE, CODE_PLACEMENT, CODE_ALLOCATOR, CODE_STATIC, CODE_BUILTIN, \
    CODE_GREEDY, CODE_STABLE_HOLD = range(8)


class Scan(NamedTuple):
    """The event loop's own bookkeeping (SPEC §5), kept so that an event costs what the jobs
    pending and running at it cost, not what the jobs done or yet to arrive cost.

    keys : float64[J]     ordering keys (a static ordering's are given once per run); before
                          a topology's runs, the scratch of its lower bound.
    pending : int64[J]    the pending jobs in scan order (see :func:`_goes_before`).
    by_index : int64[J]   the running jobs in index order (Eq. 11 sums in that order).
    buffer : int64[J]     the jobs an event releases; a long queue's merge sort.
    arrivals : int64[J]   the jobs by arrival time, then index (per topology).
    held_at : int64[J]    the state version at which the start rule last held each job back.
    prices : float64[R]   the previous event's unit prices (watched under time-of-use only).
    lane : int64[J]       each job's lane (:func:`find_lanes`, per topology): the first job, by
                          index, of the jobs whose constants equal its own but for the arrival.
    lane_tail : int64[J]  per lane, its last pending job (−1: none pending).
    next_in_lane : int64[J]   the pending job after each in its lane (−1: the last).
    lane_table : int64[2^k >= 2J]   :func:`find_lanes`' hash table.
    """

    keys: np.ndarray
    pending: np.ndarray
    by_index: np.ndarray
    buffer: np.ndarray
    arrivals: np.ndarray
    held_at: np.ndarray
    prices: np.ndarray
    lane: np.ndarray
    lane_tail: np.ndarray
    next_in_lane: np.ndarray
    lane_table: np.ndarray


@kernel
def lane_table_size(n_jobs):
    """The length of :attr:`Scan.lane_table`: a power of two, at least twice the jobs (a probe
    then ends within a few slots)."""
    size = 1
    while size < 2 * n_jobs:
        size *= 2
    return size


@kernel(inline=True)
def _same_lane(a, b):
    """Whether two jobs' constants (as bit patterns) are equal in every column but the
    arrival."""
    for col in range(a.shape[0]):
        if col != C_ARRIVAL_S and a[col] != b[col]:
            return False
    return True


@kernel
def find_lanes(jobs, lane, table):
    """Each job's lane: the first job, by index, whose constants equal its own bit for bit in
    every column but the arrival (hashed, then compared). Built-in parts see a job through its
    constants, and their ordering keys are equal within a lane or grow with the arrival, so a
    lane's pending jobs come in arrival order and the one first in it decides for all (see
    :func:`simulate_topology`)."""
    n_jobs, n_cols = jobs.shape
    mask = table.shape[0] - 1
    table[:] = -1
    bits = jobs.view(np.int64)
    for j in range(n_jobs):
        h = 2166136261  # 32-bit FNV-1a over both halves of each column: no product overflows
        for col in range(n_cols):
            if col != C_ARRIVAL_S:
                h = ((h ^ (bits[j, col] & 0xFFFFFFFF)) * 16777619) & 0xFFFFFFFF
                h = ((h ^ ((bits[j, col] >> 32) & 0xFFFFFFFF)) * 16777619) & 0xFFFFFFFF
        slot = h & mask
        while table[slot] >= 0 and not _same_lane(bits[table[slot]], bits[j]):
            slot = (slot + 1) & mask
        if table[slot] < 0:
            table[slot] = j
        lane[j] = table[slot]


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
def _none_free(free):
    """Whether no region has a free GPU. A scalar scan, not ``free.sum() == 0``: the vectorized
    sum reads the counts just stored one by one, a store-forwarding stall that took ~4 % of a
    paper-setting simulation (docs/performance.md)."""
    for r in range(free.shape[0]):
        if free[r] > 0:
            return False
    return True


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
    g ≤ K*_j (SPEC §15's schedule class), every hop wide enough for the bandwidth the placement
    reserves (Alg. 1 line 13)."""
    n_regions = cluster.free.shape[0]
    if plen < 1 or plen > n_regions or g > job[C_KSTAR]:
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
        run.jobs[j], decision.path, decision.alloc, cluster.free, cluster.resid, run.users
    run.plen[j] = plen
    for p in range(plen):
        r = path[p]
        run.path[j, p] = r
        run.path_gpus[j, p] = alloc[r]
        free[r] -= alloc[r]
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


@kernel(inline=True)
def _metrics(run, gpus, start_s, cost, metrics):
    """SPEC §10 run metrics, in :data:`METRICS` order."""
    jobs, plen, path, path_gpus, end_s, power_kw = \
        run.jobs, run.plen, run.path, run.path_gpus, run.end_s, run.gpu_power_kw
    n_jobs = jobs.shape[0]
    jct, cost_sum, energy, makespan, wait, gpus_used, multi, gpu_seconds = \
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for j in range(n_jobs):
        n = 0
        power = 0.0
        for p in range(plen[j]):
            n += path_gpus[j, p]
            power += path_gpus[j, p] * power_kw[path[j, p]]
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


@kernel(inline=True)
def _keys_apart(keys, lane, jobs, heads, buffer):
    """Whether the jobs of a lane share one ordering key and no two lanes do: then the scan
    (key, arrival, index) visits each lane's pending jobs in a row. ``heads`` and ``buffer``
    are overwritten."""
    n = 0
    for j in range(jobs.shape[0]):
        if keys[j] != keys[lane[j]]:
            return False
        if lane[j] == j:
            heads[n] = j
            n += 1
    _sort(heads, n, keys, jobs, buffer)
    for i in range(1, n):
        if keys[heads[i]] == keys[heads[i - 1]]:
            return False
    return True


@kernel(inline=True)
def _rank(jobs, arrivals, n, j):
    """Job j's position in ``arrivals[:n]`` (by arrival, then index), bisected."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        m = arrivals[mid]
        if jobs[m, C_ARRIVAL_S] < jobs[j, C_ARRIVAL_S] or (
                jobs[m, C_ARRIVAL_S] == jobs[j, C_ARRIVAL_S] and m < j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(inline=True)
def _lane_neighbour(run, lane, lane_id, arrivals, rank, step):
    """The pending job of lane ``lane_id`` nearest ``arrivals[rank]`` in arrival order, after it
    (step 1) or before it (step −1); one exists."""
    rank += step
    while lane[arrivals[rank]] != lane_id or run.state[arrivals[rank]] != PENDING:
        rank += step
    return arrivals[rank]


@kernel(inline=True)
def _next_undecided(run, work, lane, arrivals, arrived, j, tail, t):
    """The first pending job of j's lane after j (j waits, the lane's last ``tail`` is not held)
    that the lane hold of their class does not hold: those it holds come first (see
    ``lane_hold_reaches``), so it is found by bisecting on the arrival, without visiting
    them."""
    jobs = run.jobs
    lo, hi = _rank(jobs, arrivals, arrived, j), _rank(jobs, arrivals, arrived, tail)
    c = lane_hold_of(run, work, lane, j, t)
    if c >= 0:  # the first rank after j whose arrival the hold does not reach
        lo += 1
        while lo < hi:
            mid = (lo + hi) // 2
            if lane_hold_reaches(run, work, c, jobs[arrivals[mid], C_ARRIVAL_S]):
                lo = mid + 1
            else:
                hi = mid
        lo -= 1
    return _lane_neighbour(run, lane, lane[j], arrivals, lo, 1)


@kernel(inline=True)
def _decide(run, cluster, work, decision, code, parts, place, allocate, j, t, memo, stable_hold,
            lane):
    """Job j's decision at t (SPEC §5 step 3 under the scheduler's start rule): (plen, g) with
    the placement in ``decision``, g = 0 to wait."""
    jobs = run.jobs
    if code[CODE_GREEDY] != 0:
        # the default rule, inlined: a start rule's call passes the run's arrays by value
        # (~0.4 µs a call), which would dominate a greedy simulation
        c, plen, g = recall_offer(run, work, j, decision) if memo else (-1, -1, 0)
        if plen < 0:
            plen, g = builtin.placement(code[CODE_PLACEMENT], parts[2], code[CODE_ALLOCATOR],
                                        jobs[j], int(jobs[j, C_KSTAR]), cluster, work.scratch,
                                        allocate, decision)
            plen, g = accepted(run, jobs[j], plen, g, decision)
            keep_offer(work, c, plen, g, decision)
        return plen, g
    if memo and (certified_hold(run, work, j, t) if stable_hold
                 else lane_hold(run, work, lane, j, t)):
        return 0, 0  # held as the start rule would hold it, without its call
    return builtin.start_rule(code[CODE_START_RULE], parts[1], j, t, run, cluster, work, place,
                              allocate, decision)


# Every scheduler of a topology in one call: a numba call passes its arguments by value, and the
# run and workspace (~7 kB) pushed once per scheduler took ~7 % of a paper-setting simulation
# (docs/performance.md). The loop is written here, not inlined from a function of one run:
# numba's inlining of this body triples the core's cold compile.
@kernel
def simulate_topology(inputs, outputs, topology, r_max, codes, parts, workspace, run_state,
                      hop_sums):
    """Simulate one topology of a batch under each scheduler (SPEC §5, §13's scan).

    ``inputs`` and ``outputs`` are the batch's (:class:`~bacepipe.core.batch.BatchInputs`,
    :class:`~bacepipe.core.batch.BatchOutputs`), the topology's job constants made (``r_max``:
    its fastest hop; ``hop_sums`` filled for its jobs). ``codes[s]`` is scheduler s's row of
    codes (``CODE_*``) into ``parts``, the tuples of every registered part per kind.
    ``workspace`` holds the arrays a run may overwrite (see
    :func:`bacepipe.core.batch._workspace`), its ``Scan.arrivals`` given; ``run_state`` the
    run's own (job states, start order, reserved bandwidth, running jobs, their count, link
    users). Each run fills its row of the outputs through a
    :class:`~bacepipe.policies.api.Run` (end times, paths, allocations), with the status
    STATUS_OK, STATUS_NEVER_PLACED and the first job that was stuck, or STATUS_BAD_DECISION and
    the job a plug-in part placed against SPEC §4.
    """
    hw, k = inputs.hardware, topology
    gpus, links, jobs = inputs.gpus[k], inputs.links[k], outputs.const[k]
    n_jobs, n_regions = jobs.shape[0], gpus.shape[0]
    state, start_seq, reserved, running, n_running, users = run_state
    cluster, work, decision, scan = workspace
    keys, pending, arrivals, by_index = scan.keys, scan.pending, scan.arrivals, scan.by_index
    free, scratch = cluster.free, work.scratch
    orderings, _, placements, allocators = parts
    link_total = 0.0
    for u in range(n_regions):
        for v in range(n_regions):
            if u != v:
                link_total += links[u, v]
    for s in range(codes.shape[0]):
        state[:] = FUTURE
        start_seq[:] = 0
        reserved[:] = 0.0
        n_running[0] = 0
        users[:, :] = 0
        end_s, start_s, cost = outputs.end_s[k, s], outputs.start_s[k, s], outputs.cost[k, s]
        run = Run(jobs, state, end_s, start_seq, outputs.path[k, s], outputs.path_gpus[k, s],
                  outputs.plen[k, s], reserved, running, n_running, users, links,
                  inputs.latency_s[k], inputs.price[k], inputs.profile[k],
                  inputs.utc_offset_h[k], inputs.time_of_use, hw[HW_POWER_KW],
                  inputs.plan_slack, r_max, cluster.speed, inputs.gpu_power_kw[k],
                  inputs.gpu_mem_gb[k], inputs.hetero, inputs.memory_on, hop_sums)
        code = codes[s]
        status, culprit = STATUS_OK, -1
        place, allocate = placements[code[CODE_PLACEMENT]], allocators[code[CODE_ALLOCATOR]]
        copy_into(free, gpus)
        copy_into(cluster.resid, links)
        for slot in range(work.least_job.shape[0]):
            work.least_job[slot] = -1  # the ℓ_j tables cached belong to the previous run's jobs
        work.n_stale[0] = -1  # the projected copy is of the previous run
        # Flat prices do not depend on t: one price order serves every state of the run.
        scratch.price_ready[0] = 0 if run.time_of_use else 1
        if not run.time_of_use:
            unit_prices(run, 0.0, cluster.price)
            order_by_price(cluster.price, scratch.price_order)
        static_order = code[CODE_STATIC] != 0
        if static_order:
            for j in range(n_jobs):
                pending[j] = j
            builtin.ordering(code[CODE_ORDERING], orderings, jobs, pending, n_jobs, 0.0, keys)

        # A stable-hold start rule holds a job again, without deciding, while nothing it reads
        # changed since it last held it: ``version`` counts starts, releases and price
        # changes, continuing the workspace's count (what a start rule memoizes per version
        # never goes stale).
        stable_hold, held_at = code[CODE_STABLE_HOLD] != 0, scan.held_at
        # Offers memoized per offer class and version (bacepipe.core.projection.offer_class) pay
        # only once a queue holds jobs of one class; built-in parts read nothing but the state.
        memo = code[CODE_BUILTIN] != 0 and n_jobs >= MEMO_MIN_JOBS
        # In a memoized run of a stable-hold rule only the first pending job of each lane
        # (find_lanes) is scanned: the others would be decided alike, after it, and wait behind it
        # in arrival order. Under another rule (spt_plan) a lane's younger jobs are walked after
        # its first, where they are in the scan: right after it, when every lane has a key of its
        # own. Otherwise every job is a lane of its own.
        lane = scan.lane
        walk_lanes = memo and not stable_hold and static_order and _keys_apart(
            keys, lane, jobs, pending, scan.buffer)
        lanes = memo and (stable_hold or walk_lanes)
        lane_tail, next_in_lane = scan.lane_tail, scan.next_in_lane
        lane_tail[:] = -1
        work.version[0] = -1
        version = work.version[1] + 1
        work.version[1] = work.version[2] = version
        chain, shift = version, 0  # the chain of states (see Work.version) and its releases
        work.version[3], work.version[4] = chain, shift
        t = jobs[arrivals[0], C_ARRIVAL_S]
        done, arrived, n_pending, sequence = 0, 0, 0, 0
        while done < n_jobs:
            released = _release(run, cluster, work, scan, t)
            done += released
            if released > 0:
                version += 1
                if released == 1:
                    shift += 1
                else:  # released in index order, projected in start order: a new chain
                    chain, shift = version, 0
            while arrived < n_jobs and jobs[arrivals[arrived], C_ARRIVAL_S] <= t:
                j = arrivals[arrived]  # 2. arrivals join the queue
                arrived += 1
                state[j] = PENDING
                held_at[j] = -1
                next_in_lane[j] = -1
                queue = lane[j] if lanes else j
                behind = lane_tail[queue]
                lane_tail[queue] = j
                if behind >= 0:
                    next_in_lane[behind] = j
                    continue
                if static_order:
                    _enqueue(pending, n_pending, j, keys, jobs)
                else:  # keyed and sorted at the scan
                    pending[n_pending] = j
                n_pending += 1
            # Only time-of-use prices change within a run; holds and memos are of one version.
            watch_prices = (stable_hold or memo) and run.time_of_use
            if watch_prices:
                copy_into(scan.prices, cluster.price)
            unit_prices(run, t, cluster.price)
            if watch_prices:
                for r in range(n_regions):
                    if scan.prices[r] != cluster.price[r]:
                        # a new chain too: its projections' offers at a release's τ were made with
                        # the prices at τ, which the live state no longer has (chain_offer)
                        version += 1
                        chain, shift = version, 0
                        break
            # 3. scan in order; restart after every start, stop when none starts
            while n_pending > 0:
                if _none_free(free):  # no policy can place anything
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
                    if memo:  # what a decision memoizes is stamped with the state's version
                        work.version[0] = work.version[1] = version
                        work.version[3], work.version[4] = chain, shift
                    while True:
                        plen, g = _decide(run, cluster, work, decision, code, parts, place,
                                          allocate, j, t, memo, stable_hold, lane)
                        if g > 0 or not walk_lanes:
                            break
                        # The younger jobs of the lane come next in the scan and may start: the
                        # next to decide is the first the lane hold does not hold (none: it holds
                        # the last).
                        tail = lane_tail[lane[j]]
                        if j == tail or lane_hold(run, work, lane, tail, t):
                            break
                        j = _next_undecided(run, work, lane, arrivals, arrived, j, tail, t)
                    if g == 0:
                        if stable_hold:
                            held_at[j] = version
                        continue
                    if code[CODE_BUILTIN] == 0 and not _valid(run, jobs[j], cluster, decision, plen,
                                                              g, scratch.in_path):
                        status, culprit = STATUS_BAD_DECISION, j
                        break  # started stays False: the scan ends, then the run
                    _start(run, cluster, work, by_index, j, t, decision, plen, g, sequence, start_s,
                           cost)
                    if j != pending[i]:  # a younger job of the lane leaves it; its first stays
                        behind = _lane_neighbour(run, lane, lane[j], arrivals,
                                                 _rank(jobs, arrivals, arrived, j), -1)
                        next_in_lane[behind] = next_in_lane[j]
                        if lane_tail[lane[j]] == j:
                            lane_tail[lane[j]] = behind
                    else:
                        n_pending -= 1
                        for q in range(i, n_pending):
                            pending[q] = pending[q + 1]
                        after = next_in_lane[j]  # the lane's next job joins the scan
                        if after < 0:
                            lane_tail[lane[j] if lanes else j] = -1
                        else:
                            if static_order:
                                _enqueue(pending, n_pending, after, keys, jobs)
                            else:
                                pending[n_pending] = after
                            n_pending += 1
                    sequence += 1
                    version += 1
                    chain, shift = version, 0
                    started = True
                    break
                if not started:
                    break
            if status != STATUS_OK:
                break
            t_next = jobs[arrivals[arrived], C_ARRIVAL_S] if arrived < n_jobs else np.inf
            if n_running[0] > 0:
                t_next = min(t_next, end_s[running[n_running[0] - 1]])
            if t_next == np.inf and done < n_jobs:
                stuck = n_jobs
                for i in range(n_pending):
                    j = pending[i]
                    while j >= 0:
                        stuck = min(stuck, j)
                        j = next_in_lane[j]
                status, culprit = STATUS_NEVER_PLACED, stuck
                break
            t = t_next
        if status == STATUS_OK:
            _metrics(run, gpus, start_s, cost, outputs.metrics[k, s])
        outputs.status[k, s], outputs.bad_job[k, s] = status, culprit
