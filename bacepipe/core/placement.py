"""Numba kernels of the placement policies and allocators (SPEC §7, Alg. 1 and 2).

Every policy reads the residual state (free GPUs per region, residual bandwidth matrix in Gbit/s,
prices at the decision time) and writes a path (region indices in pipeline order) and an
allocation (GPUs per region index, zero off the path). It returns the path length and the GPUs
placed (0: nothing). Regions with no free GPUs are invisible; ties go to the lower region index.
The plain-Python twins are in :mod:`bacepipe.sim.reference`.
"""

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.core.model import C_KSTAR, hop_feasible

# Placement and allocator codes, in the order of bacepipe.policies.PLACEMENTS / ALLOCATORS.
P_LCF, P_LDF, P_CR_LCF, P_CR_LDF, P_PATHFINDER = range(5)
A_FILL, A_COST_MIN, A_UNIFORM = range(3)

# Alg. 1 line 20: a relative difference below this counts as a tie (SPEC §1).
PRICE_TIE_RTOL = 1e-12


@kernel
def hop_bandwidth(resid, v, u):
    """Residual bandwidth of the hop v→u: the smaller direction (SPEC §7)."""
    return min(resid[v, u], resid[u, v])


# --------------------------------------------------------------------------- allocators


@kernel
def allocate(allocator, path, plen, g, free, price_now, alloc):
    """Spread g GPUs over the path (g >= plen, g <= its free GPUs) into ``alloc``."""
    for p in range(plen):
        alloc[path[p]] = 0
    if allocator == A_FILL:
        left = g
        for p in range(plen):
            r = path[p]
            n = min(free[r], left)
            alloc[r] = n
            left -= n
    elif allocator == A_COST_MIN:
        # Alg. 2: one GPU each, then the surplus to path regions by ascending price (path order
        # on ties), each up to its free GPUs. Selection by repeated minimum keeps ties stable.
        for p in range(plen):
            alloc[path[p]] = 1
        left = g - plen
        while left > 0:
            best = -1
            for p in range(plen):
                r = path[p]
                if alloc[r] == 1 and free[r] > 1 and (best < 0 or price_now[r] < price_now[best]):
                    best = r
            if best < 0:
                break
            # once topped up, alloc > 1 and the region is never chosen again
            n = min(free[best] - 1, left)
            alloc[best] += n
            left -= n
    else:
        # Uniform: the largest x with Σ min(G_r, x) <= g, then one more per region with G_r > x
        # in path order until g are placed (SPEC §7, §10a).
        x = 1
        most = 0
        for p in range(plen):
            most = max(most, free[path[p]])
        while x < most:
            total = 0
            for p in range(plen):
                total += min(free[path[p]], x + 1)
            if total > g:
                break
            x += 1
        placed = 0
        for p in range(plen):
            r = path[p]
            alloc[r] = min(free[r], x)
            placed += alloc[r]
        for p in range(plen):
            r = path[p]
            if placed == g:
                break
            if free[r] > x:
                alloc[r] += 1
                placed += 1


@kernel
def average_price(path, plen, alloc, price_now, g):
    """Σ n_r·P_r / g in path order (Alg. 1 line 19)."""
    total = 0.0
    for p in range(plen):
        total += alloc[path[p]] * price_now[path[p]]
    return total / g


# --------------------------------------------------------------------------- path growth


@kernel
def grow_path(const, start, free, resid, path, in_path):
    """Alg. 1 lines 7–17 from one start: append the visible unvisited region on the widest hop
    from the tail while the bottleneck stays feasible for the GPUs gathered. Returns (plen, g)."""
    kstar = int(const[C_KSTAR])
    n = free.shape[0]
    in_path[:] = False
    path[0] = start
    in_path[start] = True
    plen = 1
    g = min(free[start], kstar)
    bottleneck = np.inf
    while plen < n and g < kstar:
        tail = path[plen - 1]
        best, best_bw = -1, -np.inf
        for u in range(n):
            if not in_path[u] and free[u] > 0:
                bw = hop_bandwidth(resid, tail, u)
                if bw > best_bw:
                    best, best_bw = u, bw
        if best < 0:
            break
        tentative = min(bottleneck, best_bw)
        g_next = min(g + free[best], kstar)
        if not hop_feasible(const, tentative, g_next):
            break
        path[plen] = best
        in_path[best] = True
        plen += 1
        bottleneck, g = tentative, g_next
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
def largest_visible(free, price_now):
    """Index of the region with the most free GPUs (ties: cheaper, then lower index); −1 if none."""
    best = -1
    for r in range(free.shape[0]):
        if free[r] > 0 and (best < 0 or free[r] > free[best]
                            or (free[r] == free[best] and price_now[r] < price_now[best])):
            best = r
    return best


# --------------------------------------------------------------------------- policies


@kernel
def place(placement, allocator, const, free, resid, price_now, path, alloc, scratch_path,
          scratch_alloc, in_path, by_price):
    """Run one placement policy; writes ``path``/``alloc`` and returns (plen, g); g = 0: nothing.

    ``scratch_path``, ``scratch_alloc`` (int64[R]), ``in_path`` (bool[R]) and ``by_price``
    (int64[R]) are work arrays, so nothing is allocated here.
    """
    kstar = int(const[C_KSTAR])
    n = free.shape[0]
    if placement == P_LCF or placement == P_LDF:
        r = cheapest_visible(free, price_now, 1) if placement == P_LCF \
            else largest_visible(free, price_now)
        if r < 0:
            return 0, 0
        path[0] = r
        g = min(kstar, free[r])
        allocate(allocator, path, 1, g, free, price_now, alloc)
        return 1, g
    if placement == P_CR_LCF:
        count = 0
        for r in range(n):
            if free[r] > 0:
                # insertion by (price, index): stable for equal prices
                p = count
                while p > 0 and price_now[by_price[p - 1]] > price_now[r]:
                    by_price[p] = by_price[p - 1]
                    p -= 1
                by_price[p] = r
                count += 1
        if count == 0:
            return 0, 0
        path[0] = by_price[0]
        plen = 1
        g = min(free[by_price[0]], kstar)
        bottleneck = np.inf
        for i in range(1, count):
            if g >= kstar:
                break
            u = by_price[i]
            tentative = min(bottleneck, hop_bandwidth(resid, path[plen - 1], u))
            g_next = min(g + free[u], kstar)
            if hop_feasible(const, tentative, g_next):
                path[plen] = u
                plen += 1
                bottleneck, g = tentative, g_next
        allocate(allocator, path, plen, g, free, price_now, alloc)
        return plen, g
    if placement == P_CR_LDF:
        start = largest_visible(free, price_now)
        if start < 0:
            return 0, 0
        plen, g = grow_path(const, start, free, resid, path, in_path)
        allocate(allocator, path, plen, g, free, price_now, alloc)
        return plen, g
    # Pathfinder (Alg. 1). Phase 1: the cheapest region that fits K* alone.
    r = cheapest_visible(free, price_now, kstar)
    if r >= 0:
        path[0] = r
        allocate(allocator, path, 1, kstar, free, price_now, alloc)
        return 1, kstar
    # Phase 2: grow from every start; most GPUs wins, then the strictly lower average price.
    best_plen, best_g, best_price = 0, 0, np.inf
    for start in range(n):
        if free[start] == 0:
            continue
        plen, g = grow_path(const, start, free, resid, scratch_path, in_path)
        allocate(allocator, scratch_path, plen, g, free, price_now, scratch_alloc)
        avg = average_price(scratch_path, plen, scratch_alloc, price_now, g)
        if g > best_g or (g == best_g and avg < best_price - PRICE_TIE_RTOL * best_price):
            for p in range(best_plen):
                alloc[path[p]] = 0
            for p in range(plen):
                path[p] = scratch_path[p]
                alloc[scratch_path[p]] = scratch_alloc[scratch_path[p]]
            best_plen, best_g, best_price = plen, g, avg
    return best_plen, best_g
