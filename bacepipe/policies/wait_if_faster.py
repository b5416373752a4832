"""Wait-if-faster start rule (SPEC §13). Job j offered placement p with L GPUs at time t starts if
L >= K*_j or no job is running (jobs started at t count). Otherwise, for each distinct end time
τ_k of the running jobs, release (on a copy, cumulatively) every running job ending by τ_k and run
j's own placement policy there, with prices at τ_k, giving p_k. j waits iff
min_k (τ_k + E_j(p_k)) < t + E_j(p), strictly; if every τ_k gives nothing, j starts."""

import numpy as np

from bacepipe.core.jit import kernel as plain_kernel
from bacepipe.core.model import C_ITERS, C_KSTAR
from bacepipe.core.projection import (
    chain_offer,
    epoch_end,
    iteration_s,
    keep_hold,
    keep_offer,
    least_exec_s,
    least_exec_table,
    offer,
    project_to,
    recall_offer,
    running_by_end,
)
from bacepipe.policies.api import Cluster, Decision, start_rule_kernel
from bacepipe.sim.reference import offer as offer_twin
from bacepipe.sim.reference import projections

#: A held job stays held until the state or prices change: the offers now and at each end time
#: are functions of them, and t + E_j(p) only grows with t.
STATIC = True


@plain_kernel(inline=True)
def _placed_offer(place, run, job, kstar, cluster, work, allocate, out, c, plen, g):
    """The offer on the live state with its placement in ``out`` (plen >= 0: already there),
    made and memoized for the class when it is not."""
    if plen >= 0:
        return plen, g
    plen, g = offer(place, run, job, kstar, cluster, work, allocate, out)
    keep_offer(work, c, plen, g, out)
    return plen, g


@start_rule_kernel
def kernel(j, t, run, cluster, work, place, allocate, out):
    job = run.jobs[j]
    kstar = int(job[C_KSTAR])
    c, plen, g = recall_offer(run, work, j, out)
    # The offer's path is needed only to start: while it is not, the class's (g, t_iter) on the
    # live state may come from a projection of an earlier state of the chain (plen < 0).
    now_iter_s = 0.0
    if plen < 0:
        g, now_iter_s = chain_offer(work, c)
        if g < 0:
            plen, g = _placed_offer(place, run, job, kstar, cluster, work, allocate, out, c,
                                    plen, g)
    if g == 0:  # held until the state changes, like every job of its class
        keep_hold(work, c, t, -np.inf, 0.0, 0.0)
        return 0, 0
    order = work.order
    n_running = running_by_end(run, order)
    if g >= kstar or n_running == 0:
        return _placed_offer(place, run, job, kstar, cluster, work, allocate, out, c, plen, g)
    if plen >= 0:
        now_iter_s = iteration_s(run, job, out.path, plen, out.alloc)
    finish_now = t + job[C_ITERS] * now_iter_s
    # No placement runs faster than SPEC §15's ℓ_j over the GPUs it can have: an epoch where
    # even that ends no sooner cannot make the job wait (exact pruning; once it holds for every
    # GPU count, it holds for every later epoch too).
    least = work.least[least_exec_table(run, j, work)]
    never = least_exec_s(job, least, kstar)
    # Every job decided on one chain of states sees the same epochs in the same states, and jobs
    # of one offer class get the same offer at each: an epoch's free GPUs and a class's offer
    # there are memoized per chain (row: the epoch's position in it, see ``Work.version``), and
    # the copy is advanced only to compute what is not.
    chain, shift = work.version[3], work.version[4]
    stamp, free_col = work.memo_version, work.memo_gpus.shape[1] - 1
    trial = Decision(work.trial_path, work.trial_alloc)
    projected = Cluster(work.free, work.resid, work.price, cluster.speed)
    i, released = 0, -1  # released: running jobs released on the copy (−1: no copy yet)
    while i < n_running and run.end_s[order[i]] + never < finish_now:
        tau, i_next = run.end_s[order[i]], epoch_end(run, order, n_running, i)
        row = shift + i
        if work.version[0] >= 0 and stamp[row, free_col] == chain:
            free = work.memo_gpus[row, free_col]
        else:
            released = project_to(run, cluster, work, n_running, released, i_next)
            free = projected.free.sum()
            stamp[row, free_col], work.memo_gpus[row, free_col] = chain, free
        if tau + least_exec_s(job, least, free) < finish_now:
            if c >= 0 and stamp[row, c] == chain:
                g_k, iter_s = work.memo_gpus[row, c], work.memo_iter_s[row, c]
            else:
                released = project_to(run, cluster, work, n_running, released, i_next)
                plen_k, g_k = offer(place, run, job, kstar, projected, work, allocate, trial)
                iter_s = iteration_s(run, job, trial.path, plen_k, trial.alloc) if g_k > 0 \
                    else 0.0
                if c >= 0:
                    stamp[row, c], work.memo_gpus[row, c], work.memo_iter_s[row, c] = \
                        chain, g_k, iter_s
            if g_k > 0 and tau + job[C_ITERS] * iter_s < finish_now:
                # the event loop holds the class's later jobs by this epoch without a call
                keep_hold(work, c, t, tau, iter_s, now_iter_s)
                return 0, 0
        i = i_next
    return _placed_offer(place, run, job, kstar, cluster, work, allocate, out, c, plen, g)


def twin(j, t, sim, place, allocate):
    jm = sim.models[j]
    now = offer_twin(sim, j, jm.k_star, sim.state, sim.prices_at(t), place, allocate)
    if now is None or sum(now[1]) >= jm.k_star or not sim.running:
        return now
    finish_now = t + sim.execution_s(j, *now)
    for tau, state, prices in projections(sim):
        later = offer_twin(sim, j, jm.k_star, state, prices, place, allocate)
        if later is not None and tau + sim.execution_s(j, *later) < finish_now:
            return None
    return now
