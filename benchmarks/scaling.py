"""Time per topology vs regions (6 … 256) and vs jobs (8 … 4,096), with the fitted exponent
(time ∝ size^k, least squares on log-log), one topology per call, under each start rule.

    python benchmarks/scaling.py [--max-jobs 4096] [--max-regions 256] [--schedulers paper]
        [--start-rules greedy,wait_if_faster]
"""

import argparse

import numpy as np
from _common import header, table, timer

from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.policies import PAPER_SCHEDULERS, SCHEDULER_PARTS


def _time_one(num_regions: int, num_jobs: int, repeats: int, schedulers, rule: str) -> float:
    batch = generate_batch("random", 0, range(repeats), num_regions=num_regions, num_jobs=num_jobs,
                           start_rule=rule)
    with timer() as seconds:
        for t in range(repeats):  # one topology per call, as a single run would
            simulate_batch(batch._replace(**{k: v[t:t + 1] for k, v in batch._asdict().items()
                                             if isinstance(v, np.ndarray)}), schedulers)
    return seconds() / repeats / len(schedulers)


def _exponent(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-jobs", type=int, default=4096)
    p.add_argument("--max-regions", type=int, default=256)
    p.add_argument("--schedulers", default="paper",
                   help="paper (the eight of SPEC §7, default), all, or names with commas")
    p.add_argument("--start-rules", default="greedy,wait_if_faster")
    args = p.parse_args()
    schedulers = PAPER_SCHEDULERS if args.schedulers == "paper" else \
        tuple(SCHEDULER_PARTS) if args.schedulers == "all" else tuple(args.schedulers.split(","))
    header(f"scaling: seconds per simulation (one topology, mean over {len(schedulers)} "
           "schedulers)")
    rows, fits = [], []
    regions = [r for r in (6, 16, 32, 64, 128, 256) if r <= args.max_regions]
    jobs = [j for j in (8, 32, 128, 512, 1024, 2048, 4096) if j <= args.max_jobs]
    for rule in args.start_rules.split(","):
        _time_one(6, 8, 1, schedulers, rule)  # compile
        region_times = [_time_one(r, 8, 20 if r < 128 else 5, schedulers, rule) for r in regions]
        rows += [{"start_rule": rule, "axis": "regions", "regions": r, "jobs": 8, "s_per_sim": t}
                 for r, t in zip(regions, region_times, strict=True)]
        job_times = [_time_one(6, j, 20 if j < 1024 else 1, schedulers, rule) for j in jobs]
        rows += [{"start_rule": rule, "axis": "jobs", "regions": 6, "jobs": j, "s_per_sim": t}
                 for j, t in zip(jobs, job_times, strict=True)]
        big = _time_one(256, 1000, 1, schedulers, rule)
        rows.append({"start_rule": rule, "axis": "target", "regions": 256, "jobs": 1000,
                     "s_per_sim": big})
        fits.append(f"{rule}: fitted exponent regions {_exponent(regions, region_times):.2f}, "
                    f"jobs {_exponent(jobs, job_times):.2f}; 256 regions x 1,000 jobs "
                    f"{big:.3f} s per simulation")
    table(rows)
    print("\n".join(fits))


if __name__ == "__main__":
    main()
