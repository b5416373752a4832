"""CR-LDF placement (SPEC §7): start at the region with the most free GPUs (ties: cheaper, then
index), then Alg. 1 lines 9–17 from that single start (append the unvisited region with free GPUs
on the widest hop from the tail; stop at the first infeasible hop)."""

from bacepipe.core.placement import grow_path, largest_visible, visible_with_hops
from bacepipe.policies.api import placement_kernel
from bacepipe.sim.model import grow_path as grow_path_twin
from bacepipe.sim.model import largest


@placement_kernel
def kernel(job, k, cluster, scratch, allocate, out):
    start = largest_visible(cluster)
    if start < 0:
        return 0, 0
    n_visible = visible_with_hops(cluster.free, scratch)
    position = 0  # of the start among the visible regions (index order)
    while scratch.by_price[position] != start:
        position += 1
    plen, g = grow_path(job, k, position, cluster, out.path, scratch, n_visible)
    allocate(out.path, plen, g, cluster, out.alloc)
    return plen, g


def twin(state, jm, k, prices, allocate):
    start = largest(state, prices)
    if start is None:
        return None
    path, g = grow_path_twin(state, jm, k, start)
    return path, allocate(path, g, state.free, prices)
