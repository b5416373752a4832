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
import json, resource, sys
from bacepipe.sweep.config import validate
from bacepipe.sweep.engine import run_point
settings = validate({"topologies": int(sys.argv[1]), "results_dir": sys.argv[2],
                     "progress": False})
report = run_point(settings)
print(json.dumps({
    "wall_s": report.wall_s,
    "parent_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "largest_worker_max_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, nargs="+", default=[10_000, 100_000])
    args = p.parse_args()
    header("peak memory of a sweep point (fresh process per size)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.topologies:
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), f"{tmp}/t{n}"],
                                 check=True, capture_output=True, text=True)
            rows.append({"topologies": n, **json.loads(out.stdout.strip().splitlines()[-1])})
    table(rows)


if __name__ == "__main__":
    main()
