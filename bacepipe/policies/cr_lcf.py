"""CR-LCF placement (SPEC §7): visit regions with free GPUs in ascending price; the first becomes
the path with g = min(G, K); each next region u is appended while g < K when the path's bottleneck
with the hop tail→u is feasible for g' = min(g + G_u, K) (Alg. 1 line 13); an infeasible u is
skipped. With GPU types (SPEC §16) the order is by price per unit of work and a hop is judged
with W on the fastest GPU of the tentative path."""

import numpy as np

from bacepipe.core.model import C_FLOP, hop_feasible
from bacepipe.core.placement import hop_bandwidth, visible_by_price
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.model import hop_feasible as hop_feasible_twin
from bacepipe.sim.model import path_work_s, visible


@placement_kernel
def kernel(job, k, cluster, scratch, allocate, out):
    free, by_price, path = cluster.free, scratch.by_price, out.path
    count = visible_by_price(free, cluster.price, scratch)
    if count == 0:
        return 0, 0
    path[0] = by_price[0]
    plen = 1
    g = min(free[by_price[0]], k)
    bottleneck = np.inf
    fastest = cluster.speed[by_price[0]]
    for i in range(1, count):
        if g >= k:
            break
        u = by_price[i]
        tentative = min(bottleneck, hop_bandwidth(cluster.resid, path[plen - 1], u))
        g_next = min(g + free[u], k)
        fastest_next = max(fastest, cluster.speed[u])
        if hop_feasible(job, tentative, g_next, job[C_FLOP] / fastest_next):
            path[plen] = u
            plen += 1
            bottleneck, g, fastest = tentative, g_next, fastest_next
    allocate(path, plen, g, cluster, out.alloc)
    return plen, g


def twin(state, jm, k, prices, allocate):
    regions = sorted(visible(state), key=lambda r: (prices[r], r))
    if not regions:
        return None
    path = [regions[0]]
    g = min(state.free[regions[0]], k)
    bottleneck = float("inf")
    for u in regions[1:]:
        if g >= k:
            break
        tentative = min(bottleneck, state.hop_gbps(path[-1], u))
        g_next = min(g + state.free[u], k)
        if hop_feasible_twin(jm, tentative, g_next, path_work_s(state, jm, path + [u])):
            path.append(u)
            bottleneck, g = tentative, g_next
    return path, allocate(path, g, state.free, prices)
