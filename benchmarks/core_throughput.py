"""Simulations per second of the batched numba core vs the plain-Python twin, on the same
scenarios in one run (paper setting: 6 regions, 8 jobs, every scheduler), after compilation.

    python benchmarks/core_throughput.py [--topologies 20000] [--twin-topologies 100]
"""

import argparse

from _common import header, table, timer

import bacepipe
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.sim.reference import simulate_reference


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, default=20_000)
    p.add_argument("--twin-topologies", type=int, default=100)
    p.add_argument("--extensions", action="store_true",
                   help="switch on latency (geo), GPU memory, time-of-use prices and arrivals")
    args = p.parse_args()
    options = dict(latency="geo", memory_model="adam_mixed", price_profile="business",
                   arrivals="poisson", arrival_rate_per_h=0.5) if args.extensions else {}
    header("core throughput: batched numba core vs plain-Python twin" +
           (" (extensions on)" if args.extensions else ""))
    schedulers = bacepipe.SCHEDULERS
    batch = generate_batch("random", 0, range(args.topologies), **options)
    simulate_batch(generate_batch("random", 0, range(2), **options), schedulers)  # compile
    with timer() as core_s:
        simulate_batch(batch, schedulers)
    scenarios = [batch.scenario(i) for i in range(args.twin_topologies)]
    with timer() as twin_s:
        for scenario in scenarios:
            for scheduler in schedulers:
                try:
                    simulate_reference(scenario, scheduler)
                except bacepipe.InputError:
                    pass  # the memory model can make a job unplaceable; both stop there
    core_rate = args.topologies * len(schedulers) / core_s()
    twin_rate = args.twin_topologies * len(schedulers) / twin_s()
    table([
        {"implementation": "numba core (batched)", "simulations": args.topologies * 8,
         "seconds": core_s(), "sims_per_s": core_rate, "us_per_sim": 1e6 / core_rate},
        {"implementation": "plain-Python twin", "simulations": args.twin_topologies * 8,
         "seconds": twin_s(), "sims_per_s": twin_rate, "us_per_sim": 1e6 / twin_rate},
    ])
    print(f"speed-up: {core_rate / twin_rate:,.0f}x")


if __name__ == "__main__":
    main()
