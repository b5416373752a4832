"""What every benchmark prints: the machine, the versions, a readable table and JSON lines."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path


def machine() -> dict:
    """CPU model, cores and the versions that decide speed."""
    import numba
    import numpy

    import bacepipe

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": numpy.__version__, "numba": numba.__version__,
            "numba_threads": numba.get_num_threads(), "bacepipe": bacepipe.__version__}


def header(title: str) -> None:
    m = machine()
    print(f"# {title}")
    print(f"# machine: {m['cpu']}, {m['cores']} cores; python {m['python']}, numpy {m['numpy']}, "
          f"numba {m['numba']} ({m['numba_threads']} threads), bacepipe {m['bacepipe']}")


def table(rows: list[dict]) -> None:
    """A fixed-width table of ``rows`` (same keys), then one JSON line per row."""
    keys = list(rows[0])
    cells = [[_fmt(r[k]) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths, strict=True)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths, strict=True)))
    m = machine()
    for r in rows:
        print(json.dumps({**r, "machine": m}))


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


#: The start of a script run in a child process on a checkout (argv: its root, topologies,
#: repeats, ...): the paper setting's batch (6 regions, 8 jobs, the eight schedulers of SPEC §7),
#: compiled and warmed up.
PAPER_PROBE = """
import gc, json, os, signal, subprocess, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
names = ("bace_pipe", "lcf", "ldf", "cr_lcf", "cr_ldf", "bace_pipe_no_priority",
         "bace_pipe_no_pathfinder", "bace_pipe_no_costmin")
topologies, repeats = int(sys.argv[2]), int(sys.argv[3])
batch = generate_batch("random", 0, range(topologies))
simulate_batch(generate_batch("random", 0, range(2)), names)
"""


#: Defines ``rules_of(**rules) -> (arguments, keywords)`` in a child process on any checkout:
#: the extra arguments of ``simulate_batch`` that set the schedulers' rules (``start_rule``,
#: ``plan_slack``), or, on a checkout from before the rules travelled apart from the world, the
#: ``generate_batch`` keywords that set them.
RULES_PROBE = """
try:
    from bacepipe.model.rules import Rules
    def rules_of(**rules):
        return (Rules(**rules),), {}
except ImportError:
    def rules_of(**rules):
        return (), rules
"""


@contextmanager
def timer():
    """``with timer() as t: ...`` then ``t()`` is the elapsed seconds."""
    start = time.perf_counter()
    elapsed = [None]
    yield lambda: elapsed[0] if elapsed[0] is not None else time.perf_counter() - start
    elapsed[0] = time.perf_counter() - start


@contextmanager
def usage():
    """``with usage() as u: ...`` then ``u()`` is the block's (wall, user, system) seconds, CPU
    times summed over the process's threads (Unix)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF)
    with timer() as wall:
        yield lambda: (wall(), after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
    after = resource.getrusage(resource.RUSAGE_SELF)


@contextmanager
def worktree(rev: str, where: Path):
    """A ``git worktree`` of commit ``rev`` of this checkout at ``where``, removed on exit."""
    root = Path(__file__).resolve().parents[1]
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(where)],
                       capture_output=True)
