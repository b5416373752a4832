"""Numba kernels of the job model (SPEC §2): per-job constants, K*, Eq. 1, feasibility, cost.

Each has a plain-Python twin in :mod:`bacepipe.sim.model`; tests compare the two.
Hardware arrays follow :data:`bacepipe.model.hardware.HARDWARE_FIELDS`.
"""

import math

import numpy as np

from bacepipe.core.jit import kernel
from bacepipe.model.hardware import TOU_STEPPED_MAX_H

# Positions in the hardware array.
HW_SEQ_LEN, HW_MBS, HW_BYTES, HW_TFLOPS, HW_MFU, HW_OVERHEAD_MS, HW_INTRA_GBPS, HW_POWER_KW, \
    HW_MEM_GB = range(9)

# Columns of the per-job constants array (float64[J, N_CONST]). C_WORK is W_j on one GPU of the
# reference (fastest) type, C_FLOP the work of one micro-batch's forward pass and C_MEM_BYTES the
# memory the model's training state needs, 16 · params (SPEC §12, §16).
C_MICRO, C_ITERS, C_WORK, C_ACT_BITS, C_INTRA_S, C_OVERHEAD_S, C_KSTAR, C_MIN_GPUS, C_BSTAR, \
    C_E1, C_LAYERS, C_ARRIVAL_S, C_FLOP, C_MEM_BYTES = range(14)
N_CONST = 14


@kernel
def t_comp(const, g):
    """Per-stage compute time of one micro-batch on a pipeline of g GPUs, s (SPEC §2)."""
    return const[C_WORK] / g + const[C_OVERHEAD_S]


@kernel
def gpu_speed(tflops, mfu):
    """s = tflops·1e12·mfu, FLOP/s of one GPU (SPEC §16), in the order W_j divides by."""
    return tflops * 1e12 * mfu


@kernel
def hop_feasible(const, bandwidth_gbps, g, work_s):
    """Alg. 1 line 13 in SPEC §10a's form: a / (bandwidth·1e9) <= work_s / g + overhead,
    bandwidth > 0. ``work_s`` is W on one GPU of the fastest type on the tentative path
    (SPEC §16; ``const[C_WORK]`` when every region has one type)."""
    return bandwidth_gbps > 0.0 and \
        const[C_ACT_BITS] / (bandwidth_gbps * 1e9) <= work_s / g + const[C_OVERHEAD_S]


@kernel(inline=True)
def hops_summed(h, n):
    """``h`` added ``n`` times one by one, as Eq. 1 sums a region's hops."""
    comm = 0.0
    for _ in range(n):
        comm += h
    return comm


@kernel(inline=True)
def one_region_iter_s(const, k, comm):
    """Eq. 1 for k GPUs in one region whose k − 1 inner hops sum to ``comm``
    (:func:`hops_summed`)."""
    h = const[C_INTRA_S]
    tc = t_comp(const, k)
    delta = max(tc, h) if k > 1 else tc
    return 2.0 * (comm + k * tc + (const[C_MICRO] - 1.0) * delta)


@kernel
def single_region_iter_time(const, k):
    """Eq. 1 for k GPUs in one region: k − 1 intra-region hops summed one by one."""
    return one_region_iter_s(const, k, hops_summed(const[C_INTRA_S], k - 1))


@kernel(inline=True)
def placement_iter_time(const, path, plen, alloc, links, latency_s, tc, hop_sums):
    """Eq. 1 of a placement whose stages take ``tc`` s (t_comp(L), or SPEC §16's t_comp(p)): hops
    in path order (a region's inner hops, then the hop onwards).

    An inter-region hop u→v moves a / min(B[u,v], B[v,u]) (nominal) plus its latency (SPEC §12);
    Δ takes the transfer part only. The first region's inner hops are summed from 0, so their
    sum is read from ``hop_sums`` when it has the job's row (:func:`intra_hop_sum`).
    """
    h = const[C_INTRA_S]
    comm = 0.0
    slowest = 0.0
    total = 0
    for p in range(plen):
        r = path[p]
        n = alloc[r]
        total += n
        if p == 0:
            comm = intra_hop_sum(hop_sums, h, n - 1)
        else:
            for _ in range(n - 1):
                comm += h
        if n > 1 and h > slowest:
            slowest = h
        if p + 1 < plen:
            u = path[p + 1]
            transfer = const[C_ACT_BITS] / (min(links[r, u], links[u, r]) * 1e9)
            comm += latency_s[r, u] + transfer
            if transfer > slowest:
                slowest = transfer
    return 2.0 * (comm + total * tc + (const[C_MICRO] - 1.0) * max(tc, slowest))


@kernel(inline=True)
def intra_hop_sum(hop_sums, h, m):
    """h added m times to 0.0, one by one (the hop sum of Eq. 1 in one region of m + 1 GPUs):
    ``hop_sums[i, 1 + m]`` of the row i whose key ``hop_sums[i, 0]`` is h, when there is one
    (:func:`fill_hop_sums` adds the same way), else added here."""
    i = _hop_row(hop_sums, h) if 0 <= m < hop_sums.shape[1] - 1 else -1
    if i >= 0:
        return hop_sums[i, 1 + m]
    comm = 0.0
    for _ in range(m):
        comm += h
    return comm


@kernel
def fill_hop_sums(hop_sums, const):
    """Make ``hop_sums`` (float64[H, K + 1]) hold a row per distinct intra-region hop time of the
    jobs ``const`` (at most H; a job beyond them adds its hops itself): key h, then h added
    0..K − 1 times. Rows that already serve every job are kept (the models of a batch repeat
    across its topologies), else the rows are made afresh."""
    n_rows, width = hop_sums.shape
    for j in range(const.shape[0]):
        if _hop_row(hop_sums, const[j, C_INTRA_S]) < 0:
            break
    else:
        return
    hop_sums[:, 0] = np.nan
    used = 0
    for j in range(const.shape[0]):
        h = const[j, C_INTRA_S]
        if used < n_rows and _hop_row(hop_sums, h) < 0:
            row = hop_sums[used]
            row[0] = h
            comm = 0.0
            for m in range(width - 1):
                row[1 + m] = comm
                comm += h
            used += 1


@kernel(inline=True)
def _hop_row(hop_sums, h):
    """The row of ``hop_sums`` keyed h, or −1."""
    for i in range(hop_sums.shape[0]):
        if hop_sums[i, 0] == h:
            return i
    return -1


#: Columns of a row of :func:`job_constants`' memo: what the K* search reads, and its K*.
N_KSTAR_MEMO = 7


@kernel
def job_constants(hw, ref, params_b, layers, hidden, batch_size, samples, epochs, arrival_h,
                  total_gpus, memory_on, out, memo=None):
    """Fill ``out`` (float64[J, N_CONST]) with every per-job constant of SPEC §2 (and §12 memory).

    ``ref`` is (TFLOP/s, memory GB) of the reference GPU type (SPEC §16: the fastest present; the
    hardware's own values without types). Returns the index of the first job whose minimum GPU
    count exceeds min(layers, total GPUs), or −1. K* is the argmin of single-region Eq. 1 over k
    in m..min(layers, total GPUs), the smaller k on ties; m = 1 unless the memory model is on.

    ``memo`` (float64[J, N_KSTAR_MEMO], NaN when empty), if given, keeps per job what its K*
    search read (W, overhead, hop time, micro-batches, m, the top k) and the K* found: a job
    whose row reads the same (the next topology's, typically: the models repeat) skips the
    O(layers) search, the same K* bit for bit.
    """
    for j in range(params_b.shape[0]):
        c = out[j]
        c[C_MICRO] = batch_size[j] // hw[HW_MBS]
        c[C_ITERS] = math.ceil(samples[j] * epochs[j] / batch_size[j])
        c[C_FLOP] = 2.0 * params_b[j] * 1e9 * hw[HW_MBS] * hw[HW_SEQ_LEN]
        c[C_WORK] = c[C_FLOP] / gpu_speed(ref[0], hw[HW_MFU])
        c[C_MEM_BYTES] = 16.0 * params_b[j] * 1e9
        c[C_ACT_BITS] = 8.0 * (hw[HW_MBS] * hw[HW_SEQ_LEN] * hidden[j] * hw[HW_BYTES])
        c[C_INTRA_S] = c[C_ACT_BITS] / (hw[HW_INTRA_GBPS] * 1e9)
        c[C_OVERHEAD_S] = hw[HW_OVERHEAD_MS] / 1000.0
        c[C_LAYERS] = layers[j]
        c[C_ARRIVAL_S] = arrival_h[j] * 3600.0
        kmax = min(layers[j], total_gpus)
        kmin = 1
        if memory_on:
            kmin = math.ceil(16.0 * params_b[j] * 1e9 / (0.9 * ref[1] * 1e9))
            if kmin > kmax:
                return j
        c[C_MIN_GPUS] = kmin
        if memo is not None:
            m = memo[j]
            if m[0] == c[C_WORK] and m[1] == c[C_OVERHEAD_S] and m[2] == c[C_INTRA_S] \
                    and m[3] == c[C_MICRO] and m[4] == kmin and m[5] == kmax:
                best_k = int(m[6])
            else:
                best_k = _k_star(c, kmin, kmax)
                m[0], m[1], m[2], m[3], m[4], m[5], m[6] = \
                    c[C_WORK], c[C_OVERHEAD_S], c[C_INTRA_S], c[C_MICRO], kmin, kmax, best_k
        else:
            best_k = _k_star(c, kmin, kmax)
        c[C_KSTAR] = best_k
        c[C_BSTAR] = c[C_ACT_BITS] / t_comp(c, best_k)
        c[C_E1] = c[C_ITERS] * single_region_iter_time(c, 1)
    return -1


@kernel(inline=True)
def _k_star(c, kmin, kmax):
    """Eq. 13: the k in kmin..kmax with the least single-region t_iter (the first on ties), its
    hop sum grown one hop per k (the repeated additions of single_region_iter_time)."""
    best_k, best_t = kmin, np.inf
    h = c[C_INTRA_S]
    comm = hops_summed(h, kmin - 1)
    for k in range(kmin, kmax + 1):
        t = one_region_iter_s(c, k, comm)
        if t < best_t:
            best_k, best_t = k, t
        comm += h
    return best_k


@kernel(inline=True)
def price_at(price, profile, utc_offset_h, time_of_use, t_s, out):
    """Every region's price at time t (SPEC §12): price · profile[floor(t_h + offset) mod 24]."""
    for r in range(price.shape[0]):
        if time_of_use:
            hour = math.floor(t_s / 3600.0 + utc_offset_h[r]) % 24
            out[r] = price[r] * profile[r, hour]
        else:
            out[r] = price[r]


@kernel
def tou_energy_price(price, profile, offset_h, start_s, end_s):
    """∫ price(t) dt over [start, end] in $·h/kWh for one region, local clock hour by hour.

    Whole days are added at once (24 hours sum to the profile's total), so a job of years costs no
    more than three days of steps; a span over :data:`TOU_STEPPED_MAX_H` (or not finite) costs
    the mean price.
    """
    x = start_s / 3600.0 + offset_h
    x_end = end_s / 3600.0 + offset_h
    if not x_end - x <= TOU_STEPPED_MAX_H:
        return price * ((x_end - x) * profile.sum() / 24.0)
    total = 0.0
    hour = math.floor(x)
    while x < x_end:  # up to the first local midnight
        nxt = min(hour + 1.0, x_end)
        total += (nxt - x) * profile[hour % 24]
        x = nxt
        hour += 1
        if hour % 24 == 0:
            break
    days = math.floor((x_end - x) / 24.0)
    if days > 0:
        total += days * profile.sum()
        x += days * 24.0
        hour = math.floor(x)
    while x < x_end:
        nxt = min(hour + 1.0, x_end)
        total += (nxt - x) * profile[hour % 24]
        x = nxt
        hour += 1
    return price * total
