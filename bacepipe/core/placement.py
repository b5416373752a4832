"""Numba kernels the placement policies share (SPEC §7, Alg. 1): region choice, path growth.

The policies themselves are parts under :mod:`bacepipe.policies`. Regions with no free GPUs are
invisible; ties go to the lower region index. The plain-Python twins are in
:mod:`bacepipe.sim.model`.
"""

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.core.model import C_FLOP, hop_feasible

# Alg. 1 line 20: a relative difference below this counts as a tie (SPEC §1); SPEC §16 compares
# compute with the same tolerance.
PRICE_TIE_RTOL = 1e-12


@kernel(inline=True)
def compute_order(a, b):
    """1 if compute ``a`` is more than ``b``, −1 if less, 0 if equal within PRICE_TIE_RTOL."""
    if abs(a - b) <= PRICE_TIE_RTOL * max(a, b):
        return 0
    return 1 if a > b else -1


@kernel(inline=True)
def hop_bandwidth(resid, v, u):
    """Residual bandwidth of the hop v→u: the smaller direction (SPEC §7)."""
    return min(resid[v, u], resid[u, v])


@kernel(inline=True)
def average_price(path, plen, alloc, price_now, g):
    """Σ n_r·P_r / g in path order (Alg. 1 line 19)."""
    total = 0.0
    for p in range(plen):
        total += alloc[path[p]] * price_now[path[p]]
    return total / g


# --------------------------------------------------------------------------- path growth


@kernel(inline=True)
def visible_regions(free, out):
    """Write the regions with free GPUs into ``out`` in index order; returns how many. (A busy
    fleet of many regions has few: path growth then scans only those.)"""
    n = 0
    for r in range(free.shape[0]):
        if free[r] > 0:
            out[n] = r
            n += 1
    return n


@kernel(inline=True)
def grow_path(const, kstar, start, cluster, path, scratch, n_visible):
    """Alg. 1 lines 7–17 from one start, aiming at ``kstar`` GPUs: append the visible unvisited
    region on the widest hop from the tail while the bottleneck stays feasible for the GPUs
    gathered (with W on the fastest GPU of the tentative path, SPEC §16). Returns (plen, g).

    ``scratch.by_price[:n_visible]`` are the regions with free GPUs, in index order
    (:func:`visible_regions`); ``start`` is a position in that list. The hop bandwidths from a
    tail are read from ``scratch.hop`` (by position), whose row is filled on first use: the
    caller clears ``scratch.hop_ready[:n_visible]`` for each new state, and growths from many
    starts on one state (Pathfinder) then read each row once from the strided residual matrix.
    """
    free, resid, speed = cluster.free, cluster.resid, cluster.speed
    visible, in_path, hop, ready = scratch.by_price, scratch.in_path, scratch.hop, scratch.hop_ready
    for i in range(n_visible):
        in_path[i] = False
    tail = start
    path[0] = visible[start]
    in_path[start] = True
    plen = 1
    g = min(free[path[0]], kstar)
    bottleneck = np.inf
    fastest = speed[path[0]]
    while plen < n_visible and g < kstar:
        row = hop[tail]
        if not ready[tail]:
            for i in range(n_visible):
                row[i] = hop_bandwidth(resid, visible[tail], visible[i])
            ready[tail] = True
        best, best_bw = -1, -np.inf
        for i in range(n_visible):
            if not in_path[i] and row[i] > best_bw:
                best, best_bw = i, row[i]
        if best < 0:
            break
        u = visible[best]
        tentative = min(bottleneck, best_bw)
        g_next = min(g + free[u], kstar)
        fastest_next = max(fastest, speed[u])
        if not hop_feasible(const, tentative, g_next, const[C_FLOP] / fastest_next):
            break
        path[plen] = u
        in_path[best] = True
        tail = best
        plen += 1
        bottleneck, g, fastest = tentative, g_next, fastest_next
    return plen, g


@kernel(inline=True)
def visible_with_hops(free, scratch):
    """:func:`visible_regions` into ``scratch.by_price``, with the hop rows of
    :func:`grow_path` marked stale; returns how many."""
    n_visible = visible_regions(free, scratch.by_price)
    ready = scratch.hop_ready
    for i in range(n_visible):
        ready[i] = False
    return n_visible


@kernel(inline=True)
def cheapest_visible(free, price_now, min_free):
    """Index of the cheapest region with at least ``min_free`` free GPUs (−1 if none)."""
    best = -1
    for r in range(free.shape[0]):
        if free[r] >= min_free and free[r] > 0 and (best < 0 or price_now[r] < price_now[best]):
            best = r
    return best


@kernel
def largest_visible(cluster):
    """Index of the region with the most free compute G_r·s_r — the most free GPUs without GPU
    types (SPEC §7, §16; ties within PRICE_TIE_RTOL: cheaper, then lower index); −1 if none."""
    free, speed, price = cluster.free, cluster.speed, cluster.price
    best = -1
    for r in range(free.shape[0]):
        if free[r] == 0:
            continue
        if best < 0:
            best = r
            continue
        order = compute_order(free[r] * speed[r], free[best] * speed[best])
        if order > 0 or (order == 0 and price[r] < price[best]):
            best = r
    return best


@kernel
def place_in_region(r, k, cluster, allocate, out):
    """A placement on region r alone (LCF, LDF): min(K, G_r) GPUs, allocated; (0, 0) when r is −1
    (no region with a free GPU)."""
    if r < 0:
        return 0, 0
    out.path[0] = r
    g = min(k, cluster.free[r])
    allocate(out.path, 1, g, cluster, out.alloc)
    return 1, g

