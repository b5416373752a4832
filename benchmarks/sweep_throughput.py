"""End-to-end simulations per second of a sweep point (generation, simulation and Parquet
included; all cores), as ``python -m bacepipe.sweep topologies=N`` runs it, after compilation.

    python benchmarks/sweep_throughput.py [--topologies 1000 10000 100000] [--chunk-size 2000]
"""

import argparse
import tempfile

from _common import header, table

import bacepipe
from bacepipe.sweep.config import validate
from bacepipe.sweep.engine import run_point


def _run(topologies: int, chunk_size: int, results_dir: str, **extra) -> float:
    settings = validate({"topologies": topologies, "chunk_size": chunk_size,
                         "results_dir": results_dir, "progress": False, **extra})
    return run_point(settings).wall_s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--chunk-size", type=int, default=None,
                   help="topologies per chunk (default: the sweep's default)")
    p.add_argument("--extensions", action="store_true",
                   help="switch on latency (geo), GPU memory, time-of-use prices and arrivals")
    args = p.parse_args()
    extra = dict(latency="geo", memory_model="adam_mixed", price_profile="business",
                 arrivals="poisson", arrival_rate_per_h=0.5,
                 unplaceable="record") if args.extensions else {}
    if args.chunk_size:
        extra["chunk_size"] = args.chunk_size
    header("end-to-end sweep throughput (random, 6 regions, 8 jobs, 8 schedulers"
           + (", extensions on)" if args.extensions else ")"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        chunk = extra.pop("chunk_size", validate({}).chunk_size)
        # Load the kernel cache and start every worker (a chunk each), outside the timing.
        _run(chunk * validate({}).workers, chunk, f"{tmp}/warm", **extra)
        for n in args.topologies:
            seconds = _run(n, chunk, f"{tmp}/t{n}", **extra)
            sims = n * len(bacepipe.SCHEDULERS)
            rows.append({"topologies": n, "chunk_size": chunk, "simulations": sims,
                         "seconds": seconds, "sims_per_s": sims / seconds})
    table(rows)


if __name__ == "__main__":
    main()
