"""spt_plan's start rule (SPEC §14, slack ε = ``plan_slack``): weigh options (τ, K′) — epochs
τ ∈ {t} ∪ the distinct end times of the running jobs (projected as SPEC §13), targets
K′ = ceil(K*_j · q / 10) for q = 10 .. 5 (duplicates dropped) — each placed by the scheduler's
policy aiming at K′ on the (projected) state. Keep the options with JCT <= (1 + ε) · the least
JCT; among those costing <= (least cost) · (1 + 1e-9) take the earliest epoch, then the most GPUs,
then the larger K′. Start now if that option is at τ = t, else wait."""

import numpy as np

from bacepipe.core.jit import kernel as plain_kernel
from bacepipe.core.model import C_ARRIVAL_S, C_ITERS, C_KSTAR
from bacepipe.core.projection import (
    epoch_end,
    flat_cost,
    iteration_s,
    keep_lane_hold,
    least_exec_s,
    least_exec_table,
    offer,
    offer_class,
    placement_cost,
    project_to,
    running_by_end,
    weighted_price,
)
from bacepipe.policies.api import (
    OPT_COST,
    OPT_GPUS,
    OPT_JCT,
    OPT_PLEN,
    OPT_Q,
    OPT_TAU,
    Cluster,
    Decision,
    start_rule_kernel,
)
from bacepipe.sim.reference import offer as offer_twin
from bacepipe.sim.reference import projections

#: Targets K′ = ceil(K* · q / 10), largest first.
QUOTAS = (10, 9, 8, 7, 6, 5)
#: Costs within this relative margin of the least count as the cheapest.
COST_TIE_RTOL = 1e-9
#: Not static: whether a job waits depends on t (its JCT counts from its arrival).
STATIC = False


@plain_kernel
def target(kstar, q):
    """K′ = ceil(K* · q / 10) in integers."""
    return (kstar * q + 9) // 10


@plain_kernel(inline=True)
def _memo_offer(tau, run, job, k, qi, cluster, work, place, allocate, trial, c, row, stamp,
                project, projection):
    """The offer aiming at target k (index qi) at epoch τ as (plen, g, t_iter, cost, the jobs the
    copy has released): memoized for class c (−1: none) in ``row`` of ``work.plan_offer``,
    stamped ``stamp`` (a memoized offer has no placement, plen 0), else made on ``cluster``,
    after advancing the projected copy to the epoch when ``project`` (see :func:`_add_options`)."""
    live, n_running, released, epoch_end_at = projection
    if c >= 0 and work.plan_stamp[row, c, qi] == stamp:
        kept = work.plan_offer[row, c, qi]
        g, iter_s = int(kept[0]), kept[1]
        cost_s = flat_cost(run, kept[2], job[C_ITERS] * iter_s) if g > 0 else 0.0
        return 0, g, iter_s, cost_s, released
    if project:
        released = project_to(run, live, work, n_running, released, epoch_end_at)
    plen, g = offer(place, run, job, k, cluster, work, allocate, trial)
    iter_s = iteration_s(run, job, trial.path, plen, trial.alloc) if g > 0 else 0.0
    cost_s = placement_cost(run, trial.path, plen, trial.alloc, tau,
                            job[C_ITERS] * iter_s) if g > 0 else 0.0
    if c >= 0:
        kept = work.plan_offer[row, c, qi]
        work.plan_stamp[row, c, qi] = stamp
        kept[0], kept[1] = g, iter_s
        kept[2] = weighted_price(run, trial.path, plen, trial.alloc)
    return plen, g, iter_s, cost_s, released


@plain_kernel(inline=True)
def _add_options(tau, run, job, least, cluster, free, work, place, allocate, trial, n_opt,
                 least_jct, now, c, row, stamp, projection):
    """Append the options of epoch τ (``free`` GPUs in all) to ``work.options`` (and, ``now``,
    the placements it makes to ``work.now_path``/``now_alloc``); returns the new count, the
    least JCT of the options so far and the jobs the projected copy has released. Targets whose JCT
    cannot come under the slack bound of the options so far are skipped: a placement aiming at
    K′ has at most min(K′, free GPUs) GPUs, so it runs no faster than ℓ_j over that range
    (SPEC §15, ``least``), and smaller targets are no faster (exact pruning).

    Offers come from :func:`_memo_offer` (class ``c``, ``row``, ``stamp``); a memoized option
    has no placement (OPT_PLEN 0). A projected epoch (``projection``: the live cluster, the
    running jobs, those released on the copy (−1: no copy yet) and the epoch's end in
    ``work.order``) is projected only for an offer not memoized."""
    live, n_running, released, epoch_end_at = projection
    kstar = int(job[C_KSTAR])
    previous = -1
    for qi in range(len(QUOTAS)):
        k = target(kstar, QUOTAS[qi])
        if k == previous:
            continue
        previous = k
        if (tau + least_exec_s(job, least, min(k, free)) - job[C_ARRIVAL_S]
                > (1.0 + run.plan_slack) * least_jct):
            break
        plen, g, iter_s, cost_s, released = _memo_offer(
            tau, run, job, k, qi, cluster, work, place, allocate, trial, c, row, stamp, not now,
            (live, n_running, released, epoch_end_at))
        if g == 0:
            continue
        option = work.options[n_opt]
        option[OPT_TAU] = tau
        option[OPT_JCT] = tau + job[C_ITERS] * iter_s - job[C_ARRIVAL_S]
        option[OPT_COST] = cost_s
        option[OPT_GPUS] = g
        option[OPT_Q] = k
        option[OPT_PLEN] = plen
        if now:
            for p in range(plen):
                r = trial.path[p]
                work.now_path[n_opt, p] = r
                work.now_alloc[n_opt, r] = trial.alloc[r]
        least_jct = min(least_jct, option[OPT_JCT])
        n_opt += 1
    return n_opt, least_jct, released


@plain_kernel
def least_jct_of(options, n_opt):
    """The least JCT of the first ``n_opt`` options."""
    least_jct = options[0, OPT_JCT]
    for i in range(1, n_opt):
        least_jct = min(least_jct, options[i, OPT_JCT])
    return least_jct


@plain_kernel
def choose(options, n_opt, slack):
    """Index of the chosen option (SPEC §14's rule)."""
    bound = (1.0 + slack) * least_jct_of(options, n_opt)
    least_cost = -1.0
    for i in range(n_opt):
        if options[i, OPT_JCT] <= bound and (least_cost < 0 or options[i, OPT_COST] < least_cost):
            least_cost = options[i, OPT_COST]
    best = -1
    for i in range(n_opt):
        o = options[i]
        if o[OPT_JCT] > bound or o[OPT_COST] > least_cost * (1.0 + COST_TIE_RTOL):
            continue
        if best < 0:
            best = i
            continue
        b = options[best]
        if o[OPT_TAU] < b[OPT_TAU] or (o[OPT_TAU] == b[OPT_TAU] and (
                o[OPT_GPUS] > b[OPT_GPUS]
                or (o[OPT_GPUS] == b[OPT_GPUS] and o[OPT_Q] > b[OPT_Q]))):
            best = i
    return best


@plain_kernel
def waits(options, n_now, n_opt, kept_bound, now_bound):
    """Whether the first ``n_opt`` options make the job wait whatever options join them: one
    after t (from index n_now) within ``kept_bound``, a floor on the final slack bound, that
    costs less, with the tie margin, than every option at t within ``now_bound``, a ceiling on
    it. The final least cost is then at most its cost, and no option at t is among the
    cheapest kept."""
    least_now = np.inf
    for i in range(n_now):
        if options[i, OPT_JCT] <= now_bound:
            least_now = min(least_now, options[i, OPT_COST])
    for i in range(n_now, n_opt):
        if options[i, OPT_JCT] <= kept_bound and \
                options[i, OPT_COST] * (1.0 + COST_TIE_RTOL) < least_now:
            return True
    return False


@plain_kernel(inline=True)
def _certify(j, t, run, job, cluster, work, place, allocate, trial, c, n_now, n_opt,
             kept_bound, now_bound):
    """Keep a lane hold (:func:`~bacepipe.core.projection.lane_hold`) for job j, which waits at
    t: a projected option p that every younger job of its lane (equal constants, arrival a′ >=
    a) keeps and that costs less, with the tie margin, than every option at t such a job may
    keep. Its JCTs are j's less a′ − a, so an option's slack (1 + ε)·least JCT − JCT falls by
    ε·(a′ − a): p is kept while its slack stays above a margin far beyond rounding, and an
    option at t whose slack for j is below −margin is kept by none of them. Costs do not
    depend on the arrival. Then each such job's cheapest kept options are projected (their τ
    is after t: the caller's ``early``), so it waits. The bounds are j's (``waits``: a floor
    for p, a ceiling for the options at t)."""
    margin = 1e-9 * (1.0 + run.plan_slack) * (t + now_bound) if n_opt > 0 else 0.0
    least_now = np.inf  # every option at t (none pruned: a younger job prunes differently)
    kstar, previous = int(job[C_KSTAR]), -1
    for qi in range(len(QUOTAS)):
        k = target(kstar, QUOTAS[qi])
        if k == previous:
            continue
        previous = k
        _, g, iter_s, cost_s, _ = _memo_offer(t, run, job, k, qi, cluster, work, place,
                                              allocate, trial, c, work.plan_stamp.shape[0] - 1,
                                              work.version[0], False, (cluster, 0, -1, 0))
        if g > 0 and now_bound - (t + job[C_ITERS] * iter_s - job[C_ARRIVAL_S]) > -margin:
            least_now = min(least_now, cost_s)
    slack = np.inf if n_opt == 0 else -np.inf  # no option at all: none for them either
    for i in range(n_now, n_opt):
        o = work.options[i]
        if kept_bound - o[OPT_JCT] >= margin and \
                o[OPT_COST] * (1.0 + COST_TIE_RTOL) < least_now:
            slack = max(slack, kept_bound - o[OPT_JCT])
    if slack > -np.inf:
        keep_lane_hold(work, c, j, t, slack, margin)


@start_rule_kernel
def kernel(j, t, run, cluster, work, place, allocate, out):
    job = run.jobs[j]
    trial = Decision(work.trial_path, work.trial_alloc)
    least = work.least[least_exec_table(run, j, work)]
    # Jobs of one offer class get the same offer and t_iter on one state, and under flat prices
    # the same cost per second of it: a class's offers are memoized per target, on the live
    # state per version (the last row) and on each projected epoch per chain (as
    # wait_if_faster's, see Work.version).
    c = -1 if run.time_of_use else offer_class(run, work, j)
    live_row = work.plan_stamp.shape[0] - 1
    free = cluster.free.sum()
    # No option yet: the bound (1 + ε) · inf keeps everything.
    n_now, least_jct, _ = _add_options(t, run, job, least, cluster, free, work, place, allocate,
                                       trial, 0, np.inf, True, c, live_row, work.version[0],
                                       (cluster, 0, -1, 0))
    n_opt = n_now
    order = work.order
    n_running = running_by_end(run, order)
    # Once an epoch's JCT with ℓ_j (SPEC §15: no placement runs faster) exceeds the bound of the
    # options so far, no later epoch's option can be kept.
    never = least_exec_s(job, least, int(job[C_KSTAR]))
    chain, shift = work.version[3], work.version[4]
    projected = Cluster(work.free, work.resid, work.price, cluster.speed)
    # The scan may stop early (``waits``) once every epoch is after t: later epochs' JCTs are at
    # least their first τ + ℓ_j's, so the least JCT is at least ``floor``.
    early = n_running > 0 and run.end_s[order[0]] > t
    floor, stopped = np.inf, False
    i, released = 0, -1
    while i < n_running and not stopped:
        tau = run.end_s[order[i]]
        if tau + never - job[C_ARRIVAL_S] > (1.0 + run.plan_slack) * least_jct:
            break
        i_next = epoch_end(run, order, n_running, i)
        for q in range(i, i_next):  # the epoch's free GPUs, exactly (integers)
            free += run.path_gpus[order[q], :run.plen[order[q]]].sum()
        row = shift + i
        n_opt, least_jct, released = _add_options(
            tau, run, job, least, projected, free, work, place, allocate, trial, n_opt, least_jct,
            False, c if row < live_row else -1, row, chain, (cluster, n_running, released, i_next))
        i = i_next
        if early and n_opt > n_now:
            floor = least_jct
            if i < n_running:
                floor = min(floor, run.end_s[order[i]] + never - job[C_ARRIVAL_S])
            stopped = waits(work.options, n_now, n_opt, (1.0 + run.plan_slack) * floor,
                            (1.0 + run.plan_slack) * least_jct)
    if not stopped:
        floor = least_jct
    best = -1 if stopped or n_opt == 0 else choose(work.options, n_opt, run.plan_slack)
    if best < 0 or work.options[best, OPT_TAU] != t:
        if c >= 0 and run.plan_slack > 0.0 and (early or n_running == 0):
            _certify(j, t, run, job, cluster, work, place, allocate, trial, c, n_now, n_opt,
                     (1.0 + run.plan_slack) * floor, (1.0 + run.plan_slack) * least_jct)
        return 0, 0
    # a projected epoch at t itself, or a memoized option: place on the real state
    if best >= n_now or work.options[best, OPT_PLEN] == 0:
        return offer(place, run, job, int(work.options[best, OPT_Q]), cluster, work, allocate,
                     out)
    plen = int(work.options[best, OPT_PLEN])
    for p in range(plen):
        r = work.now_path[best, p]
        out.path[p] = r
        out.alloc[r] = work.now_alloc[best, r]
    return plen, int(work.options[best, OPT_GPUS])


def twin(j, t, sim, place, allocate):
    jm = sim.models[j]
    arrival = sim.arrivals[j]
    epochs = [(t, sim.state, sim.prices_at(t))]
    if sim.running:
        epochs += [(tau, state.copy(), prices) for tau, state, prices in projections(sim)]
    options = []  # (tau, jct, cost, gpus, k, placement)
    for tau, state, prices in epochs:
        targets = []
        for q in QUOTAS:
            k = (jm.k_star * q + 9) // 10
            if k not in targets:
                targets.append(k)
        for k in targets:
            placed = offer_twin(sim, j, k, state, prices, place, allocate)
            if placed is None:
                continue
            exec_s = sim.execution_s(j, *placed)
            options.append((tau, tau + exec_s - arrival, sim.cost(*placed, tau, exec_s),
                            sum(placed[1]), k, placed))
    if not options:
        return None
    bound = (1.0 + sim.plan_slack) * min(o[1] for o in options)
    kept = [o for o in options if o[1] <= bound]
    least_cost = min(o[2] for o in kept)
    cheapest = [o for o in kept if o[2] <= least_cost * (1.0 + COST_TIE_RTOL)]
    tau, _, _, _, _, placed = min(cheapest, key=lambda o: (o[0], -o[3], -o[4]))
    return placed if tau == t else None
