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


@kernel
def single_region_iter_time(const, k):
    """Eq. 1 for k GPUs in one region: k − 1 intra-region hops summed one by one."""
    h = const[C_INTRA_S]
    comm = 0.0
    for _ in range(k - 1):
        comm += h
    tc = t_comp(const, k)
    delta = max(tc, h) if k > 1 else tc
    return 2.0 * (comm + k * tc + (const[C_MICRO] - 1.0) * delta)


@kernel
def placement_iter_time(const, path, plen, alloc, links, latency_s, tc):
    """Eq. 1 of a placement whose stages take ``tc`` s (t_comp(L), or SPEC §16's t_comp(p)): hops
    in path order (a region's inner hops, then the hop onwards).

    An inter-region hop u→v moves a / min(B[u,v], B[v,u]) (nominal) plus its latency (SPEC §12);
    Δ takes the transfer part only.
    """
    h = const[C_INTRA_S]
    comm = 0.0
    slowest = 0.0
    total = 0
    for p in range(plen):
        r = path[p]
        n = alloc[r]
        total += n
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


@kernel
def job_constants(hw, ref, params_b, layers, hidden, batch_size, samples, epochs, arrival_h,
                  total_gpus, memory_on, out):
    """Fill ``out`` (float64[J, N_CONST]) with every per-job constant of SPEC §2 (and §12 memory).

    ``ref`` is (TFLOP/s, memory GB) of the reference GPU type (SPEC §16: the fastest present; the
    hardware's own values without types). Returns the index of the first job whose minimum GPU
    count exceeds min(layers, total GPUs), or −1. K* is the argmin of single-region Eq. 1 over k
    in m..min(layers, total GPUs), the smaller k on ties; m = 1 unless the memory model is on.
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
        best_k, best_t = kmin, np.inf
        h = c[C_INTRA_S]
        comm = 0.0
        for _ in range(kmin - 1):
            comm += h
        for k in range(kmin, kmax + 1):
            tc = t_comp(c, k)
            delta = max(tc, h) if k > 1 else tc
            t = 2.0 * (comm + k * tc + (c[C_MICRO] - 1.0) * delta)
            if t < best_t:
                best_k, best_t = k, t
            comm += h
        c[C_KSTAR] = best_k
        c[C_BSTAR] = c[C_ACT_BITS] / t_comp(c, best_k)
        c[C_E1] = c[C_ITERS] * single_region_iter_time(c, 1)
    return -1


@kernel
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
