"""Instructions per simulation of the paper setting (6 regions, 8 jobs, the eight schedulers of
SPEC §7), counted by valgrind's cachegrind: a measure of the core's work that, unlike its time,
does not move with the machine's load, so changes smaller than the timing noise show.

Each tree runs in its own numba cache, compiled for the ``haswell`` target (valgrind has no
AVX-512, and a fixed target counts alike on any x86-64 machine), with one thread, the serial
kernel, a fixed hash seed and a single-threaded BLAS (a spinning pool thread would be counted).
A process simulating the batch twice minus one simulating it once is one call's count: the
core's, the per-call Python (~0.1 % at 2,000 topologies) included. Branches and mispredictions
are cachegrind's model of a simple predictor, not the CPU's. Needs `valgrind`; ~4 minutes per
tree (the compile), ~1 more per 1,000 topologies.

    python benchmarks/instruction_count.py [REV] [--topologies 2000]

(REV: also count a commit, in a ``git worktree``, and print the ratio.)
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import PAPER_PROBE, header, table, worktree

ROOT = Path(__file__).resolve().parents[1]
#: argv: root, topologies, calls of the batch to count (after PAPER_PROBE's warm-up).
PROBE = PAPER_PROBE + """
import bacepipe.core.entry as entry
entry.simulate_batch_kernel = entry.simulate_batch_serial  # no thread pool to count
for _ in range(repeats):
    simulate_batch(batch, names)
"""
N_SCHEDULERS = 8
#: cachegrind's summary columns with --cache-sim=no --branch-sim=yes.
COLUMNS = ("instructions", "cond_branches", "cond_mispredicts", "indirect_branches",
           "indirect_mispredicts")


def _counts(tree: Path, cache: str, topologies: int, calls: int, out: str | None) -> list[int]:
    """cachegrind's summary of a probe process (``out`` None: run it outside valgrind)."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=cache,
               NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="+sse2", PYTHONHASHSEED="0",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-c", PROBE, str(tree), str(topologies), str(calls)]
    if out is None:
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        return []
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=yes",
                    f"--cachegrind-out-file={out}", *cmd], env=env, check=True,
                   capture_output=True)
    with open(out) as fh:
        summary = next(line for line in fh if line.startswith("summary:"))
    return [int(v) for v in summary.split()[1:]]


def _per_simulation(tree: Path, tmp: str, name: str, topologies: int) -> dict:
    cache = str(Path(tmp) / f"cache-{name}")
    _counts(tree, cache, 2, 1, None)  # compile both kernels into the cache, outside valgrind
    once, twice = (_counts(tree, cache, topologies, calls, str(Path(tmp) / f"cg-{name}-{calls}"))
                   for calls in (1, 2))
    sims = topologies * N_SCHEDULERS
    return {"tree": name, **{k: round((b - a) / sims, 1)
                             for k, a, b in zip(COLUMNS, once, twice, strict=True)}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rev", nargs="?", help="a commit to count too (e.g. a tag or hash)")
    p.add_argument("--topologies", type=int, default=2000)
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instruction_count: needs `valgrind` on the PATH")
    header("paper setting: per simulation, counted by cachegrind (haswell target, one thread)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.rev:
            with worktree(args.rev, Path(tmp) / "other") as other:
                rows.append(_per_simulation(other, tmp, args.rev, args.topologies))
        rows.append(_per_simulation(ROOT, tmp, "this checkout", args.topologies))
    table(rows)
    if args.rev:
        print(f"instructions, this / {args.rev}: "
              f"{rows[1]['instructions'] / rows[0]['instructions']:.3f}")


if __name__ == "__main__":
    main()
