"""Where the paper setting's time goes, by compiled function: `perf` samples of the batched core
(6 regions, 8 jobs, the eight schedulers of SPEC §7, one thread; or, with ``--trace-jobs``, one
simulation of the trace case of ``scaling.py`` under one scheduler and start rule), named
through a perf map that the profiled process writes from numba's compiled libraries (JIT code is
otherwise anonymous).
Functions numba or LLVM inlined count in their caller. Needs Linux `perf`; compiles into a fresh
numba cache (code loaded from the cache keeps no names), ~2 minutes.

With ``--lines N``, the loop kernel's samples are also attributed to source lines, through the
debug line table of its object code (``addr2line``). That needs a debug build
(``NUMBA_DEBUGINFO=1``) of the serial and the parallel kernels: ~35 minutes and ~8 GB on 2
cores. numba's line table names the loop's own file for the code it inlined from other modules,
so a row is one line number summed over every file inlined into the loop: an upper bound on any
single line's share.

    python benchmarks/kernel_profile.py [--topologies 5000] [--repeats 5] [--top 25] [--tree DIR]
        [--trace-jobs 30000 --scheduler bace_pipe --start-rule wait_if_faster] [--lines 20]

(``--tree``: profile another checkout, e.g. a ``git worktree`` of an earlier commit.)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import PAPER_PROBE, RULES_PROBE, header, table

ROOT = Path(__file__).resolve().parents[1]
#: Run in a child process: warms up, writes /tmp/perf-<pid>.map, then records itself while it
#: simulates (argv: root, topologies, repeats, perf.data path, trace jobs (0: the paper setting),
#: scheduler, start rule, whether to save the loop kernel's object code for ``--lines``).
PROBE = PAPER_PROBE + RULES_PROBE + """
rules, ruled = rules_of(start_rule=sys.argv[7])
if int(sys.argv[5]):
    sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
    from scaling import TRACE_REGIONS, busy_rate_per_h
    names, topologies = (sys.argv[6],), 1
    batch = generate_batch("random", 0, range(1), num_regions=TRACE_REGIONS,
                           num_jobs=int(sys.argv[5]), arrivals="poisson",
                           arrival_rate_per_h=busy_rate_per_h(0.9), **ruled)
from numba.core.registry import CPUDispatcher
rows, loops = set(), []
LOOP = "_ZN8bacepipe4core4loop17simulate_topology"  # the loop kernel's mangled name begins so
for obj in gc.get_objects():
    if isinstance(obj, CPUDispatcher):
        for cres in obj.overloads.values():
            for f in cres.library._final_module.functions:
                if not f.is_declaration:
                    rows.add((cres.library.get_pointer_to_function(f.name), f.name))
                    if int(sys.argv[8]) and f.name.startswith(LOOP):
                        # every library that links the loop kernel holds a copy: keep each
                        try:
                            code = cres.library._get_compiled_object()
                        except (RuntimeError, ValueError):  # a library numba does not cache
                            continue
                        path = f"{sys.argv[4]}.{len(loops)}.o"
                        with open(path, "wb") as fh:
                            fh.write(code)
                        loops.append((cres.library.get_pointer_to_function(f.name), f.name, path))
if int(sys.argv[8]):
    with open(f"{sys.argv[4]}.loops.json", "w") as fh:
        json.dump(loops, fh)
rows = sorted(r for r in rows if r[0])
with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
    for (a, name), nxt in zip(rows, rows[1:] + [(rows[-1][0] + 4096, "")]):
        fh.write(f"{a:x} {min(nxt[0] - a, 1 << 20):x} {name}\\n")
perf = subprocess.Popen(["perf", "record", "-q", "-F", "4000", "-p", str(os.getpid()),
                         "-o", sys.argv[4]], stderr=subprocess.DEVNULL)
time.sleep(1.0)
start = time.process_time()
for _ in range(repeats):
    simulate_batch(batch, names, *rules)
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
    p.add_argument("--lines", type=int, default=0,
                   help="also print the loop kernel's N line numbers with the most samples "
                        "(a debug build: ~35 minutes, ~8 GB)")
    args = p.parse_args()
    for tool in ("perf",) + (("nm", "addr2line") if args.lines else ()):
        if shutil.which(tool) is None:
            sys.exit(f"kernel_profile: needs `{tool}` on the PATH")
    setting = (f"trace case, {args.trace_jobs:,} jobs, {args.scheduler}, {args.start_rule}"
               if args.trace_jobs else "paper setting")
    header(f"{setting}: share of perf samples per compiled function, one thread ({args.tree})")
    with tempfile.TemporaryDirectory() as tmp:
        data = str(Path(tmp) / "perf.data")
        env = dict(os.environ, NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=str(Path(tmp) / "cache"))
        if args.lines:
            env["NUMBA_DEBUGINFO"] = "1"
        us, pid = subprocess.run(
            [sys.executable, "-c", PROBE, str(args.tree), str(args.topologies), str(args.repeats),
             data, str(args.trace_jobs), args.scheduler, args.start_rule, str(int(args.lines > 0))],
            capture_output=True, text=True, env=env, check=True).stdout.split()[-2:]
        lines = loop_lines(data) if args.lines else None
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
    if args.lines:
        print()
        line_table(lines, args.lines)


#: The row of the loop kernel's samples at addresses its line table leaves without a line.
NO_LINE = "(no line)"


def symbol_span(obj: str, name: str) -> tuple[int, int]:
    """Where function ``name`` lies in object file ``obj``: (offset, size), read by ``nm``."""
    symbols = subprocess.run(["nm", "-S", "--defined-only", obj], capture_output=True, text=True,
                             check=True).stdout
    for fields in map(str.split, symbols.splitlines()):
        if len(fields) == 4 and fields[3] == name:
            return int(fields[0], 16), int(fields[1], 16)
    raise LookupError(f"kernel_profile: {name} is not defined in {obj}")


def loop_lines(data: str) -> Counter:
    """The loop kernel's perf samples per source line (``file:line``, or :data:`NO_LINE`), from
    the copy of the kernel the samples fell in."""
    ips = Counter(int(ip, 16) for ip in subprocess.run(
        ["perf", "script", "-i", data, "-F", "ip"], capture_output=True, text=True,
        check=True).stdout.split())
    best = Counter()
    with open(f"{data}.loops.json") as fh:
        loops = json.load(fh)
    for addr, name, obj in loops:
        offset, size = symbol_span(obj, name)
        inside = Counter({ip - addr + offset: n for ip, n in ips.items()
                          if addr <= ip < addr + size})
        if inside.total() > best.total():
            best, best_obj = inside, obj
    if not best:
        return best
    places = subprocess.run(["addr2line", "-e", best_obj], input="\n".join(map(hex, best)),
                            capture_output=True, text=True, check=True).stdout.splitlines()
    lines = Counter()
    for n, place in zip(best.values(), places, strict=True):
        file, _, line = place.partition(" ")[0].rpartition(":")
        lines[NO_LINE if file == "??" or line in ("?", "0") else f"{Path(file).name}:{line}"] += n
    return lines


def line_table(lines: Counter, top: int) -> None:
    """The loop kernel's line numbers with the most samples, and how the rest spread."""
    total = lines.total()
    if total == 0:
        print("# no sample fell in the loop kernel")
        return
    known = sorted((n for place, n in lines.items() if place != NO_LINE), reverse=True)
    print(f"# the loop kernel's {total:,} samples by line number: {len(known)} numbers carry "
          f"samples; no line: {100 * (total - sum(known)) / total:.1f} %; the top 1, 5, 10, 20 "
          f"numbers: " + ", ".join(f"{100 * sum(known[:n]) / total:.1f} %" for n in (1, 5, 10, 20)))
    table([{"line": place, "share_of_loop_pct": round(100 * n / total, 2)}
           for place, n in lines.most_common(top)])


if __name__ == "__main__":
    main()
