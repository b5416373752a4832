"""Numba kernels the start rules share (SPEC §13, §14): a placement's execution time and cost, the
policy's offer, and the projection of the running jobs' releases.

The projection works on the copy in :class:`~bacepipe.policies.api.Work`: :func:`begin_projection`
copies the residual state, :func:`advance_projection` releases the running jobs of the next
distinct end time τ_k (cumulatively, in order of end time, then start order) and sets the prices
at τ_k. Pending jobs are ignored and nothing is reserved. The twin is
:func:`bacepipe.sim.reference.projections`.
"""

import numpy as np

from bacepipe.core.bounds import solo_bounds_s
from bacepipe.core.jit import copy_into, kernel
from bacepipe.core.model import (
    C_ARRIVAL_S,
    C_E1,
    C_FLOP,
    C_ITERS,
    C_KSTAR,
    C_MEM_BYTES,
    C_MIN_GPUS,
    C_OVERHEAD_S,
    placement_iter_time,
    price_at,
    t_comp,
    tou_energy_price,
)
from bacepipe.core.structs import MEMO_CLASSES, Cluster


@kernel(inline=True)
def stage_time_s(run, job, path, plen, alloc):
    """Per-stage compute of a placement, s: t_comp(L) = W_j / L + overhead (SPEC §2), or with GPU
    types the balanced t_comp(p) = flop / Σ n_r·s_r + overhead (SPEC §16)."""
    if not run.hetero:
        total = 0
        for p in range(plen):
            total += alloc[path[p]]
        return t_comp(job, total)
    compute = 0.0
    for p in range(plen):
        compute += alloc[path[p]] * run.speed[path[p]]
    return job[C_FLOP] / compute + job[C_OVERHEAD_S]


@kernel(inline=True)
def iteration_s(run, job, path, plen, alloc):
    """t_iter of a placement (Eq. 1, SPEC §12 latency included), s."""
    tc = stage_time_s(run, job, path, plen, alloc)
    return placement_iter_time(job, path, plen, alloc, run.links, run.latency_s, tc,
                               run.hop_sums)


@kernel(inline=True)
def execution_s(run, job, path, plen, alloc):
    """E_j of a placement (Eq. 2: I_j · t_iter), s."""
    return job[C_ITERS] * iteration_s(run, job, path, plen, alloc)


@kernel(inline=True)
def weighted_price(run, path, plen, alloc):
    """Σ over the path (in path order) of a region's GPUs times its price, and with GPU types
    its power (SPEC §16): what a flat-priced placement's cost is proportional to."""
    price, power_kw, hetero = run.price, run.gpu_power_kw, run.hetero
    weighted = 0.0
    for p in range(plen):
        r = path[p]
        if hetero:
            weighted += alloc[r] * price[r] * power_kw[r]
        else:
            weighted += alloc[r] * price[r]
    return weighted


@kernel(inline=True)
def flat_cost(run, weighted, exec_s):
    """C_j of a placement of :func:`weighted_price` ``weighted`` under flat prices (Eq. 4), $."""
    if run.hetero:
        return exec_s / 3600.0 * weighted
    return exec_s / 3600.0 * weighted * run.power_kw


@kernel(inline=True)
def placement_cost(run, path, plen, alloc, start_s, exec_s):
    """C_j of a placement started at ``start_s`` (Eq. 4; SPEC §12 time-of-use integrates the
    price over the execution; SPEC §16 prices each region's power), $. Sums run in path order."""
    if not run.time_of_use:
        return flat_cost(run, weighted_price(run, path, plen, alloc), exec_s)
    price, power_kw, hetero = run.price, run.gpu_power_kw, run.hetero
    energy_price = 0.0
    for p in range(plen):
        r = path[p]
        integral = tou_energy_price(price[r], run.profile[r], run.utc_offset_h[r],
                                    start_s, start_s + exec_s)
        if hetero:
            energy_price += alloc[r] * power_kw[r] * integral
        else:
            energy_price += alloc[r] * integral
    return energy_price if hetero else run.power_kw * energy_price


@kernel(inline=True)
def holds_model(run, job, path, plen, alloc, g):
    """The memory rule (SPEC §12 adam_mixed): g >= m_j, or with GPU types every region of the path
    holds its share, Σ_q n_q·(s_q / s_r) >= 16·params / (0.9·mem_r) (SPEC §16)."""
    if not run.memory_on or not run.hetero:
        return g >= job[C_MIN_GPUS]
    for p in range(plen):
        r = path[p]
        share = 0.0
        for q in range(plen):
            share += alloc[path[q]] * (run.speed[path[q]] / run.speed[r])
        if share < job[C_MEM_BYTES] / (0.9 * run.gpu_mem_gb[r] * 1e9):
            return False
    return True


@kernel(inline=True)
def accepted(run, job, plen, g, out):
    """A placement's (plen, g) as an offer: (0, 0) when it is nothing or fails the memory rule
    (SPEC §12, §16: such a placement counts as nothing)."""
    if g == 0 or not holds_model(run, job, out.path, plen, out.alloc, g):
        return 0, 0
    return plen, g


@kernel(inline=True)
def offer(place, run, job, k, cluster, work, allocate, out):
    """The placement policy's offer aiming at k GPUs (see :func:`accepted`)."""
    plen, g = place(job, k, cluster, work.scratch, allocate, out)
    return accepted(run, job, plen, g, out)


@kernel(inline=True)
def least_exec_table(run, j, work):
    """The slot of ``work.least`` that holds job j's ℓ_j table per iteration for
    :func:`least_exec_s`, filled in one pass over the GPU counts the first time j (or a job of
    its offer class, whose table is the same) asks in this run and kept while no other job
    takes the slot. Without GPU types a placement has at least m_j GPUs; with them the memory
    rule can allow fewer, so the range starts at 1."""
    c = offer_class(run, work, j)
    key, slot = (work.classes[c], c) if c >= 0 else (j, j % work.least_job.shape[0])
    if work.least_job[slot] == key:
        return slot
    work.least_job[slot] = key
    least, job = work.least[slot], run.jobs[j]
    kstar = int(job[C_KSTAR])
    k_min = 1 if run.hetero else int(job[C_MIN_GPUS])
    for k in range(min(k_min, kstar + 1)):
        least[k] = np.inf
    solo_bounds_s(job, run.fastest_hop_gbps, work.row, k_min, kstar, least)
    return slot


@kernel(inline=True)
def least_exec_s(job, least, gpus):
    """A floor on E_j of any placement with at most ``gpus`` GPUs (and at most K*): SPEC §15's
    ℓ_j over that range (inf when empty), I_j times the job's table
    (``work.least[least_exec_table(...)]``)."""
    return job[C_ITERS] * least[min(int(job[C_KSTAR]), gpus)]


@kernel(inline=True)
def unit_prices(run, t_s, out):
    """What price-based choices compare at time t: P_r(t) (SPEC §12), or with GPU types
    π_r = (P_r(t) · power_r) / s_r (SPEC §16)."""
    price_at(run.price, run.profile, run.utc_offset_h, run.time_of_use, t_s, out)
    if run.hetero:
        for r in range(out.shape[0]):
            out[r] = (out[r] * run.gpu_power_kw[r]) / run.speed[r]


@kernel(inline=True)
def running_by_end(run, order):
    """Write the running jobs into ``order`` by end time, then start order; return how many."""
    n = run.n_running[0]
    for i in range(n):
        order[i] = run.running[n - 1 - i]
    return n


@kernel(inline=True)
def begin_projection(run, cluster, work):
    """Make ``work``'s copy of the live state (``cluster``, ``run.users``); returns it as a
    Cluster. Free GPUs and prices are copied whole; of the R × R link arrays only the entries
    :func:`mark_stale` logged since the last copy (all of them after a full log), so that a
    decision on 256 regions does not copy a megabyte."""
    copy_into(work.free, cluster.free)
    copy_into(work.price, cluster.price)
    n_stale = work.n_stale[0]
    if n_stale < 0:
        copy_into(work.resid, cluster.resid)
        copy_into(work.users, run.users)
    else:
        n_regions = work.resid.shape[0]
        for i in range(n_stale):
            a, b = work.stale[i] // n_regions, work.stale[i] % n_regions
            work.resid[a, b] = cluster.resid[a, b]
            work.users[a, b] = run.users[a, b]
    work.n_stale[0] = 0
    return Cluster(work.free, work.resid, work.price, cluster.speed)


@kernel(inline=True)
def mark_stale(work, a, b):
    """Log that link direction a→b changed in the live state or in the projected copy (every
    change of either goes through here: the event loop's reservations and releases, and the
    projection's); a full log stops logging and makes the next copy whole."""
    n_stale = work.n_stale[0]
    if n_stale < 0:
        return
    if n_stale == work.stale.shape[0]:
        work.n_stale[0] = -1
        return
    work.stale[n_stale] = a * work.resid.shape[0] + b
    work.n_stale[0] = n_stale + 1


@kernel(inline=True)
def release_job(run, j, free, resid, users, work):
    """Give back job j's GPUs and both directions of its reservations (SPEC §4) on ``free``,
    ``resid`` and ``users`` (the cluster or a projected copy, logged in ``work``'s stale list);
    a link direction no job uses any more returns to its nominal bandwidth exactly, so rounding
    never accumulates."""
    path, path_gpus, links, reserved = run.path[j], run.path_gpus[j], run.links, run.reserved[j]
    plen = run.plen[j]
    for p in range(plen):
        free[path[p]] += path_gpus[p]
    for p in range(plen - 1):
        v, u = path[p], path[p + 1]
        for a, b in ((v, u), (u, v)):
            users[a, b] -= 1
            resid[a, b] = links[a, b] if users[a, b] == 0 else resid[a, b] + reserved
            mark_stale(work, a, b)


@kernel(inline=True)
def epoch_end(run, order, n_running, i):
    """The projected epoch that ``order[i]`` ends: the index after the last running job (in
    ``order``, by end time) with the same end time τ."""
    tau, end = run.end_s[order[i]], i + 1
    while end < n_running and run.end_s[order[end]] == tau:
        end += 1
    return end


@kernel(inline=True)
def advance_projection(run, work, n_running, i):
    """Release, on the copy, ``work.order[i]`` and every later running job with the same end time
    τ (both directions of each reservation, back to nominal when no user is left) and set the
    copy's prices at τ. Returns (the next i, τ)."""
    order = work.order
    tau, end = run.end_s[order[i]], epoch_end(run, order, n_running, i)
    for q in range(i, end):
        release_job(run, order[q], work.free, work.resid, work.users, work)
    unit_prices(run, tau, work.price)
    return end, tau


@kernel(inline=True)
def project_to(run, cluster, work, n_running, released, end):
    """Advance the projected copy until it has released ``order[:end]`` (beginning it when
    ``released`` < 0, no copy yet), an epoch at a time; returns how many it has released."""
    if released < 0:
        begin_projection(run, cluster, work)
        released = 0
    while released < end:
        released, _ = advance_projection(run, work, n_running, released)
    return released


@kernel(inline=True)
def _same_offers(a, b):
    """Whether two jobs' constants are equal in every column a built-in placement, allocator,
    the memory rule or t_iter reads: all but the iteration count, E_j(1) and the arrival."""
    for col in range(a.shape[0]):
        if col != C_ITERS and col != C_E1 and col != C_ARRIVAL_S and a[col] != b[col]:
            return False
    return True


@kernel(inline=True)
def offer_class(run, work, j):
    """Job j's offer class in this run: jobs of one class get the same offer, and the same
    t_iter of it, on any state (they differ only in what scales E_j), so a start rule may
    memoize one class's projected offers for the others. −1 without a memo (``work.version[0]``
    < 0: a part may read more than the state) or beyond :data:`MEMO_CLASSES` classes."""
    if work.version[0] < 0:
        return -1
    this_run = work.version[2]
    if work.class_run[j] == this_run:
        return work.job_class[j]
    classes = work.classes
    if classes[MEMO_CLASSES + 1] != this_run:
        classes[MEMO_CLASSES], classes[MEMO_CLASSES + 1] = 0, this_run
    n = classes[MEMO_CLASSES]
    c = 0
    while c < n and not _same_offers(run.jobs[classes[c]], run.jobs[j]):
        c += 1
    if c == n:
        if n < MEMO_CLASSES:
            classes[c] = j
            classes[MEMO_CLASSES] = n + 1
        else:
            c = -1
    work.job_class[j], work.class_run[j] = c, this_run
    return c


@kernel(inline=True)
def recall_offer(run, work, j, out):
    """Job j's offer on the live state, if a job of its offer class got one on this version of
    the state and prices (the offer is the same for the whole class): written into ``out``.
    Returns (the class, plen, g), plen = −1 when there is none to recall."""
    c = offer_class(run, work, j)
    if c < 0 or work.now_version[c] != work.version[0]:
        return c, -1, 0
    plen = work.now_size[c, 0]
    for p in range(plen):
        r = work.now_regions[c, p]
        out.path[p] = r
        out.alloc[r] = work.now_gpus[c, p]
    return c, plen, work.now_size[c, 1]


@kernel(inline=True)
def keep_offer(work, c, plen, g, out):
    """Memoize class c's offer ``out`` (plen, g) on this version for :func:`recall_offer`."""
    if c < 0:
        return
    work.now_version[c] = work.version[0]
    work.now_size[c, 0], work.now_size[c, 1] = plen, g
    for p in range(plen):
        work.now_regions[c, p] = out.path[p]
        work.now_gpus[c, p] = out.alloc[out.path[p]]


@kernel(inline=True)
def chain_offer(work, c):
    """Class c's offer on the live state as (g, t_iter), when a release of one job made the
    state a projection memoized on this chain: the live state is then, bit for bit, the copy
    that released that job (the same releases, in the same order, prices at τ = now). (−1, 0)
    when it is not known."""
    chain, shift = work.version[3], work.version[4]
    if c < 0 or shift == 0 or work.memo_version[shift - 1, c] != chain:
        return -1, 0.0
    return work.memo_gpus[shift - 1, c], work.memo_iter_s[shift - 1, c]


@kernel(inline=True)
def certified_hold(run, work, j, t):
    """Whether job j's offer class has a hold on this version of the state that holds j at time
    t (:func:`keep_hold`): τ + I_j·t_iter(τ) < t + I_j·t_iter(now) is the comparison the start
    rule itself makes at that epoch, the same floating-point operations, so a job it holds is
    one the rule holds (at the first such epoch; the answer, hold, is the same). A hold of
    τ = −∞ holds every job of the class (its offer now is nothing)."""
    c = offer_class(run, work, j)
    if c < 0 or work.hold_version[c] != work.version[0]:
        return False
    iters, hold = run.jobs[j, C_ITERS], work.hold[c]
    return hold[0] + iters * hold[1] < t + iters * hold[2]


@kernel(inline=True)
def keep_hold(work, c, t, tau, iter_s, now_iter_s):
    """Keep the epoch (τ, t_iter there) that held a job of class c at time t as the class's hold
    on this version, unless the one kept holds from fewer iterations on: (τ − t) / (t_iter(now)
    − t_iter(τ)), the fewest that make the epoch the faster finish, is smaller for it (or it
    holds every job, τ = −∞)."""
    if c < 0:
        return
    hold, version = work.hold[c], work.version[0]
    if work.hold_version[c] == version and tau > -np.inf and (hold[0] == -np.inf or (
            hold[0] - t) / (now_iter_s - hold[1]) <= (tau - t) / (now_iter_s - iter_s)):
        return
    work.hold_version[c] = version
    hold[0], hold[1], hold[2] = tau, iter_s, now_iter_s


@kernel(inline=True)
def lane_hold_of(run, work, lane, j, t):
    """The offer class of job j if it keeps a lane hold (:func:`keep_lane_hold`) at time t on
    this version from a job of j's lane, else −1."""
    c = offer_class(run, work, j)
    if c < 0 or work.lane_hold_at[c, 0] != work.version[0]:
        return -1
    if work.lane_hold[c, 0] != t or lane[j] != lane[work.lane_hold_at[c, 1]]:
        return -1
    return c


@kernel(inline=True)
def lane_hold_reaches(run, work, c, arrival):
    """Whether class c's lane hold holds a job of its lane arriving at ``arrival``: no older
    than the job decided, and the option that made that job wait still within the slack bound
    by the margin. Under SPEC §14 all of a job's JCTs shift by its arrival, so that option's
    slack (1 + ε)·least JCT − its JCT falls by ε per second of arrival (so the jobs held are
    those up to some arrival); the margin exceeds any rounding of either side."""
    held = work.lane_hold[c]
    later = arrival - run.jobs[work.lane_hold_at[c, 1], C_ARRIVAL_S]
    return later >= 0.0 and held[1] - run.plan_slack * later >= held[2]


@kernel(inline=True)
def lane_hold(run, work, lane, j, t):
    """Whether job j waits at time t on this version by the lane hold its offer class keeps
    (:func:`lane_hold_of`, :func:`lane_hold_reaches`)."""
    c = lane_hold_of(run, work, lane, j, t)
    return c >= 0 and lane_hold_reaches(run, work, c, run.jobs[j, C_ARRIVAL_S])


@kernel(inline=True)
def keep_lane_hold(work, c, j, t, slack, margin):
    """Keep, for class c on this version, that job j waited at time t with an option of this
    slack, which must stay above ``margin`` (:func:`lane_hold`)."""
    work.lane_hold_at[c, 0], work.lane_hold_at[c, 1] = work.version[0], j
    held = work.lane_hold[c]
    held[0], held[1], held[2] = t, slack, margin
