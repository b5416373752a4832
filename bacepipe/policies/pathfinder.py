"""BACE-Pipe's Pathfinder (SPEC §7, Alg. 1). Phase 1: among regions with G_r >= K the cheapest
gets all K. Phase 2: from every start region with free GPUs (index order) grow a path as CR-LDF
does, allocate it, and keep the path with the most GPUs, ties to an average price Σ n_r·P_r / g
lower beyond a relative 1e-12 (the earlier candidate stays otherwise). With GPU types (SPEC §16)
prices are per unit of work and "most GPUs" is the most compute Σ n_r·s_r (equal within 1e-12:
a tie)."""

import numpy as np

from bacepipe.core.placement import (
    PRICE_TIE_RTOL,
    average_price,
    cheapest_visible,
    compute_order,
    gpus_on,
    grow_walk,
    visible_regions,
    walk_slot,
)
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.model import PRICE_TIE_RTOL as PRICE_TIE_RTOL_TWIN
from bacepipe.sim.model import average_price as average_price_twin
from bacepipe.sim.model import grow_path as grow_path_twin
from bacepipe.sim.model import more_compute, visible


@placement_kernel
def kernel(job, k, cluster, scratch, allocate, out):
    free = cluster.free
    r = cheapest_visible(free, cluster.price, k, scratch)
    if r >= 0:
        out.path[0] = r
        allocate(out.path, 1, k, cluster, out.alloc)
        return 1, k
    best_plen, best_g, best_compute, best_price = 0, 0, 0.0, np.inf
    path, alloc, speed = scratch.path, scratch.alloc, cluster.speed
    n_visible = visible_regions(free, scratch.by_price)
    slot = walk_slot(cluster, scratch, n_visible)
    for start in range(n_visible):
        plen, g, fastest = grow_walk(job, k, start, cluster, path, scratch, slot, n_visible)
        if compute_order(g * fastest * (1.0 + 1e-9), best_compute) < 0:
            continue  # however its g GPUs are spread (the contract), it computes less: exact
        allocate(path, plen, g, cluster, alloc)
        avg = average_price(path, plen, alloc, cluster.price, g)
        compute = 0.0
        for p in range(plen):
            compute += alloc[path[p]] * speed[path[p]]
        order = compute_order(compute, best_compute)
        if order > 0 or (order == 0 and avg < best_price - PRICE_TIE_RTOL * best_price):
            for p in range(plen):
                out.path[p] = path[p]
                out.alloc[path[p]] = alloc[path[p]]
            best_plen, best_g, best_compute, best_price = plen, g, compute, avg
            if plen == n_visible and g == gpus_on(path, plen, free):
                # Every free GPU: any other start gathers fewer (less compute) or these in
                # another order (the same compute and price but for rounding, far inside
                # PRICE_TIE_RTOL), and the earlier candidate stays on a tie.
                break
    return best_plen, best_g


def twin(state, jm, k, prices, allocate):
    roomy = [r for r in visible(state) if state.free[r] >= k]
    if roomy:
        r = min(roomy, key=lambda r: (prices[r], r))
        return [r], allocate([r], k, state.free, prices)
    best, compute_best, c_best = None, 0.0, float("inf")
    for start in visible(state):
        path, g = grow_path_twin(state, jm, k, start)
        counts = allocate(path, g, state.free, prices)
        c = average_price_twin(path, counts, prices)
        compute = 0.0
        for r, n in zip(path, counts, strict=True):
            compute += n * state.speed[r]
        order = more_compute(compute, compute_best)
        if order > 0 or (order == 0 and c < c_best - PRICE_TIE_RTOL_TWIN * c_best):
            best, compute_best, c_best = (path, counts), compute, c
    return best
