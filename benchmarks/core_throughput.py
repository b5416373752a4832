"""Simulations per second of the batched numba core vs the plain-Python twin, on the same
scenarios in one run (paper setting: 6 regions, 8 jobs), after compilation; then the time per
simulation of each scheduler under each start rule (SPEC §13), batched one scheduler at a time.

    python benchmarks/core_throughput.py [--topologies 20000] [--twin-topologies 100]
        [--schedulers paper|all|name,name] [--extensions] [--per-scheduler] [--repeats 1]
        [--core-calls 1] [--allocator retain|default] [--processes N]

With ``--per-scheduler`` it also prints each scheduler's time per simulation over BACE-Pipe's
under the same start rule (issue 13's ≤ 5× for ``spt_plan``); ``NUMBA_NUM_THREADS=1`` times one
core, ``--repeats N`` keeps the best of N runs. Each row also gives the CPU time per simulation
in user code and in the operating system (all threads); ``--core-calls N`` times N calls of
the core in a row. ``--allocator default`` leaves the C library's allocator as it is; by default
freed memory is reused, as in the sweep's workers (:mod:`bacepipe.core.memory`).
``--processes N`` also times N processes at once, each running the core on one thread as the
sweep's loky workers do (the best of ``--core-calls`` calls each, started together).
"""

import argparse
import json
import os
import subprocess
import sys

from _common import header, table, timer, usage

import bacepipe
from bacepipe.core import simulate_batch
from bacepipe.core.memory import retain_freed_memory
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import START_RULES, Rules
from bacepipe.policies import PAPER_SCHEDULERS, SCHEDULER_PARTS
from bacepipe.sim.reference import simulate_reference

#: One process of ``--processes``: a sweep worker's core (argv: topologies, calls, allocator,
#: schedulers, generation options as JSON). Says "ready" once compiled, starts on a line of
#: stdin, prints its best call's seconds.
WORKER = """
import json, sys, time
from bacepipe.core import simulate_batch
from bacepipe.core.memory import retain_freed_memory
from bacepipe.model.generate import generate_batch
topologies, calls, allocator = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
names, options = tuple(sys.argv[4].split(",")), json.loads(sys.argv[5])
if allocator == "retain":
    retain_freed_memory()
batch = generate_batch("random", 0, range(topologies), **options)
simulate_batch(generate_batch("random", 0, range(2), **options), names)
print("ready", flush=True)
sys.stdin.readline()
best = float("inf")
for _ in range(calls):
    start = time.perf_counter()
    simulate_batch(batch, names)
    best = min(best, time.perf_counter() - start)
print(best, flush=True)
"""


def _processes(n: int, args, schedulers, options) -> list[dict]:
    """Rows of ``--processes``: each process's best call, all started together."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    argv = [sys.executable, "-c", WORKER, str(args.topologies), str(args.core_calls),
            args.allocator, ",".join(schedulers), json.dumps(options)]
    procs = [subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True) for _ in range(n)]
    for proc in procs:
        if proc.stdout.readline().strip() != "ready":
            for other in procs:  # the others would wait for a start that never comes
                other.kill()
            raise SystemExit(f"--processes: a worker failed (exit status {proc.wait()})")
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    simulations = args.topologies * len(schedulers)
    rows = []
    for i, proc in enumerate(procs):
        seconds = float(proc.communicate()[0])
        rows.append({"implementation": f"process {i + 1} of {n}, one thread",
                     "simulations": simulations, "seconds": seconds,
                     "sims_per_s": simulations / seconds,
                     "us_per_sim": 1e6 * seconds / simulations})
    return rows


def _schedulers(text: str) -> tuple[str, ...]:
    if text == "paper":
        return PAPER_SCHEDULERS
    return tuple(SCHEDULER_PARTS) if text == "all" else tuple(text.split(","))


def _timed(implementation: str, simulations: int, work) -> dict:
    """A row of the table: ``work()``'s wall time, and the process's CPU time in user code and
    in the kernel (all threads) per simulation. The kernel's share is mostly first touches of
    fresh memory pages (docs/performance.md). The user share includes numba's OpenMP
    workers spinning while they wait (for the other thread, or after a call)."""
    with usage() as used:
        work()
    wall, user, system = used()
    return {"implementation": implementation, "simulations": simulations, "seconds": wall,
            "sims_per_s": simulations / wall, "us_per_sim": 1e6 * wall / simulations,
            "user_us_per_sim": 1e6 * user / simulations,
            "sys_us_per_sim": 1e6 * system / simulations}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, default=20_000)
    p.add_argument("--twin-topologies", type=int, default=100)
    p.add_argument("--schedulers", default="paper",
                   help="paper (the eight of SPEC §7, default), all, or names with commas")
    p.add_argument("--extensions", action="store_true",
                   help="switch on latency (geo), GPU memory, time-of-use prices and arrivals")
    p.add_argument("--per-scheduler", action="store_true",
                   help="also time each scheduler alone under each start rule")
    p.add_argument("--repeats", type=int, default=1,
                   help="with --per-scheduler: the best of this many runs per scheduler")
    p.add_argument("--core-calls", type=int, default=1,
                   help="time this many calls of the core in a row (the first one counts for "
                        "the speed-up): a later call reuses the memory pages the one before freed")
    p.add_argument("--gpu-mix", default="none", choices=("none", "cloud"),
                   help="cloud: a mixed fleet (SPEC §16) on the same topologies")
    p.add_argument("--allocator", default="retain", choices=("retain", "default"),
                   help="retain (default): reuse freed memory, as the sweep's workers do "
                        "(bacepipe.core.memory); default: the C library's own settings")
    p.add_argument("--processes", type=int, default=0,
                   help="also time this many one-thread processes at once (the sweep's workers)")
    args = p.parse_args()
    if args.core_calls < 1:
        p.error("--core-calls: must be at least 1")
    if args.processes < 0:
        p.error("--processes: must be at least 0")
    options = dict(latency="geo", memory_model="adam_mixed", price_profile="business",
                   arrivals="poisson", arrival_rate_per_h=0.5) if args.extensions else {}
    options["gpu_mix"] = args.gpu_mix
    if args.allocator == "retain":
        retain_freed_memory()
    header("core throughput: batched numba core vs plain-Python twin" +
           f" (allocator: {args.allocator})" + (" (extensions on)" if args.extensions else "") +
           (f" (gpu_mix={args.gpu_mix})" if args.gpu_mix != "none" else ""))
    schedulers = _schedulers(args.schedulers)
    batch = generate_batch("random", 0, range(args.topologies), **options)
    simulate_batch(generate_batch("random", 0, range(2), **options), schedulers)  # compile
    core_sims, twin_sims = args.topologies * len(schedulers), args.twin_topologies * len(schedulers)
    rows = [_timed(f"numba core (batched){', call ' + str(call + 1) if call else ''}",
                   core_sims, lambda: simulate_batch(batch, schedulers))
            for call in range(args.core_calls)]
    scenarios = [batch.scenario(i) for i in range(args.twin_topologies)]

    def twin() -> None:
        for scenario in scenarios:
            for scheduler in schedulers:
                try:
                    simulate_reference(scenario, scheduler)
                except bacepipe.InputError:
                    pass  # the memory model can make a job unplaceable; both stop there

    rows.append(_timed("plain-Python twin", twin_sims, twin))
    table(rows)
    print(f"speed-up: {rows[0]['sims_per_s'] / rows[-1]['sims_per_s']:,.0f}x")
    if args.processes:
        table(_processes(args.processes, args, schedulers, options))
    if args.per_scheduler:
        rows = []
        for rule in START_RULES:
            rules = Rules(start_rule=rule)
            timed = {}
            for name in schedulers:
                best = float("inf")
                for _ in range(args.repeats):
                    with timer() as seconds:
                        simulate_batch(batch, (name,), rules)
                    best = min(best, seconds())
                timed[name] = 1e6 * best / args.topologies
            for name, us in timed.items():
                row = {"start_rule": rule, "scheduler": name, "us_per_sim": us}
                if "bace_pipe" in timed:
                    row["over_bace_pipe"] = us / timed["bace_pipe"]
                rows.append(row)
        table(rows)


if __name__ == "__main__":
    main()
