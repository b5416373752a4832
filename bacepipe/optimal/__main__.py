"""``python -m bacepipe.optimal SCENARIO [--time-limit S] [--json]``: the optimum of SPEC §15.

SCENARIO is a YAML file (SPEC §9) or a built-in name (``motivation``, ``paper``, ``random``). Prints
the optimal (or best found) schedule with its avg JCT, the proven bound and the rounding note, or
one JSON object with ``--json``.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict

from bacepipe.cli import OneLineParser, run_cli
from bacepipe.optimal import solve
from bacepipe.simulate import format_table


def _parser() -> OneLineParser:
    p = OneLineParser(prog="bacepipe.optimal", description=__doc__.splitlines()[0])
    p.add_argument("scenario", help="scenario YAML path, or motivation | paper | random")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="CP-SAT wall-clock limit in seconds (default 60)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    return p


def format_result(result: dict) -> str:
    """The schedule as :func:`bacepipe.simulate.format_table` prints one, then OPT and its bound."""
    head = "optimal" if result["proven"] else f"best found ({result['status']})"
    lines = []
    if result["jobs"]:
        # the job rows of a single run's table (header, rule, one line per job); its totals
        # are a run's, so every other key reads NaN and the lines after the jobs are dropped
        as_run = defaultdict(lambda: math.nan, scheduler=head, jobs=result["jobs"])
        lines += format_table(as_run).splitlines()[:3 + len(result["jobs"])]
    hint = result["hint"]
    proven = "proven" if result["proven"] else "not proven"
    lines.append(f"OPT avg JCT {result['opt_avg_jct_h']:.4f} h · proven bound "
                 f"{result['lower_bound_h']:.4f} h · {proven} · {result['wall_s']:.2f} s"
                 + (f" · started from {hint['scheduler']} ({hint['avg_jct_h']:.4f} h)"
                    if hint else ""))
    lines.append(f"note: {result['note']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        result = solve(args.scenario, time_limit_s=args.time_limit)
        print(json.dumps(result) if args.json else format_result(result))
        return 0

    return run_cli("bacepipe.optimal", body)


if __name__ == "__main__":
    sys.exit(main())
