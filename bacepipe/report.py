"""``python -m bacepipe.report PATH... [--out DIR]``: tables and figures from sweep results.

Each PATH is a result directory, a multirun directory, or a ``runs/`` dataset; every ``runs/``
dataset under them is read (once). The report (``report.md``, ``summary.csv``, ``figures/*.png``)
goes to ``--out`` or else the first PATH, and stdout says what was read, one per-scheduler table
per sweep point (points are never pooled; each names its point by the settings that differ
between the points read, and the schedulers not run there), every note, and where each figure
went or why it was skipped.

Bad input (an unknown option, a path that does not exist or holds no results, an unreadable file,
an output directory that cannot take a file) prints one line, ``report: <field>: <problem>``, to
stderr and exits with status 2. Every file is written atomically (:mod:`bacepipe.io`): a report
directory holds the old files or the new ones, never half of one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from bacepipe.analysis.fleets import type_shares
from bacepipe.analysis.load import RUNS_DIR, find_runs, scan_runs
from bacepipe.analysis.mechanism import scan_jobs
from bacepipe.analysis.stats import paired_ratios, points, summarize
from bacepipe.analysis.tables import format_summary_table, write_report
from bacepipe.analysis.yardsticks import gap_table
from bacepipe.cli import OneLineParser, first_line, run_cli
from bacepipe.errors import InputError
from bacepipe.headline import N_RESAMPLES, SEED
from bacepipe.validation import number

PROG = "report"


def _parser() -> OneLineParser:
    p = OneLineParser(
        prog=PROG,
        description="Summarize sweep results per sweep point: paired ratios to the reference "
        "scheduler (geometric mean, bootstrap CI), report.md and figures.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="result or multirun directory (searched recursively for runs/)",
    )
    p.add_argument("--out", metavar="DIR", help="where to write the report (default: first PATH)")
    p.add_argument(
        "--resamples",
        type=int,
        default=N_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples per CI (default {N_RESAMPLES})",
    )
    p.add_argument("--seed", type=int, default=SEED,
                   help=f"bootstrap generator seed (default {SEED})")
    return p


def _default_out(first: str) -> Path:
    path = Path(first)
    return path.parent if path.name == RUNS_DIR else path


def main(argv: list[str] | None = None) -> int:
    """Run the report; return the exit status (0 ok, 2 bad input)."""
    args = _parser().parse_args(argv)
    out_dir = Path(args.out) if args.out else _default_out(args.paths[0])

    def body() -> int:
        number(args.resamples, "--resamples", minimum=1, integer=True)
        sources = find_runs(args.paths)
        lf = scan_runs(sources)
        summary = summarize(lf, n_resamples=args.resamples, seed=args.seed)
        if summary.is_empty():
            raise InputError(args.paths[0], "the runs/ datasets hold no result rows")
        ratios = paired_ratios(lf).collect()
        gaps = gap_table(lf, n_resamples=args.resamples, seed=args.seed)
        jobs = scan_jobs(sources)
        types = type_shares(jobs) if jobs is not None else None
        print(f"read {len(sources)} runs/ dataset(s): {points(summary).height} point(s), "
              f"{summary['scheduler'].n_unique()} scheduler(s)")
        print(format_summary_table(summary))
        try:
            written = write_report(summary, out_dir, ratios=ratios, sources=sources, echo=print,
                                   gaps=gaps, types=types)
        except OSError as err:
            raise InputError(str(out_dir), first_line(err)) from None
        print(f"report: {written[0]}")
        print(f"summary table: {written[1]}")
        return 0

    # A read error names the first input path (the report has not started writing then).
    return run_cli(PROG, body, io_errors=(pl.exceptions.PolarsError, OSError),
                   io_field=args.paths[0])


if __name__ == "__main__":
    sys.exit(main())
