"""Numba kernels the start rules share (SPEC §13, §14): a placement's execution time and cost, the
policy's offer, and the projection of the running jobs' releases.

The projection works on the copy in :class:`~bacepipe.policies.api.Work`: :func:`begin_projection`
copies the residual state, :func:`advance_projection` releases the running jobs of the next
distinct end time τ_k (cumulatively, in order of end time, then start order) and sets the prices
at τ_k. Pending jobs are ignored and nothing is reserved. The twin is
:func:`bacepipe.sim.reference.projections`.
"""

from bacepipe.core.jit import kernel
from bacepipe.core.model import C_ITERS, C_MIN_GPUS, placement_iter_time, price_at, tou_energy_price
from bacepipe.core.structs import RUNNING, Cluster


@kernel
def execution_s(run, job, path, plen, alloc):
    """E_j of a placement (Eq. 2, SPEC §12 latency included), s."""
    return job[C_ITERS] * placement_iter_time(job, path, plen, alloc, run.links, run.latency_s)


@kernel
def placement_cost(run, path, plen, alloc, start_s, exec_s):
    """C_j of a placement started at ``start_s`` (Eq. 4; SPEC §12 time-of-use integrates the
    price over the execution), $. Sums run in path order."""
    if run.time_of_use:
        energy_price = 0.0
        for p in range(plen):
            r = path[p]
            energy_price += alloc[r] * tou_energy_price(
                run.price[r], run.profile[r], run.utc_offset_h[r], start_s, start_s + exec_s)
        return run.power_kw * energy_price
    weighted_price = 0.0
    for p in range(plen):
        weighted_price += alloc[path[p]] * run.price[path[p]]
    return exec_s / 3600.0 * weighted_price * run.power_kw


@kernel
def offer(place, job, k, cluster, work, allocate, out):
    """The placement policy's offer aiming at k GPUs; (0, 0) when it is nothing or below the
    memory minimum (SPEC §12: such a placement counts as nothing)."""
    plen, g = place(job, k, cluster, work, allocate, out)
    if g == 0 or g < job[C_MIN_GPUS]:
        return 0, 0
    return plen, g


@kernel
def running_by_end(run, order):
    """Write the running jobs into ``order`` by end time, then start order; return how many."""
    n = 0
    for j in range(run.state.shape[0]):
        if run.state[j] != RUNNING:
            continue
        p = n
        while p > 0 and (run.end_s[order[p - 1]] > run.end_s[j] or (
                run.end_s[order[p - 1]] == run.end_s[j]
                and run.start_seq[order[p - 1]] > run.start_seq[j])):
            order[p] = order[p - 1]
            p -= 1
        order[p] = j
        n += 1
    return n


@kernel
def begin_projection(run, cluster, work):
    """Copy the residual state into ``work``; returns the copy as a Cluster."""
    work.free[:] = cluster.free
    work.resid[:, :] = cluster.resid
    work.users[:, :] = run.users
    work.price[:] = cluster.price
    return Cluster(work.free, work.resid, work.price)


@kernel
def advance_projection(run, work, n_running, i):
    """Release, on the copy, ``work.order[i]`` and every later running job with the same end time
    τ (both directions of each reservation, back to nominal when no user is left) and set the
    copy's prices at τ. Returns (the next i, τ)."""
    order = work.order
    tau = run.end_s[order[i]]
    while i < n_running and run.end_s[order[i]] == tau:
        j = order[i]
        for p in range(run.plen[j]):
            r = run.path[j, p]
            work.free[r] += run.alloc[j, r]
        for p in range(run.plen[j] - 1):
            v, u = run.path[j, p], run.path[j, p + 1]
            for a, b in ((v, u), (u, v)):
                work.users[a, b] -= 1
                work.resid[a, b] = run.links[a, b] if work.users[a, b] == 0 \
                    else work.resid[a, b] + run.reserved[j]
        i += 1
    price_at(run.price, run.profile, run.utc_offset_h, run.time_of_use, tau, work.price)
    return i, tau
