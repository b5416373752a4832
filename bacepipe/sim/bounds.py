"""Plain-Python twin of :mod:`bacepipe.core.bounds`: SPEC §15's lower bound on the avg JCT.

LB = max(LB_solo, LB_area), both valid for every schedule of SPEC §15's class (so for every
scheduler):

- LB_solo = mean_j ℓ_j, ℓ_j = I_j · min over k in m_j..K*_j of Eq. 1 with every hop at the
  fastest rate of the scenario, r_max = max(intra_region_gbps, max_{u≠v} min(B[u,v], B[v,u])),
  and no latency. Any placement's hops are no faster and latency only adds, so E_j ≥ ℓ_j and
  every JCT ≥ ℓ_j.
- LB_area (only when every job arrives at 0, else 0): a_j = I_j · min_k k · t_iter(k) at r_max
  is the job's least GPU-seconds; the i-th job to finish cannot finish before the i smallest
  areas have been worked off by the N GPUs of the cluster, so
  LB_area = (1/J) · Σ_i (a_(1) + … + a_(i)) / N.
"""

from __future__ import annotations

from dataclasses import replace

from bacepipe.model.scenario import Scenario
from bacepipe.sim.model import job_model, reference_hardware, single_region_time_s


def fastest_hop_gbps(scenario: Scenario) -> float:
    """r_max, Gbit/s: the intra-region rate or the best pair min(B[u,v], B[v,u]), if faster."""
    links = scenario.links_gbps
    best = scenario.hardware.intra_region_gbps
    for u, row in enumerate(links):
        for v in range(len(row)):
            if u != v:
                best = max(best, min(links[u][v], links[v][u]))
    return best


def lower_bound_h(scenario: Scenario) -> float:
    """LB = max(LB_solo, LB_area) of SPEC §15, hours."""
    total = sum(r.gpus for r in scenario.regions)
    r_max = fastest_hop_gbps(scenario)
    solo, areas = [], []
    for j, job in enumerate(scenario.jobs):
        jm = job_model(job, reference_hardware(scenario), total, scenario.memory_model, j)
        # every hop at r_max is a single region whose GPUs talk at r_max
        fast = replace(jm, intra_hop_s=jm.activation_bits / (r_max * 1e9))
        ks = range(jm.min_gpus, jm.k_star + 1)
        solo.append(jm.iterations * min(single_region_time_s(fast, k) for k in ks))
        areas.append(jm.iterations * min(k * single_region_time_s(fast, k) for k in ks))
    n = len(scenario.jobs)
    lb_solo = sum(solo) / n
    lb_area = 0.0
    if all(job.arrival_h == 0 for job in scenario.jobs):
        prefix = 0.0
        for area in sorted(areas):
            prefix += area
            lb_area += prefix / total
        lb_area /= n
    return max(lb_solo, lb_area) / 3600
