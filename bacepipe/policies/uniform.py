"""Uniform allocator (SPEC §7, the w/o Cost-Min ablation): n_r = min(G_r, x) with x the largest
integer such that Σ min(G_r, x) <= g, then one more GPU to each region with G_r > x in path order
until g are placed. When g is the path's free GPUs every region gets all of them (SPEC §10a)."""

from bacepipe.policies.api import allocator_kernel


@allocator_kernel
def kernel(path, plen, g, cluster, alloc):
    free = cluster.free
    most = 0
    for p in range(plen):
        most = max(most, free[path[p]])
    # Σ min(G_r, x) grows with x: bisect for the largest x in 1..most it keeps within g (the
    # twin's count upwards takes up to `most` sums, and regions hold up to 128 GPUs).
    x, top = 1, most
    while x < top:
        mid = (x + top + 1) // 2
        total = 0
        for p in range(plen):
            total += min(free[path[p]], mid)
        if total > g:
            top = mid - 1
        else:
            x = mid
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


def twin(path, g, free, prices):
    caps = [free[r] for r in path]
    x = 0
    while x < max(caps) and sum(min(c, x + 1) for c in caps) <= g:
        x += 1
    counts = [min(c, x) for c in caps]
    remaining = g - sum(counts)
    for pos, c in enumerate(caps):
        if remaining == 0:
            break
        if c > x:
            counts[pos] += 1
            remaining -= 1
    return counts
