"""Peak memory (max RSS) of one sweep point, parent and workers, at growing topology counts:
it must stay flat — one chunk per worker in flight, results streamed to Parquet; and the memory
one simulation of the trace case (256 regions, Poisson arrivals, ``benchmarks/scaling.py``) adds,
at growing job counts: it must grow as O(J + R²).

    python benchmarks/memory.py [--topologies 10000 100000] [--trace-jobs 1000 ... 100000]
        [--trace-scheduler ldf] [--trace-load 0.9]
"""

import argparse
import json
import subprocess
import sys
import tempfile

from _common import header, table
from scaling import TRACE_REGIONS, busy_rate_per_h

CHILD = """
import json, resource, sys, threading, time
import psutil
from bacepipe.sweep.config import validate
from bacepipe.sweep.engine import run_point

# loky keeps its workers alive after the run, so RUSAGE_CHILDREN never sees them: sample the
# process tree instead.
peak_worker, done = [0], threading.Event()
def sample():
    me = psutil.Process()
    while not done.is_set():
        for child in me.children(recursive=True):
            try:
                peak_worker[0] = max(peak_worker[0], child.memory_info().rss)
            except psutil.Error:
                pass
        time.sleep(0.05)
threading.Thread(target=sample, daemon=True).start()
settings = validate({"topologies": int(sys.argv[1]), "results_dir": sys.argv[2],
                     "progress": False, "chunk_size": int(sys.argv[3])})
report = run_point(settings)
done.set()
print(json.dumps({
    "wall_s": report.wall_s,
    "parent_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "largest_worker_rss_mb": peak_worker[0] / 2**20,
}))
"""


TRACE_CHILD = """
import json, sys, threading
import psutil
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
n, regions, rate, name = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def batch(jobs):
    return generate_batch("random", 0, range(1), num_regions=regions, num_jobs=jobs,
                          arrivals="poisson", arrival_rate_per_h=rate)
simulate_batch(batch(100), (name,))  # compile and load the kernels first
me = psutil.Process()
before_inputs = me.memory_info().rss
inputs = batch(n)
before = me.memory_info().rss
# The process's max RSS may be the compiler's: sample the RSS while the simulation runs.
peak, done = [before], threading.Event()
def sample():
    while not done.wait(0.002):
        peak[0] = max(peak[0], me.memory_info().rss)
sampler = threading.Thread(target=sample)
sampler.start()
result = simulate_batch(inputs, (name,))
done.set()
sampler.join()
peak = max(peak[0], me.memory_info().rss)  # the result is still held
print(json.dumps({"inputs_mb": (before - before_inputs) / 2**20,
                  "simulation_mb": (peak - before) / 2**20,
                  "simulation_bytes_per_job": (peak - before) / n,
                  "path_width": result.path.shape[-1]}))
"""


def _trace(jobs, scheduler: str, load: float) -> list[dict]:
    """What one trace simulation adds to the process's peak memory (fresh process per size)."""
    rate = busy_rate_per_h(load)
    rows = []
    for n in jobs:
        out = subprocess.run([sys.executable, "-c", TRACE_CHILD, str(n), str(TRACE_REGIONS),
                              str(rate), scheduler],
                             check=True, capture_output=True, text=True)
        rows.append({"regions": TRACE_REGIONS, "jobs": n, "scheduler": scheduler,
                     **json.loads(out.stdout.strip().splitlines()[-1])})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--chunk-size", type=int, default=500)
    p.add_argument("--trace-jobs", type=int, nargs="*", default=[1_000, 10_000, 100_000],
                   help="job counts of the trace case (none: skip it)")
    p.add_argument("--trace-scheduler", default="ldf")
    p.add_argument("--trace-load", type=float, default=0.9)
    args = p.parse_args()
    header("peak memory of a sweep point (fresh process per size)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.topologies:
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), f"{tmp}/t{n}",
                                  str(args.chunk_size)],
                                 check=True, capture_output=True, text=True)
            measured = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append({"topologies": n, "chunk_size": args.chunk_size, **measured})
    table(rows)
    if args.trace_jobs:
        print("# one simulation of the trace case: memory it adds to the process (max RSS)")
        table(_trace(args.trace_jobs, args.trace_scheduler, args.trace_load))


if __name__ == "__main__":
    main()
