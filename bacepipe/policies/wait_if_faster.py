"""Wait-if-faster start rule (SPEC §13). Job j offered placement p with L GPUs at time t starts if
L >= K*_j or no job is running (jobs started at t count). Otherwise, for each distinct end time
τ_k of the running jobs, release (on a copy, cumulatively) every running job ending by τ_k and run
j's own placement policy there, with prices at τ_k, giving p_k. j waits iff
min_k (τ_k + E_j(p_k)) < t + E_j(p), strictly; if every τ_k gives nothing, j starts."""

from bacepipe.core.model import C_KSTAR
from bacepipe.core.projection import (
    advance_projection,
    begin_projection,
    execution_s,
    least_exec_s,
    least_exec_table,
    offer,
    running_by_end,
)
from bacepipe.policies.api import Decision, start_rule_kernel
from bacepipe.sim.reference import offer as offer_twin
from bacepipe.sim.reference import projections

#: A held job stays held until the state or prices change: the offers now and at each end time
#: are functions of them, and t + E_j(p) only grows with t.
STATIC = True


@start_rule_kernel
def kernel(j, t, run, cluster, work, place, allocate, out):
    job = run.jobs[j]
    kstar = int(job[C_KSTAR])
    plen, g = offer(place, run, job, kstar, cluster, work, allocate, out)
    if g == 0 or g >= kstar:
        return plen, g
    n_running = running_by_end(run, work.order)
    if n_running == 0:
        return plen, g
    finish_now = t + execution_s(run, job, out.path, plen, out.alloc)
    # No placement runs faster than SPEC §15's ℓ_j over the GPUs it can have: an epoch where
    # even that ends no sooner cannot make the job wait (exact pruning; once it holds for every
    # GPU count, it holds for every later epoch too).
    least = work.least[least_exec_table(run, j, work)]
    never = least_exec_s(job, least, kstar)
    trial = Decision(work.trial_path, work.trial_alloc)
    projected = begin_projection(run, cluster, work)
    i = 0
    while i < n_running and run.end_s[work.order[i]] + never < finish_now:
        i, tau = advance_projection(run, work, n_running, i)
        if tau + least_exec_s(job, least, projected.free.sum()) >= finish_now:
            continue
        plen_k, g_k = offer(place, run, job, kstar, projected, work, allocate, trial)
        if g_k > 0 and tau + execution_s(run, job, trial.path, plen_k, trial.alloc) < finish_now:
            return 0, 0
    return plen, g


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
