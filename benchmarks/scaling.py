"""Time per topology vs regions (6 … 256) and vs jobs (8 … 4,096), with the fitted exponent
(time ∝ size^k, least squares on log-log), one topology per call, under each start rule; and the
trace case: 256 regions, Poisson arrivals at a rate that keeps the fleet busy, 1,000 → 100,000
jobs, per scheduler, with the queue the run built (how many decisions the scan had to make).

    python benchmarks/scaling.py [--max-jobs 4096] [--max-regions 256] [--schedulers paper]
        [--start-rules greedy,wait_if_faster] [--trace-jobs 1000,...,100000]
        [--trace-schedulers bace_pipe,ldf,spt_plan] [--trace-load 0.9] [--trace-budget-s 120]
"""

import argparse

import numpy as np
from _common import header, table, timer

from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import Rules
from bacepipe.policies import PAPER_SCHEDULERS, SCHEDULER_PARTS


def _time_one(num_regions: int, num_jobs: int, repeats: int, schedulers, rule: str) -> float:
    batch = generate_batch("random", 0, range(repeats), num_regions=num_regions, num_jobs=num_jobs)
    with timer() as seconds:
        for t in range(repeats):  # one topology per call, as a single run would
            simulate_batch(batch._replace(**{k: v[t:t + 1] for k, v in batch._asdict().items()
                                             if isinstance(v, np.ndarray)}), schedulers,
                           Rules(start_rule=rule))
    return seconds() / repeats / len(schedulers)


#: The trace case: regions.
TRACE_REGIONS = 256


def busy_rate_per_h(load: float) -> float:
    """Poisson arrivals per hour that offer ``load`` of the fleet's GPU time: the GPU-seconds a
    job takes under LDF, measured on a pilot of 2,000 jobs arriving at once."""
    batch = generate_batch("random", 0, range(1), num_regions=TRACE_REGIONS, num_jobs=2000)
    result = simulate_batch(batch, ("ldf",))
    gpus = result.path_gpus[0, 0].sum(axis=1)
    gpu_s = float((gpus * (result.end_s[0, 0] - result.start_s[0, 0])).mean())
    return load * batch.gpus[0].sum() * 3600.0 / gpu_s


def _queue(batch, result) -> dict:
    """What the scan had to decide, from the run's outputs: the pending jobs at each event, on
    average, and summed over the release events (each decided again there, before the scan's
    restarts after a start; SPEC §13)."""
    arrival = np.sort(batch.arrival_h[0] * 3600.0)
    start, end = np.sort(result.start_s[0, 0]), result.end_s[0, 0]
    events = np.unique(np.concatenate([arrival, end]))
    pending = np.searchsorted(arrival, events, "right") - np.searchsorted(start, events, "right")
    releases = np.unique(end)
    at_releases = (np.searchsorted(arrival, releases, "right")
                   - np.searchsorted(start, releases, "left"))
    return {"queue_mean": float(pending.mean()), "redecided": int(at_releases.sum())}


def _trace(jobs, schedulers, rules, budget_s: float, load: float) -> tuple[list[dict], list[str]]:
    """Seconds per simulation of the trace case, with its queue (:func:`_queue`); a size is
    skipped once the one before it took more than ``budget_s`` (the row says so)."""
    rate = busy_rate_per_h(load)
    rows, fits = [], []
    for rule in rules:
        for name in schedulers:
            sizes, times = [], []
            for n in jobs:
                row = {"start_rule": rule, "scheduler": name, "regions": TRACE_REGIONS,
                       "jobs": n, "rate_per_h": rate}
                if times and times[-1] > budget_s:
                    rows.append({**row, "s_per_sim": float("nan"), "queue_mean": float("nan"),
                                 "redecided": -1})
                    continue
                batch = generate_batch("random", 0, range(1), num_regions=TRACE_REGIONS,
                                       num_jobs=n, arrivals="poisson", arrival_rate_per_h=rate)
                with timer() as seconds:
                    result = simulate_batch(batch, (name,), Rules(start_rule=rule))
                sizes.append(n)
                times.append(seconds())
                rows.append({**row, "s_per_sim": times[-1], **_queue(batch, result)})
            if len(sizes) > 1:
                fits.append(f"trace {rule} {name}: fitted exponent jobs "
                            f"{_exponent(sizes, times):.2f} over {sizes[0]:,}-{sizes[-1]:,} jobs")
    return rows, fits


def _exponent(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-jobs", type=int, default=4096)
    p.add_argument("--max-regions", type=int, default=256)
    p.add_argument("--schedulers", default="paper",
                   help="paper (the eight of SPEC §7, default), all, or names with commas")
    p.add_argument("--start-rules", default="greedy,wait_if_faster")
    p.add_argument("--trace-jobs", default="1000,3000,10000,30000,100000",
                   help="job counts of the trace case (empty: skip it)")
    p.add_argument("--trace-schedulers", default="bace_pipe,ldf,spt_plan")
    p.add_argument("--trace-load", type=float, default=0.9,
                   help="offered load of the trace: busy GPU-hours per GPU-hour of the fleet "
                        "(measured under LDF, greedy)")
    p.add_argument("--trace-budget-s", type=float, default=120.0,
                   help="skip the larger sizes once one takes longer than this")
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
        fitted = (f"fitted exponent regions {_exponent(regions, region_times):.2f}, jobs "
                  f"{_exponent(jobs, job_times):.2f}; " if len(regions) > 1 and len(jobs) > 1
                  else "")
        fits.append(f"{rule}: {fitted}256 regions x 1,000 jobs {big:.3f} s per simulation")
    table(rows)
    print("\n".join(fits))
    if args.trace_jobs:
        simulate_batch(generate_batch("random", 0, range(1), num_regions=TRACE_REGIONS,
                                      num_jobs=8), ("ldf",))  # compile
        trace_rows, trace_fits = _trace([int(n) for n in args.trace_jobs.split(",")],
                                        args.trace_schedulers.split(","),
                                        args.start_rules.split(","), args.trace_budget_s,
                                        args.trace_load)
        table(trace_rows)
        print("\n".join(trace_fits))


if __name__ == "__main__":
    main()
