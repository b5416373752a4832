"""Numba kernels the placement policies share (SPEC §7, Alg. 1): region choice, path growth.

The policies themselves are parts under :mod:`bacepipe.policies`. Regions with no free GPUs are
invisible; ties go to the lower region index. The plain-Python twins are in
:mod:`bacepipe.sim.reference`.
"""

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.core.model import C_FLOP, hop_feasible

# Alg. 1 line 20: a relative difference below this counts as a tie (SPEC §1); SPEC §16 compares
# compute with the same tolerance.
PRICE_TIE_RTOL = 1e-12


@kernel
def compute_order(a, b):
    """1 if compute ``a`` is more than ``b``, −1 if less, 0 if equal within PRICE_TIE_RTOL."""
    if abs(a - b) <= PRICE_TIE_RTOL * max(a, b):
        return 0
    return 1 if a > b else -1


@kernel
def hop_bandwidth(resid, v, u):
    """Residual bandwidth of the hop v→u: the smaller direction (SPEC §7)."""
    return min(resid[v, u], resid[u, v])


@kernel
def average_price(path, plen, alloc, price_now, g):
    """Σ n_r·P_r / g in path order (Alg. 1 line 19)."""
    total = 0.0
    for p in range(plen):
        total += alloc[path[p]] * price_now[path[p]]
    return total / g


# --------------------------------------------------------------------------- path growth


@kernel
def visible_regions(free, out):
    """Write the regions with free GPUs into ``out`` in index order; returns how many. (A busy
    fleet of many regions has few: path growth then scans only those.)"""
    n = 0
    for r in range(free.shape[0]):
        if free[r] > 0:
            out[n] = r
            n += 1
    return n


@kernel
def grow_path(const, kstar, start, cluster, path, in_path, visible, n_visible):
    """Alg. 1 lines 7–17 from one start, aiming at ``kstar`` GPUs: append the visible unvisited
    region on the widest hop from the tail while the bottleneck stays feasible for the GPUs
    gathered (with W on the fastest GPU of the tentative path, SPEC §16). ``visible[:n_visible]``
    are the regions with free GPUs, in index order (:func:`visible_regions`). Returns (plen, g)."""
    free, resid, speed = cluster.free, cluster.resid, cluster.speed
    for i in range(n_visible):
        in_path[visible[i]] = False
    path[0] = start
    in_path[start] = True
    plen = 1
    g = min(free[start], kstar)
    bottleneck = np.inf
    fastest = speed[start]
    while plen < n_visible and g < kstar:
        tail = path[plen - 1]
        best, best_bw = -1, -np.inf
        for i in range(n_visible):
            u = visible[i]
            if not in_path[u]:
                bw = hop_bandwidth(resid, tail, u)
                if bw > best_bw:
                    best, best_bw = u, bw
        if best < 0:
            break
        tentative = min(bottleneck, best_bw)
        g_next = min(g + free[best], kstar)
        fastest_next = max(fastest, speed[best])
        if not hop_feasible(const, tentative, g_next, const[C_FLOP] / fastest_next):
            break
        path[plen] = best
        in_path[best] = True
        plen += 1
        bottleneck, g, fastest = tentative, g_next, fastest_next
    return plen, g


@kernel
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

