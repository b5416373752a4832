"""End to end against the core, in one run: simulations per second of the command users type
(``python -m bacepipe.sweep ...``, a fresh process: imports, Hydra, workers, generation, the
simulation, Parquet, the summary) beside the batched core's warm rate on the same kind of batch,
and the peak memory of each command.

    python benchmarks/sweep_throughput.py [--topologies 10000 100000] [--core-topologies 20000]
        [--repeats 3] [--multirun]

Rows: the default point (random, 6 regions, 8 jobs) under the eight SPEC schedulers at each
``--topologies``; with ``--multirun``, the mission command
``python -m bacepipe.sweep -m bandwidth_scale=0.3,0.9,1.5`` (its defaults: 1,000 topologies ×
every built-in scheduler per point). Each command runs with a warm kernel cache (a first,
untimed run fills it) into a fresh results folder; the best of ``--repeats`` wall times counts.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import header, table

from bacepipe.policies import PAPER_SCHEDULERS, SCHEDULERS

ROOT = Path(__file__).resolve().parents[1]
#: In a child process: the best warm seconds of one simulate_batch call (argv: topologies).
CORE_PROBE = """
import sys, time
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.policies import PAPER_SCHEDULERS
batch = generate_batch("random", 0, range(int(sys.argv[1])))
simulate_batch(batch, PAPER_SCHEDULERS)
best = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    simulate_batch(batch, PAPER_SCHEDULERS)
    best = min(best, time.perf_counter() - start)
print(best)
"""


#: Runs the command (argv) and prints the peak resident kilobytes of it and its workers.
PEAK_PROBE = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _command(args: list[str], folder: Path) -> tuple[float, float]:
    """(wall seconds, peak resident MB of the command and its workers) of
    ``python -m bacepipe.sweep ARGS`` run in ``folder`` (created), its results in it."""
    folder.mkdir(parents=True)
    command = [sys.executable, "-m", "bacepipe.sweep", *args, f"results_dir={folder}/results",
               "progress=false"]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PEAK_PROBE, *command], check=True, cwd=folder,
                         capture_output=True, text=True)
    return time.perf_counter() - start, int(out.stdout.split()[-1]) / 1024


def _best(args: list[str], repeats: int, tmp: Path, name: str) -> tuple[float, float]:
    """The best wall time of ``repeats`` runs, and the largest peak memory."""
    runs = [_command(args, tmp / f"{name}-{r}") for r in range(repeats)]
    return min(w for w, _ in runs), max(m for _, m in runs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--core-topologies", type=int, default=20_000,
                   help="topologies of the core's batch (its warm rate)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each command (best counts)")
    p.add_argument("--multirun", action="store_true",
                   help="also time the mission command's 3-point multirun")
    args = p.parse_args()
    header("end to end (the whole command) against the core's warm rate")
    out = subprocess.run([sys.executable, "-c", CORE_PROBE, str(args.core_topologies),
                          str(args.repeats)], check=True, capture_output=True, text=True)
    core_rate = args.core_topologies * len(PAPER_SCHEDULERS) / float(out.stdout.split()[-1])
    names = f"schedulers=[{','.join(PAPER_SCHEDULERS)}]"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _command(["topologies=2", names], tmp / "warm")  # fills the kernel cache, untimed
        for n in args.topologies:
            wall, peak = _best([f"topologies={n}", names], args.repeats, tmp, f"t{n}")
            sims = n * len(PAPER_SCHEDULERS)
            rows.append({"command": f"topologies={n}", "simulations": sims, "seconds": wall,
                         "sims_per_s": sims / wall, "core_sims_per_s": core_rate,
                         "vs_core": sims / wall / core_rate, "peak_mb": peak})
        if args.multirun:
            wall, peak = _best(["-m", "bandwidth_scale=0.3,0.9,1.5"], args.repeats, tmp,
                               "mission")
            sims = 3 * 1000 * len(SCHEDULERS)
            rows.append({"command": "-m bandwidth_scale=0.3,0.9,1.5", "simulations": sims,
                         "seconds": wall, "sims_per_s": sims / wall,
                         "core_sims_per_s": core_rate, "vs_core": sims / wall / core_rate,
                         "peak_mb": peak})
    table(rows)


if __name__ == "__main__":
    main()
