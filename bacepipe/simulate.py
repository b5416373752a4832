"""``python -m bacepipe.simulate SCENARIO --scheduler NAME [--json]``: one scenario, one schedule.

SCENARIO is a YAML file (SPEC §9) or a built-in name (``paper``, ``motivation``, ``random``,
``aws10``). A flag per world and scheduler setting of the sweep (:mod:`bacepipe.settings`:
``--seed``, the scales, the switches, the start rule, ...) with ``--topology`` picks the exact
topology and rules a sweep row simulated, so any row can be replayed and read job by job.
``--plugin FILE`` (repeatable) loads a user's parts and schedulers first.
"""

from __future__ import annotations

import json
import sys

from bacepipe.cli import OneLineParser, run_cli
from bacepipe.core.compile_notice import announce_on
from bacepipe.model.generate import topology_batch
from bacepipe.model.rules import RULE_CHECKS
from bacepipe.policies import SCHEDULERS, check_schedulers, load_plugins
from bacepipe.settings import DEFAULTS, RUN, SETTINGS, choices, plain, scalar_type
from bacepipe.sim.run import run_batch

#: The sweep's settings a single run takes as flags: every world or scheduler setting of one
#: value but the scenario (the positional argument). Each left out keeps the scenario's value,
#: else the sweep's default.
REPLAY = tuple(name for name, s in SETTINGS.items()
               if s.domain != RUN and name != "scenario" and scalar_type(name) is not None)


def _parser() -> OneLineParser:
    p = OneLineParser(prog="bacepipe.simulate", description=__doc__.splitlines()[0])
    p.add_argument("scenario", help="scenario YAML path, or paper | motivation | random | aws10")
    p.add_argument("--scheduler", default="bace_pipe",
                   help=f"one of {', '.join(SCHEDULERS)} (default bace_pipe)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--topology", type=int, default=0, help="topology index within the seed")
    for name in REPLAY:
        default = "" if DEFAULTS[name] is None else (
            f" (default: the scenario's, else {DEFAULTS[name]})" if name in RULE_CHECKS
            else f" (default {DEFAULTS[name]})")
        p.add_argument(f"--{name.replace('_', '-')}", type=scalar_type(name),
                       choices=choices(name), default=None,
                       help=plain(SETTINGS[name].help).replace("%", "%%") + default)
    p.add_argument("--plugin", action="append", default=[], dest="plugins", metavar="FILE",
                   help="a Python file or module registering parts and schedulers (repeatable)")
    return p


def format_table(result: dict) -> str:
    """The schedule as a readable table with the totals underneath."""
    head = ("job", "K*", "GPUs per region (path order)", "start h", "end h", "JCT h", "cost $")
    rows = [(j["name"], str(j["k_star"]),
             " → ".join(f"{r}:{n}" for r, n in j["gpus"].items()),
             f"{j['start_h']:.2f}", f"{j['end_h']:.2f}", f"{j['jct_h']:.2f}", f"{j['cost']:.2f}")
            for j in result["jobs"]]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) if i < 3 else c.rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths, strict=True)))
    out = [f"scheduler: {result['scheduler']}", line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    out.append(f"avg JCT {result['avg_jct_h']:.3f} h · total cost ${result['total_cost']:.2f} · "
               f"makespan {result['makespan_h']:.3f} h · energy {result['energy_kwh']:.1f} kWh · "
               f"GPU utilization {result['gpu_utilization']:.1%}")
    out.append(f"lower bound on any schedule's avg JCT (SPEC §15): "
               f"{result['lower_bound_h']:.3f} h")
    return "\n".join(out)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        load_plugins(args.plugins)
        check_schedulers(args.scheduler)
        given = {name: SETTINGS[name].check(getattr(args, name), name) for name in REPLAY
                 if getattr(args, name) is not None}
        batch, rules = topology_batch(args.scenario, topology=args.topology, **given)
        result = run_batch(batch, rules, args.scheduler)
        print(json.dumps(result) if args.json else format_table(result))
        return 0

    with announce_on(sys.stderr):
        return run_cli("bacepipe.simulate", body)


if __name__ == "__main__":
    sys.exit(main())
