"""Time to the proven optimum (bacepipe.optimal, SPEC §15) by instance size: regions, jobs, GPUs.

Sizes grow until one is no longer proven on every topology within the limit (default 60 s):

    python benchmarks/optimal_time.py [--max-seconds 60] [--topologies 10] [--max-regions 6]
"""

import argparse

import numpy as np
from _common import header, table

from bacepipe.model.generate import generate_batch
from bacepipe.optimal import solve

#: (regions, jobs, gpu_scale) in growing order; gpu_scale 1/16 gives 1–8 GPUs a region.
SIZES = ((2, 2, 0.0625), (3, 3, 0.0625), (3, 4, 0.0625), (3, 4, 0.125), (4, 4, 0.0625),
         (3, 6, 0.0625), (4, 6, 0.125), (5, 6, 0.125), (6, 8, 0.0625), (6, 8, 0.25))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-seconds", type=float, default=60.0, help="CP-SAT limit per instance")
    p.add_argument("--topologies", type=int, default=10, help="random topologies per size")
    p.add_argument("--max-regions", type=int, default=6)
    args = p.parse_args()
    header(f"optimal_time: seconds to the proven optimum, {args.topologies} random topologies "
           f"per size, limit {args.max_seconds:g} s")
    rows = []
    for regions, jobs, gpu_scale in SIZES:
        if regions > args.max_regions:
            break
        batch = generate_batch("random", 0, range(args.topologies), num_regions=regions,
                               num_jobs=jobs, gpu_scale=gpu_scale)
        walls, proven, gaps = [], 0, []
        for t in range(batch.size):
            result = solve(batch.scenario(t), time_limit_s=args.max_seconds, progress=False)
            walls.append(result["wall_s"])
            proven += result["proven"]
            gaps.append(result["opt_avg_jct_h"] / result["lower_bound_h"] - 1)
        gpus = batch.gpus.sum(axis=1)
        rows.append({"regions": regions, "jobs": jobs, "gpus_mean": float(gpus.mean()),
                     "gpus_max": int(gpus.max()), "median_s": float(np.median(walls)),
                     "p90_s": float(np.quantile(walls, 0.9)), "max_s": float(max(walls)),
                     "proven": f"{proven}/{batch.size}", "max_gap": float(max(gaps))})
        if proven < batch.size:
            break
    table(rows)
    proven_sizes = [r for r in rows if r["proven"].split("/")[0] == r["proven"].split("/")[1]]
    if proven_sizes:
        big = proven_sizes[-1]
        print(f"largest size proven on every topology within {args.max_seconds:g} s: "
              f"{big['regions']} regions, {big['jobs']} jobs, up to {big['gpus_max']} GPUs")


if __name__ == "__main__":
    main()
