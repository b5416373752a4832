"""Peak memory (max RSS) of one sweep point, parent and workers, at growing topology counts:
it must stay flat — one chunk per worker in flight, results streamed to Parquet.

    python benchmarks/memory.py [--topologies 10000 100000]
"""

import argparse
import json
import subprocess
import sys
import tempfile

from _common import header, table

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--chunk-size", type=int, default=500)
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


if __name__ == "__main__":
    main()
