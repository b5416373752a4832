"""Are this checkout's results bit-identical to another commit's? Every built-in scheduler on a
battery of settings (each scenario, both start rules, GPU mixes, every SPEC §12 switch, serial
and parallel kernels), each tree in its own process and numba cache; prints one line per
setting and exits 1 on any difference.

    python benchmarks/same_results.py REV|TREE [--topologies 40] [--caches DIR DIR]

REV is a commit (checked out into a temporary worktree), TREE another checkout's folder. A cold
cache compiles each tree once (minutes); ``--caches`` names the two numba cache folders (other,
this) to keep or reuse them.
"""

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import RULES_PROBE, header, worktree

ROOT = Path(__file__).resolve().parents[1]
#: (label, generate_batch keywords): the settings compared.
SETTINGS = [
    ("paper", {"scenario": "paper"}),
    ("random", {}),
    ("random wait_if_faster", {"start_rule": "wait_if_faster"}),
    ("random slack 0.05", {"plan_slack": 0.05}),
    ("random bw 0.3 gpu 0.5 jobs 16", {"bandwidth_scale": 0.3, "gpu_scale": 0.5,
                                       "num_jobs": 16}),
    ("random gpu_mix cloud", {"gpu_mix": "cloud"}),
    ("random poisson geo adam business", {"arrivals": "poisson", "arrival_rate_per_h": 0.5,
                                          "latency": "geo", "memory_model": "adam_mixed",
                                          "price_profile": "business"}),
    ("random poisson wait_if_faster", {"arrivals": "poisson", "arrival_rate_per_h": 0.9,
                                       "start_rule": "wait_if_faster", "num_jobs": 24}),
    ("aws10", {"scenario": "aws10"}),
    ("aws10 gpu_mix cloud wait_if_faster", {"scenario": "aws10", "gpu_mix": "cloud",
                                            "start_rule": "wait_if_faster"}),
    ("motivation", {"scenario": "motivation"}),
]
#: The settings of SETTINGS that are the schedulers' rules, not keywords of generation.
RULES = ("start_rule", "plan_slack")
#: Run in each tree (argv: tree, topologies, output .npz): every setting's arrays.
PROBE = """
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
import numpy as np
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.policies import BUILTIN_SCHEDULERS
""" + RULES_PROBE + """
settings, topologies = SETTINGS, int(sys.argv[2])
arrays = {}
for label, kw in settings:
    kw = dict(kw)
    scenario = kw.pop("scenario", "random")
    rules, ruled = rules_of(**{k: kw.pop(k) for k in RULES if k in kw})
    for kind, tops in (("parallel", range(topologies)), ("serial", [topologies])):
        result = simulate_batch(generate_batch(scenario, 0, tops, **kw, **ruled),
                                tuple(BUILTIN_SCHEDULERS), *rules)
        for field in result._fields:
            value = getattr(result, field)
            if isinstance(value, np.ndarray):
                arrays[f"{label}|{kind}|{field}"] = value
np.savez(sys.argv[3], **arrays)
"""


def _run(tree: Path, cache: Path, topologies: int, out: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    probe = PROBE.replace("SETTINGS", repr(SETTINGS)).replace("RULES", repr(RULES))
    subprocess.run([sys.executable, "-c", probe, str(tree), str(topologies), str(out)], env=env,
                   check=True, cwd=tree)
    with np.load(out) as data:
        return dict(data)


def _same(a: np.ndarray, b: np.ndarray | None) -> bool:
    """Bit for bit: dtype, shape and bytes."""
    return b is not None and a.dtype == b.dtype and a.shape == b.shape and \
        a.tobytes() == b.tobytes()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rev", help="the commit, or the folder of another checkout, to compare with")
    p.add_argument("--topologies", type=int, default=40, help="per setting (parallel kernels)")
    p.add_argument("--caches", type=Path, nargs=2, default=None, metavar=("OTHER", "THIS"),
                   help="numba cache folders of the two trees (default: temporary)")
    args = p.parse_args()
    header(f"results of this checkout against {args.rev}")
    with tempfile.TemporaryDirectory() as tmp:
        caches = args.caches or (Path(tmp) / "other-cache", Path(tmp) / "this-cache")
        tree = Path(args.rev)
        with (contextlib.nullcontext(tree) if tree.is_dir()
              else worktree(args.rev, Path(tmp) / "other")) as other:
            theirs = _run(other, caches[0], args.topologies, Path(tmp) / "other.npz")
        ours = _run(ROOT, caches[1], args.topologies, Path(tmp) / "this.npz")
    differ = 0
    for label, _ in SETTINGS:
        keys = [k for k in ours if k.startswith(f"{label}|")]
        bad = [k.split("|", 1)[1] for k in keys if not _same(ours[k], theirs.get(k))]
        differ += bool(bad)
        print(f"{'same' if not bad else 'DIFFERENT'}  {label}  ({len(keys)} arrays)"
              + (f": {', '.join(bad)}" if bad else ""))
    print(f"{len(SETTINGS) - differ} of {len(SETTINGS)} settings bit-identical to {args.rev}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
