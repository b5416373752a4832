"""Cost-Min allocator (SPEC §7, Alg. 2): one GPU per path region, then the surplus to path regions
in ascending price (ties: path order), each up to its free GPUs."""

from bacepipe.policies.api import allocator_kernel


@allocator_kernel
def kernel(path, plen, g, cluster, alloc):
    # Alg. 2 leaves a prefix of the path's regions in ascending price (ties: path order) full, one
    # region part-full and the rest at 1 GPU. The same split is found from the other end: every
    # region full, then the GPUs over g taken back from the dearest (ties: later in the path).
    # A path grown to K overshoots by less than its last region's GPUs, so that is one or two
    # scans where topping up takes one per region.
    free, price = cluster.free, cluster.price
    over = -g
    for p in range(plen):
        r = path[p]
        alloc[r] = max(free[r], 1)  # at least one GPU per region, as Alg. 2 starts
        over += alloc[r]
    while over > 0:
        dearest = -1
        for p in range(plen):
            r = path[p]
            if alloc[r] == free[r] and free[r] > 1 and (dearest < 0 or price[r] >= price[dearest]):
                dearest = r
        if dearest < 0:
            break
        n = min(free[dearest] - 1, over)
        alloc[dearest] -= n
        over -= n


def twin(path, g, free, prices):
    counts = [1] * len(path)
    remaining = g - len(path)
    for pos in sorted(range(len(path)), key=lambda pos: (prices[path[pos]], pos)):
        if remaining == 0:
            break
        add = min(free[path[pos]] - 1, remaining)
        counts[pos] += add
        remaining -= add
    return counts
