"""Plain-Python twin of the numba model (:mod:`bacepipe.core.model`,
:mod:`bacepipe.core.placement`), straight from SPEC: the job model (§2), prices and cost (§12),
the cluster state (§4) and what the placement twins share (§7: visible regions, path growth,
average price).

Everything is float64 Python arithmetic, in the order SPEC §10a fixes, so the numba kernels must
agree with it to floating-point rounding. Time is in seconds. The functions are public so that
the reference loop (:mod:`bacepipe.sim.reference`), the parts' twins and
:mod:`bacepipe.sim.invariants` share them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bacepipe.errors import InputError
from bacepipe.model.hardware import TOU_STEPPED_MAX_H, GpuType, Hardware
from bacepipe.model.scenario import Job, Region, Scenario

#: Relative tolerance of the average-price tie of Alg. 1 line 20 (SPEC §1).
PRICE_TIE_RTOL = 1e-12

#: A placement: the path (region indices in pipeline order) and GPUs per path region.
Placement = tuple[list[int], list[int]]
#: An allocator: (path, g, free GPUs per region, prices per region) -> GPUs per path region.
Allocator = Callable[[Sequence[int], int, Sequence[int], Sequence[float]], list[int]]


# --------------------------------------------------------------------------- job model (SPEC §2)


@dataclass(frozen=True)
class JobModel:
    """Per-job constants of SPEC §2 under one hardware and cluster.

    Attributes
    ----------
    micro_batches : M_j = batch_size / micro_batch_size.
    iterations : I_j = ceil(dataset_samples · epochs / batch_size).
    work_s : W_j, seconds of one micro-batch's forward pass on one GPU (of the reference type,
        SPEC §16).
    flop : the FLOP of that forward pass, 2 · params · micro_batch_size · seq_len.
    mem_bytes : 16 · params, the training state the memory model places (SPEC §12).
    overhead_s : stage_overhead_ms / 1000, seconds per stage and micro-batch.
    activation_bits : a_j = 8 · A_j, bits sent over one hop per micro-batch.
    intra_hop_s : a_j / (intra_region_gbps · 1e9), one hop between GPUs of a region, seconds.
    layers : the cap on pipeline stages.
    min_gpus : m_j of the memory model (SPEC §12); 1 without it.
    k_star : K*_j (Eq. 13).
    exec_1gpu_s : E_j(1) = I_j · t_iter(1 GPU), seconds (priority, Eq. 11).
    b_star_bps : b_j = b_j(K*_j), bit/s (priority, Eq. 10).
    """

    micro_batches: int
    iterations: int
    work_s: float
    flop: float
    mem_bytes: float
    overhead_s: float
    activation_bits: float
    intra_hop_s: float
    layers: int
    min_gpus: int
    k_star: int
    exec_1gpu_s: float
    b_star_bps: float


def t_comp(jm: JobModel, k: int) -> float:
    """Per-stage compute of a pipeline of k GPUs, seconds: W_j / k + stage_overhead (SPEC §2)."""
    return jm.work_s / k + jm.overhead_s


def min_bandwidth_bps(jm: JobModel, k: int) -> float:
    """b_j(k) = a_j / t_comp(k), bit/s: the bandwidth a k-GPU pipeline needs per hop (SPEC §2)."""
    return jm.activation_bits / t_comp(jm, k)


def hop_feasible(jm: JobModel, bandwidth_gbps: float, gpus: int,
                 work_s: float | None = None) -> bool:
    """Alg. 1 line 13 in the form of SPEC §10a: bw > 0 and a_j / (bw · 1e9) ≤ W / g + overhead,
    W = ``work_s`` (SPEC §16: on the fastest GPU of the tentative path), else W_j."""
    work = jm.work_s if work_s is None else work_s
    return bandwidth_gbps > 0 and \
        jm.activation_bits / (bandwidth_gbps * 1e9) <= work / gpus + jm.overhead_s


def gpu_speed(gpu: GpuType, hardware: Hardware) -> float:
    """s = TFLOP/s · 1e12 · mfu, FLOP/s of one GPU (SPEC §16)."""
    return gpu.tflops * 1e12 * hardware.mfu


def speeds(scenario: Scenario) -> list[float]:
    """s_r of every region (SPEC §16)."""
    return [gpu_speed(scenario.gpu_type_of(r), scenario.hardware) for r in scenario.regions]


def stage_time_s(jm: JobModel, scenario: Scenario, path: Sequence[int],
                 counts: Sequence[int]) -> float:
    """Per-stage compute of a placement: t_comp(L) (SPEC §2), or with GPU types the balanced
    t_comp(p) = flop / Σ n_r · s_r + overhead (SPEC §16)."""
    if not scenario.hetero:
        return t_comp(jm, sum(counts))
    s = speeds(scenario)
    compute = 0.0
    for r, n in zip(path, counts, strict=True):
        compute += n * s[r]
    return jm.flop / compute + jm.overhead_s


def reservation_gbps(jm: JobModel, scenario: Scenario, path: Sequence[int],
                     counts: Sequence[int]) -> float:
    """b_j(p) / 1e9: what a placement reserves on both directions of each hop (SPEC §4, §16)."""
    return jm.activation_bits / stage_time_s(jm, scenario, path, counts) / 1e9


def holds_model(scenario: Scenario, jm: JobModel, path: Sequence[int],
                counts: Sequence[int]) -> bool:
    """The memory rule: L >= m_j (SPEC §12), or with GPU types every path region holds its share,
    Σ_q n_q·(s_q / s_r) >= 16·params / (0.9·mem_r) (SPEC §16)."""
    if scenario.memory_model == "none" or not scenario.hetero:
        return sum(counts) >= jm.min_gpus
    s = speeds(scenario)
    for r in path:
        share = sum(n * (s[q] / s[r]) for q, n in zip(path, counts, strict=True))
        mem = scenario.gpu_type_of(scenario.regions[r]).mem_gb
        if share < jm.mem_bytes / (0.9 * mem * 1e9):
            return False
    return True


def reference_hardware(scenario: Scenario) -> Hardware:
    """The hardware with the reference GPU type (SPEC §16): the fastest type on a region with
    GPUs, the largest memory among equally fast ones. K*, priorities, the memory minimum and the
    lower bound use it; without types it is the scenario's hardware."""
    if not scenario.hetero:
        return scenario.hardware
    types = [scenario.gpu_type_of(r) for r in scenario.regions if r.gpus > 0]
    best = max(types, key=lambda t: (t.tflops, t.mem_gb))
    return replace(scenario.hardware, gpu_tflops=best.tflops, gpu_mem_gb=best.mem_gb)


def job_models(scenario: Scenario) -> list[JobModel]:
    """Every job's constants under the scenario's reference hardware and cluster."""
    total = sum(r.gpus for r in scenario.regions)
    hardware = reference_hardware(scenario)
    return [job_model(job, hardware, total, scenario.memory_model, i)
            for i, job in enumerate(scenario.jobs)]


def _eq1(jm: JobModel, fill_hops_s: Sequence[float], transfer_hops_s: Sequence[float],
         stages: int, comp: float | None = None) -> float:
    """Eq. 1: t_iter = 2 · (Σ_s t_comm(s) + L · t_comp(L) + (M_j − 1) · Δ), seconds.

    ``fill_hops_s`` are the hop times of the fill sum (with latency, SPEC §12) and
    ``transfer_hops_s`` the a_j / bandwidth terms; Δ = max(t_comp(L), max transfer) (0 if none).
    ``comp`` replaces t_comp(L) (SPEC §16's t_comp(p)).
    """
    fill = 0.0
    for hop in fill_hops_s:  # repeated addition in path order (SPEC §10a)
        fill += hop
    if comp is None:
        comp = t_comp(jm, stages)
    delta = comp
    for hop in transfer_hops_s:
        delta = max(delta, hop)
    return 2.0 * (fill + stages * comp + (jm.micro_batches - 1) * delta)


def single_region_time_s(jm: JobModel, k: int) -> float:
    """t_iter of k GPUs in one region: k − 1 intra-region hops (Eq. 1, used by Eq. 13)."""
    hops = [jm.intra_hop_s] * (k - 1)
    return _eq1(jm, hops, hops, k)


def iteration_time_s(jm: JobModel, scenario: Scenario, path: Sequence[int],
                     counts: Sequence[int]) -> float:
    """t_iter of a placement (Eq. 1), seconds.

    Hops in path order: each region's (n_r − 1) intra-region hops, then the hop to the next region,
    a_j / (min(B[u,v], B[v,u]) · 1e9) on the NOMINAL links, plus latency_ms[u][v] / 1000 in the
    fill sum when the scenario has latency (SPEC §12).
    """
    fill, transfer = [], []
    for pos, (u, n) in enumerate(zip(path, counts, strict=True)):
        for _ in range(n - 1):
            fill.append(jm.intra_hop_s)
            transfer.append(jm.intra_hop_s)
        if pos + 1 < len(path):
            v = path[pos + 1]
            bw = min(scenario.links_gbps[u][v], scenario.links_gbps[v][u])
            hop = jm.activation_bits / (bw * 1e9) if bw > 0 else math.inf
            transfer.append(hop)
            if scenario.latency_ms is not None:
                fill.append(scenario.latency_ms[u][v] / 1000 + hop)
            else:
                fill.append(hop)
    return _eq1(jm, fill, transfer, sum(counts), stage_time_s(jm, scenario, path, counts))


def memory_min_gpus(job: Job, hardware: Hardware) -> int:
    """m_j = ceil(16 · params_b·1e9 / (0.9 · gpu_mem_gb·1e9)) (SPEC §12, adam_mixed)."""
    return math.ceil(16 * (job.params_b * 1e9) / (0.9 * (hardware.gpu_mem_gb * 1e9)))


def job_model(job: Job, hardware: Hardware, total_gpus: int, memory_model: str = "none",
              index: int = 0) -> JobModel:
    """The constants of SPEC §2 and K*_j (Eq. 13) of job ``index``.

    K* = argmin over k in m_j..min(layers, total_gpus) of the single-region t_iter; strict ``<``
    keeps the smaller k on ties. Raises InputError ``jobs[index]`` when m_j > min(layers, total).
    """
    hw = hardware
    activation_bytes = hw.micro_batch_size * hw.seq_len * job.hidden * hw.bytes_per_element
    bits = 8 * activation_bytes
    flop = 2 * (job.params_b * 1e9) * hw.micro_batch_size * hw.seq_len
    jm = JobModel(
        micro_batches=job.batch_size // hw.micro_batch_size,
        iterations=math.ceil(job.dataset_samples * job.epochs / job.batch_size),
        work_s=flop / (hw.gpu_tflops * 1e12 * hw.mfu),
        flop=flop,
        mem_bytes=16 * (job.params_b * 1e9),
        overhead_s=hw.stage_overhead_ms / 1000,
        activation_bits=bits,
        intra_hop_s=bits / (hw.intra_region_gbps * 1e9),
        layers=job.layers,
        min_gpus=memory_min_gpus(job, hw) if memory_model == "adam_mixed" else 1,
        k_star=0, exec_1gpu_s=0.0, b_star_bps=0.0,
    )
    k_max = min(job.layers, total_gpus)
    if jm.min_gpus > k_max:
        raise InputError(f"jobs[{index}]", f"needs at least {jm.min_gpus} GPUs for its memory "
                         f"but at most {k_max} fit (min of layers and cluster GPUs)")
    k_star, best = jm.min_gpus, single_region_time_s(jm, jm.min_gpus)
    for k in range(jm.min_gpus + 1, k_max + 1):
        t = single_region_time_s(jm, k)
        if t < best:
            k_star, best = k, t
    return replace(jm, k_star=k_star, exec_1gpu_s=jm.iterations * single_region_time_s(jm, 1),
                   b_star_bps=min_bandwidth_bps(jm, k_star))


# --------------------------------------------------------------------------- prices and cost


def price_at(region: Region, t_s: float) -> float:
    """P_r(t), $/kWh: price · profile[floor(t_h + utc_offset_h) mod 24] with time-of-use (SPEC
    §12), else the plain price."""
    if region.price_profile is None:
        return region.price
    hour = math.floor(t_s / 3600 + region.utc_offset_h) % 24
    return region.price * region.price_profile[hour]


def price_integral(region: Region, start_s: float, end_s: float) -> float:
    """∫ P_r(t) dt over [start, end] in ($/kWh)·h, piecewise over the region's local clock hours.

    From a local midnight on, whole days are added at once (a day costs price · Σ profile), so a
    job of years takes as few steps as a job of days. A span over ``TOU_STEPPED_MAX_H`` hours (or
    not finite) costs the mean price: float64 loses the hour long before such a clock ends.
    """
    profile = region.price_profile or (1.0,) * 24
    t = start_s / 3600 + region.utc_offset_h  # local time, hours
    stop = end_s / 3600 + region.utc_offset_h
    if not stop - t <= TOU_STEPPED_MAX_H:
        return region.price * ((stop - t) * sum(profile) / 24)
    total = 0.0
    while t < stop:
        hour = math.floor(t)
        if t == hour and hour % 24 == 0 and stop - t >= 24:
            days = math.floor((stop - t) / 24)
            total += region.price * sum(profile) * days
            t += 24 * days
            continue
        step_end = min(hour + 1, stop)
        total += region.price * profile[hour % 24] * (step_end - t)
        t = step_end
    return total


def job_cost(scenario: Scenario, path: Sequence[int], counts: Sequence[int], start_s: float,
             exec_s: float) -> float:
    """C_j in $ (Eq. 4 with gpu_power_kw).

    Flat prices: (E / 3600) · (Σ_r n_r · P_r, path order) · gpu_power_kw. Time-of-use: gpu_power_kw
    · Σ_r n_r · ∫_start^{start+E} P_r(t) dt (hours). With GPU types (SPEC §16) each region's
    power: (E / 3600) · Σ_r n_r · P_r · power_r, or Σ_r n_r · power_r · ∫ P_r(t) dt.
    """
    if scenario.hetero:
        power = [scenario.gpu_type_of(scenario.regions[r]).power_kw for r in path]
    else:
        power = [1.0] * len(path)
    total = 0.0
    for r, n, kw in zip(path, counts, power, strict=True):
        region = scenario.regions[r]
        price = price_integral(region, start_s, start_s + exec_s) if scenario.time_of_use \
            else region.price
        total += n * price * kw
    if scenario.time_of_use:
        return total if scenario.hetero else scenario.hardware.gpu_power_kw * total
    return exec_s / 3600 * total * (1.0 if scenario.hetero else scenario.hardware.gpu_power_kw)


# --------------------------------------------------------------------------- cluster state (§4)


class ClusterState:
    """Residual GPUs ``free[r]`` and residual bandwidth ``residual[u][v]`` (Gbit/s), SPEC §4.

    ``users[u][v]`` counts running jobs holding a reservation on u→v: when it drops to 0 the
    residual is set back exactly to the nominal bandwidth, so rounding never accumulates.
    """

    def __init__(self, scenario: Scenario):
        self.nominal = [list(row) for row in scenario.links_gbps]
        self.speed = speeds(scenario)  # s_r, FLOP/s of one GPU (SPEC §16)
        self.free = [r.gpus for r in scenario.regions]
        self.residual = [list(row) for row in scenario.links_gbps]
        self.users = [[0] * len(row) for row in scenario.links_gbps]

    def copy(self) -> ClusterState:
        other = object.__new__(ClusterState)
        other.nominal, other.speed = self.nominal, self.speed
        other.free = list(self.free)
        other.residual = [list(row) for row in self.residual]
        other.users = [list(row) for row in self.users]
        return other

    def hop_gbps(self, u: int, v: int) -> float:
        """Residual bandwidth of a hop, min(R[u,v], R[v,u]) (SPEC §7)."""
        return min(self.residual[u][v], self.residual[v][u])

    def reserve(self, path: Sequence[int], counts: Sequence[int], gbps: float) -> None:
        for r, n in zip(path, counts, strict=True):
            self.free[r] -= n
        for u, v in zip(path[:-1], path[1:], strict=True):
            for a, b in ((u, v), (v, u)):
                self.residual[a][b] -= gbps
                self.users[a][b] += 1

    def release(self, path: Sequence[int], counts: Sequence[int], gbps: float) -> None:
        for r, n in zip(path, counts, strict=True):
            self.free[r] += n
        for u, v in zip(path[:-1], path[1:], strict=True):
            for a, b in ((u, v), (v, u)):
                self.residual[a][b] += gbps
                self.users[a][b] -= 1
                if self.users[a][b] == 0:
                    self.residual[a][b] = self.nominal[a][b]


# ------------------------------------------------------------------------ shared by policies (§7)


def visible(state: ClusterState) -> list[int]:
    """Regions with free GPUs; the others are invisible to every policy (SPEC §10a)."""
    return [r for r, g in enumerate(state.free) if g > 0]


def more_compute(a: float, b: float) -> int:
    """1 if compute a > b, −1 if a < b, 0 when equal within the relative 1e-12 of SPEC §16."""
    if abs(a - b) <= PRICE_TIE_RTOL * max(a, b):
        return 0
    return 1 if a > b else -1


def largest(state: ClusterState, prices: Sequence[float]) -> int | None:
    """The region with the most free compute G_r · s_r — the most free GPUs with one GPU type
    (ties within 1e-12: cheaper, then index); None if none is free."""
    best = None
    for r in visible(state):
        if best is None:
            best = r
            continue
        order = more_compute(state.free[r] * state.speed[r], state.free[best] * state.speed[best])
        if order > 0 or (order == 0 and prices[r] < prices[best]):
            best = r
    return best


def grow_path(state: ClusterState, jm: JobModel, k: int, start: int) -> tuple[list[int], int]:
    """Alg. 1 lines 7–17 from one start, aiming at k GPUs: append the unvisited region with free
    GPUs on the highest-residual hop from the tail (ties: lower index); stop at the first
    infeasible hop (judged with W on the fastest GPU of the tentative path, SPEC §16), when g = k,
    or when no candidate is left. Returns (path, g)."""
    path = [start]
    g = min(state.free[start], k)
    bottleneck = math.inf
    while len(path) < len(state.free) and g < k:
        best, best_gbps = -1, -math.inf
        for u in visible(state):
            if u not in path and state.hop_gbps(path[-1], u) > best_gbps:
                best, best_gbps = u, state.hop_gbps(path[-1], u)
        if best < 0:
            break
        tentative = min(bottleneck, best_gbps)
        g_next = min(g + state.free[best], k)
        if not hop_feasible(jm, tentative, g_next, path_work_s(state, jm, path + [best])):
            break
        path.append(best)
        bottleneck, g = tentative, g_next
    return path, g


def path_work_s(state: ClusterState, jm: JobModel, path: Sequence[int]) -> float:
    """W of one micro-batch on the fastest GPU of ``path`` (SPEC §16's conservative admission;
    W_j itself with one GPU type)."""
    return jm.flop / max(state.speed[r] for r in path)


def average_price(path: Sequence[int], counts: Sequence[int], prices: Sequence[float]) -> float:
    """Σ n_r · P_r / g, summed in path order (Alg. 1 line 19)."""
    total = 0.0
    for r, n in zip(path, counts, strict=True):
        total += n * prices[r]
    return total / sum(counts)
