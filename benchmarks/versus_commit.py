"""Time per simulation of this checkout against another commit, on the same scenarios in one run
(paper setting: 6 regions, 8 jobs, the eight schedulers of SPEC §7), each side in its own
process with its own numba cache, one thread, the best of several repeats of the process's CPU
time (robust to a busy machine: other processes' work is not counted, only their interference).

    python benchmarks/versus_commit.py REV [--topologies 5000] [--repeats 7]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import PAPER_PROBE, header, table, worktree

ROOT = Path(__file__).resolve().parents[1]
#: Run in each tree: prints the best seconds per simulation as JSON.
PROBE = PAPER_PROBE + """
best = float("inf")
for _ in range(repeats):
    start = time.process_time()
    simulate_batch(batch, names)
    best = min(best, time.process_time() - start)
print(json.dumps({"us_per_sim": best / (topologies * len(names)) * 1e6}))
"""


def _probe(tree: Path, cache: str, topologies: int, repeats: int) -> float:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", PROBE, str(tree), str(topologies), str(repeats)],
                         capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["us_per_sim"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rev", help="the commit to compare with (e.g. a tag or hash)")
    p.add_argument("--topologies", type=int, default=5000)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    header(f"this checkout vs {args.rev}: µs per simulation, one thread, best of {args.repeats}")
    with tempfile.TemporaryDirectory() as tmp, worktree(args.rev, Path(tmp) / "other") as other:
        rows = []
        for _ in range(2):  # alternate, so a busy spell hits both
            rows.append({"tree": args.rev, "us_per_sim": _probe(
                other, str(Path(tmp) / "cache-other"), args.topologies, args.repeats)})
            rows.append({"tree": "this checkout", "us_per_sim": _probe(
                ROOT, str(Path(tmp) / "cache-this"), args.topologies, args.repeats)})
    table(rows)
    this = min(r["us_per_sim"] for r in rows if r["tree"] == "this checkout")
    that = min(r["us_per_sim"] for r in rows if r["tree"] == args.rev)
    print(f"ratio this / {args.rev}: {this / that:.2f}")


if __name__ == "__main__":
    main()
