"""Greedy start rule (SPEC §5, §13 default): start on the offered placement unless it is nothing
(or below the memory minimum of SPEC §12)."""

from bacepipe.core.model import C_KSTAR
from bacepipe.core.projection import offer
from bacepipe.policies.api import start_rule_kernel
from bacepipe.sim.reference import offer as offer_twin

#: A held job stays held until the state or prices change: the offer is a function of them.
STATIC = True


@start_rule_kernel
def kernel(j, t, run, cluster, work, place, allocate, out):
    job = run.jobs[j]
    return offer(place, run, job, int(job[C_KSTAR]), cluster, work, allocate, out)


def twin(j, t, sim, place, allocate):
    return offer_twin(sim, j, sim.models[j].k_star, sim.state, sim.prices_at(t), place, allocate)
