"""Where the paper setting's time goes, by compiled function: `perf` samples of the batched core
(6 regions, 8 jobs, the eight schedulers of SPEC §7, one thread; or, with ``--trace-jobs``, one
simulation of the trace case of ``scaling.py`` under one scheduler and start rule), named
through a perf map that the profiled process writes from numba's compiled libraries (JIT code is
otherwise anonymous).
Functions numba or LLVM inlined count in their caller. Needs Linux `perf`; compiles into a fresh
numba cache (code loaded from the cache keeps no names), ~2 minutes.

    python benchmarks/kernel_profile.py [--topologies 5000] [--repeats 5] [--top 25] [--tree DIR]
        [--trace-jobs 30000 --scheduler bace_pipe --start-rule wait_if_faster]

(``--tree``: profile another checkout, e.g. a ``git worktree`` of an earlier commit.)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import PAPER_PROBE, header, table

ROOT = Path(__file__).resolve().parents[1]
#: Run in a child process: warms up, writes /tmp/perf-<pid>.map, then records itself while it
#: simulates (argv: root, topologies, repeats, perf.data path, trace jobs (0: the paper setting),
#: scheduler, start rule).
PROBE = PAPER_PROBE + """
if int(sys.argv[5]):
    sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
    from scaling import TRACE_REGIONS, busy_rate_per_h
    names, topologies = (sys.argv[6],), 1
    batch = generate_batch("random", 0, range(1), num_regions=TRACE_REGIONS,
                           num_jobs=int(sys.argv[5]), arrivals="poisson",
                           arrival_rate_per_h=busy_rate_per_h(0.9), start_rule=sys.argv[7])
from numba.core.registry import CPUDispatcher
rows = set()
for obj in gc.get_objects():
    if isinstance(obj, CPUDispatcher):
        for cres in obj.overloads.values():
            for f in cres.library._final_module.functions:
                if not f.is_declaration:
                    rows.add((cres.library.get_pointer_to_function(f.name), f.name))
rows = sorted(r for r in rows if r[0])
with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
    for (a, name), nxt in zip(rows, rows[1:] + [(rows[-1][0] + 4096, "")]):
        fh.write(f"{a:x} {min(nxt[0] - a, 1 << 20):x} {name}\\n")
perf = subprocess.Popen(["perf", "record", "-q", "-F", "4000", "-p", str(os.getpid()),
                         "-o", sys.argv[4]], stderr=subprocess.DEVNULL)
time.sleep(1.0)
start = time.process_time()
for _ in range(repeats):
    simulate_batch(batch, names)
print((time.process_time() - start) / (repeats * topologies * len(names)) * 1e6, os.getpid())
perf.send_signal(signal.SIGINT)
perf.wait()
"""


def short_name(symbol: str) -> str:
    """``bacepipe.core.loop.simulate_topology`` for numba's mangled name (a dotted path as
    length-prefixed parts after ``_ZN``); other symbols as they are."""
    prefix, text = ("cfunc.", symbol[6:]) if symbol.startswith("cfunc.") else ("", symbol)
    if not text.startswith("_ZN"):
        return symbol
    parts, text = [], text[3:]
    while text[:1].isdigit():
        digits = re.match(r"\d+", text).group()
        end = len(digits) + int(digits)
        parts.append(text[len(digits):end])
        text = text[end:]
    return prefix + ".".join(parts).replace("_3clocals_3e", "<locals>")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topologies", type=int, default=5000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--tree", type=Path, default=ROOT, help="the checkout to profile")
    p.add_argument("--trace-jobs", type=int, default=0,
                   help="profile the trace case with this many jobs instead (0: paper setting)")
    p.add_argument("--scheduler", default="bace_pipe", help="the trace case's scheduler")
    p.add_argument("--start-rule", default="wait_if_faster", help="the trace case's start rule")
    args = p.parse_args()
    if shutil.which("perf") is None:
        sys.exit("kernel_profile: needs Linux `perf` on the PATH")
    setting = (f"trace case, {args.trace_jobs:,} jobs, {args.scheduler}, {args.start_rule}"
               if args.trace_jobs else "paper setting")
    header(f"{setting}: share of perf samples per compiled function, one thread ({args.tree})")
    with tempfile.TemporaryDirectory() as tmp:
        data = str(Path(tmp) / "perf.data")
        env = dict(os.environ, NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=str(Path(tmp) / "cache"))
        us, pid = subprocess.run(
            [sys.executable, "-c", PROBE, str(args.tree), str(args.topologies), str(args.repeats),
             data, str(args.trace_jobs), args.scheduler, args.start_rule],
            capture_output=True, text=True, env=env, check=True).stdout.split()[-2:]
        perf_map = Path(f"/tmp/perf-{pid}.map")  # perf reads it when it reports
        try:
            report = subprocess.run(["perf", "report", "-i", data, "--sort", "symbol", "--stdio"],
                                    capture_output=True, text=True, check=True).stdout
        finally:
            perf_map.unlink(missing_ok=True)
        us = float(us)
    shares = {}
    for line in report.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(\S+)", line)
        if match:
            name = short_name(match.group(3))
            if match.group(2) == "k":
                name = "kernel: " + name
            shares[name] = shares.get(name, 0.0) + float(match.group(1))
    top = sorted(shares.items(), key=lambda kv: -kv[1])[:args.top]
    table([{"function": name, "share_pct": round(share, 2),
            "us_per_sim": round(share / 100 * us, 3)} for name, share in top])
    print(f"µs per simulation while profiled: {us:.3f}")


if __name__ == "__main__":
    main()
