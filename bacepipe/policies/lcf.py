"""LCF placement (SPEC §7): the cheapest region with a free GPU (ties: lower index);
n = min(K, G_r)."""

from bacepipe.core.placement import cheapest_visible, place_in_region
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.model import visible


@placement_kernel
def kernel(job, k, cluster, scratch, allocate, out):
    r = cheapest_visible(cluster.free, cluster.price, 1, scratch)
    return place_in_region(r, k, cluster, allocate, out)


def twin(state, jm, k, prices, allocate):
    regions = visible(state)
    if not regions:
        return None
    r = min(regions, key=lambda r: (prices[r], r))
    return [r], allocate([r], min(k, state.free[r]), state.free, prices)
