"""Numba kernels the placement policies share (SPEC §7, Alg. 1): region choice, path growth.

The policies themselves are parts under :mod:`bacepipe.policies`. Regions with no free GPUs are
invisible; ties go to the lower region index. The plain-Python twins are in
:mod:`bacepipe.sim.model`.
"""

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.core.model import C_FLOP, hop_feasible
from bacepipe.core.structs import WALK_SLOTS

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


@kernel(inline=True)
def gpus_on(path, plen, free):
    """The free GPUs of the path's regions."""
    total = 0
    for p in range(plen):
        total += free[path[p]]
    return total


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
def next_hop(const, kstar, bottleneck, g, fastest, work_s, hop_gbps, free_u, speed_u):
    """Alg. 1 line 13 for appending a region of ``free_u`` GPUs of speed ``speed_u`` over a hop
    of ``hop_gbps`` to a path with ``bottleneck``, ``g`` GPUs, ``fastest`` speed and W on it
    ``work_s``: whether it stays feasible, and those four after it (W divided again only when
    the fastest speed changes: the same quotient)."""
    bottleneck_next = min(bottleneck, hop_gbps)
    g_next = min(g + free_u, kstar)
    fastest_next = max(fastest, speed_u)
    work_next = work_s if fastest_next == fastest else const[C_FLOP] / fastest_next
    return hop_feasible(const, bottleneck_next, g_next, work_next), bottleneck_next, g_next, \
        fastest_next, work_next


@kernel(inline=True)
def path_from(const, kstar, region, free, speed, path):
    """A path of ``region`` alone, aiming at ``kstar`` GPUs, into ``path``: (plen, g,
    bottleneck, fastest speed, W on it), as Alg. 1 line 7 starts a growth."""
    path[0] = region
    fastest = speed[region]
    return 1, min(free[region], kstar), np.inf, fastest, const[C_FLOP] / fastest


@kernel(inline=True)
def widest_unvisited(row, in_path, n_visible):
    """The position not ``in_path`` on the widest hop in ``row`` (the first on ties), and that
    hop's bandwidth; (−1, −inf) when every position is in the path."""
    best, best_bw = -1, -np.inf
    for i in range(n_visible):
        if not in_path[i] and row[i] > best_bw:
            best, best_bw = i, row[i]
    return best, best_bw


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
    in_path[start] = True
    plen, g, bottleneck, fastest, work_s = path_from(const, kstar, visible[start], free, speed,
                                                     path)
    while plen < n_visible and g < kstar:
        row = hop[tail]
        if not ready[tail]:
            for i in range(n_visible):
                row[i] = hop_bandwidth(resid, visible[tail], visible[i])
            ready[tail] = True
        best, best_bw = widest_unvisited(row, in_path, n_visible)
        if best < 0:
            break
        u = visible[best]
        feasible, bottleneck_next, g_next, fastest_next, work_next = next_hop(
            const, kstar, bottleneck, g, fastest, work_s, best_bw, free[u], speed[u])
        if not feasible:
            break
        path[plen] = u
        in_path[best] = True
        tail = best
        plen += 1
        bottleneck, g, fastest, work_s = bottleneck_next, g_next, fastest_next, work_next
    return plen, g


@kernel(inline=True)
def rank_hops(row, n_visible, rank):
    """Positions ``0..n_visible−1`` into ``rank``, widest hop in ``row`` first (ties: lower
    position first, as a scan keeping the first maximum picks)."""
    for i in range(n_visible):
        q = i
        while q > 0 and row[rank[q - 1]] < row[i]:
            rank[q] = rank[q - 1]
            q -= 1
        rank[q] = i


@kernel(inline=True)
def walk_slot(cluster, scratch, n_visible):
    """The slot of ``scratch``'s walk cache for this state: the one holding the same visible
    regions (``scratch.by_price[:n_visible]``) and the same hop bandwidths among them, else the
    least recently used one, refilled with them and its walks cleared.

    A walk (:func:`grow_walk`) reads nothing else of the state, so the walks of a slot serve
    every job and GPU target placed on an equal state — the offer classes of a queue, decided
    on the live state and on each projected one, and the states that recur."""
    visible, resid, regions = scratch.by_price, cluster.resid, scratch.walk_regions
    oldest, newest = 0, 0
    for slot in range(WALK_SLOTS):
        if regions[slot, 1] < regions[oldest, 1]:
            oldest = slot
        if regions[slot, 1] > regions[newest, 1]:
            newest = slot
    clock = regions[newest, 1] + 1
    for n in range(WALK_SLOTS):  # the last used first
        slot = (newest + n) % WALK_SLOTS
        same = regions[slot, 0] == n_visible
        for i in range(n_visible):
            if not same:
                break
            same = regions[slot, 2 + i] == visible[i]
        hop = scratch.walk_hop[slot]
        for u in range(n_visible):
            if not same:
                break
            for v in range(u + 1, n_visible):  # a hop's bandwidth is the same both ways
                if hop[u, v] != hop_bandwidth(resid, visible[u], visible[v]):
                    same = False
                    break
        if same:
            regions[slot, 1] = clock
            return slot
    slot = oldest
    regions[slot, 0], regions[slot, 1] = n_visible, clock
    hop = scratch.walk_hop[slot]
    for u in range(n_visible):
        regions[slot, 2 + u] = visible[u]
        scratch.walk_len[slot, u] = 0
        scratch.walk_scans[slot, u] = 0
        for v in range(n_visible):
            hop[u, v] = hop_bandwidth(resid, visible[u], visible[v])
    return slot


@kernel(inline=True)
def grow_walk(const, kstar, start, cluster, path, scratch, slot, n_visible):
    """:func:`grow_path` from position ``start`` on the state of walk-cache slot ``slot``
    (:func:`walk_slot`), with the same result: the regions a growth appends, widest hop from the
    tail first, do not depend on the job or its target, only where it stops does. So each start
    keeps its walk (``scratch.walk[slot, start, :walk_len]``, positions), extended only when a
    growth goes past its end, and a growth along it checks the stops alone. Returns (plen, g,
    the fastest GPU speed on the path)."""
    free, speed, in_path = cluster.free, cluster.speed, scratch.in_path
    visible, hop, walk = scratch.walk_regions[slot, 2:], scratch.walk_hop[slot], \
        scratch.walk[slot, start]
    n_walk = scratch.walk_len[slot, start]
    if n_walk == 0:
        walk[0], n_walk = start, 1
    marked = False  # in_path holds the walk (needed to extend it)
    tail = start
    plen, g, bottleneck, fastest, work_s = path_from(const, kstar, visible[start], free, speed,
                                                     path)
    while plen < n_visible and g < kstar:
        if plen == n_walk:
            if not marked:
                for i in range(n_visible):
                    in_path[i] = False
                for m in range(n_walk):
                    in_path[walk[m]] = True
                marked = True
            # Ranking a row costs about n_visible/4 scans of it: scan a row until it would
            # have paid for ranking, then rank it and read the ranking.
            scans, rank = scratch.walk_scans[slot, tail], scratch.walk_rank[slot, tail]
            if scans >= 0 and 4 * scans < n_visible:
                walk[n_walk] = widest_unvisited(hop[tail], in_path, n_visible)[0]
                scratch.walk_scans[slot, tail] = scans + 1
            else:
                if scans >= 0:
                    rank_hops(hop[tail], n_visible, rank)
                    scratch.walk_scans[slot, tail] = -1
                for q in range(n_visible):
                    if not in_path[rank[q]]:
                        walk[n_walk] = rank[q]
                        break
            in_path[walk[n_walk]] = True
            n_walk += 1
        best = walk[plen]
        u = visible[best]
        feasible, bottleneck_next, g_next, fastest_next, work_next = next_hop(
            const, kstar, bottleneck, g, fastest, work_s, hop[tail, best], free[u], speed[u])
        if not feasible:
            break
        path[plen] = u
        tail = best
        plen += 1
        bottleneck, g, fastest, work_s = bottleneck_next, g_next, fastest_next, work_next
    scratch.walk_len[slot, start] = n_walk
    return plen, g, fastest


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
def insert_by_price(price_now, order, count, r):
    """Insert region r into ``order[:count]``, kept by ascending price with ties in insertion
    order (regions inserted by index: ties by lower index)."""
    p = count
    while p > 0 and price_now[order[p - 1]] > price_now[r]:
        order[p] = order[p - 1]
        p -= 1
    order[p] = r


@kernel(inline=True)
def order_by_price(price_now, order):
    """The regions into ``order`` by ascending ``price_now``, ties by lower index (the order a
    scan keeping the first minimum visits them in)."""
    for r in range(price_now.shape[0]):
        insert_by_price(price_now, order, r, r)


@kernel(inline=True)
def visible_by_price(free, price_now, scratch):
    """The regions with free GPUs into ``scratch.by_price`` by ascending price (ties: lower
    index); returns how many. Read off ``scratch.price_order`` when the loop ordered the run's
    prices."""
    by_price, count = scratch.by_price, 0
    ordered = scratch.price_ready[0] != 0
    for i in range(free.shape[0]):
        r = scratch.price_order[i] if ordered else i
        if free[r] > 0:
            if ordered:
                by_price[count] = r
            else:
                insert_by_price(price_now, by_price, count, r)
            count += 1
    return count


@kernel(inline=True)
def cheapest_visible(free, price_now, min_free, scratch):
    """Index of the cheapest region with at least ``min_free`` free GPUs (ties: lower index; −1
    if none): the first such region of ``scratch.price_order`` when the loop ordered the run's
    prices (a busy fleet's cheapest roomy region is seldom far down it), else by a scan."""
    if scratch.price_ready[0] != 0:
        order = scratch.price_order
        for i in range(free.shape[0]):
            r = order[i]
            if free[r] >= min_free and free[r] > 0:
                return r
        return -1
    best = -1
    for r in range(free.shape[0]):
        if free[r] >= min_free and free[r] > 0 and (best < 0 or price_now[r] < price_now[best]):
            best = r
    return best


@kernel(inline=True)
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


@kernel(inline=True)
def place_in_region(r, k, cluster, allocate, out):
    """A placement on region r alone (LCF, LDF): min(K, G_r) GPUs, allocated; (0, 0) when r is −1
    (no region with a free GPU)."""
    if r < 0:
        return 0, 0
    out.path[0] = r
    g = min(k, cluster.free[r])
    allocate(out.path, 1, g, cluster, out.alloc)
    return 1, g

