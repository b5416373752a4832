"""``python -m bacepipe.reproduce``: the paper's headline claims against this project's sweeps.

One command writes ``<out>/reproduction.md`` and ``<out>/figures/``::

    python -m bacepipe.reproduce --run --topologies 1000      # sweep every preset, then write
    python -m bacepipe.reproduce                              # only read existing results

With ``--run`` every figure preset (``sweeps/preset/``) is run into ``--results`` through the
sweep engine's own command line (``python -m bacepipe.sweep -m +preset=all``, then
``+preset=realistic`` for the SPEC §12 worlds; both resume complete chunks). Then, from whatever
``--results`` holds: the report (``report.md``, figures) for all points into
``<results>/report/`` and for each scenario into ``<results>/report/<scenario>/``; the
per-scenario figures are copied to ``<out>/figures/``; and ``reproduction.md`` is written with
the claims of SPEC §11 (:mod:`bacepipe.analysis.claims`, the paper's world only), the paper's
conclusions in the SPEC §12 worlds (:mod:`bacepipe.analysis.worlds`), the motivation scenario of
SPEC §8 (simulated here, never tuned), and the figures. Claims and worlds are read under the
``greedy`` start rule (SPEC §5's literal reading); a section beside them evaluates every claim
under both start rules of SPEC §13 (:mod:`bacepipe.analysis.start_rules`), with the per-job
mechanism (:mod:`bacepipe.analysis.mechanism`, needs ``save_jobs=true``), one compares the
schedulers of role ``ours`` with BACE-Pipe (:mod:`bacepipe.analysis.ours`), and one reads the
claims and ours again on mixed GPU fleets, with the share of GPU-hours, energy and cost per GPU
type (:mod:`bacepipe.analysis.fleets`, SPEC §16). They are filled by the studies
``+preset=start_rules``, ``+preset=ours`` and the preset ``+preset=hetero``:
``--run --presets all,start_rules,ours,hetero,realistic`` runs them too. ``--topologies``
sets the topologies per point of every preset; ``--topologies-of NAME=N`` (repeatable) sets one
preset's instead, e.g. ``--topologies 1000 --topologies-of ours=10000``. Where two presets run the
same point, each section reads the point with the most topologies (as the claims do), and every
section states the topologies it read. Bad input prints one line and exits 2.

The sections that only format what they are given are in :mod:`bacepipe.reproduce.markdown`, the
motivation scenario in :mod:`bacepipe.reproduce.motivation_section`.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import polars as pl

from bacepipe.analysis import find_runs, paired_ratios, scan_runs, summarize, write_report
from bacepipe.analysis.claims import DEFAULT_RULE, evaluate_claims, model_filter
from bacepipe.analysis.fleets import fleet_section, type_shares
from bacepipe.analysis.mechanism import FIGURE as MECHANISM_FIGURE
from bacepipe.analysis.mechanism import (
    default_slack_points,
    mechanism_markdown,
    mechanism_rows,
    mechanism_table,
    plot_mechanism,
    scan_jobs,
)
from bacepipe.analysis.ours import (
    PLANE_FIGURE,
    evaluate_ours,
    loss_causes,
    ours_markdown,
    plot_plane,
)
from bacepipe.analysis.start_rules import compare_rules, start_rules_markdown
from bacepipe.analysis.stats import with_topologies
from bacepipe.analysis.world_facts import explain_worlds, measured_facts, model_world_facts
from bacepipe.analysis.worlds import evaluate_worlds, worlds_markdown
from bacepipe.analysis.yardsticks import gap_table
from bacepipe.cli import OneLineParser, run_cli
from bacepipe.errors import InputError
from bacepipe.io import atomic_write, atomic_write_text
from bacepipe.reproduce.markdown import (
    BOOT_SEED,
    FIGURE_TITLES,
    N_RESAMPLES,
    claims_markdown,
    figures_markdown,
    header_markdown,
    points_markdown,
)
from bacepipe.reproduce.motivation_section import motivation, motivation_facts, motivation_markdown
from bacepipe.validation import number

PROG = "reproduce"
DOC = "reproduction.md"
FIGURES = "figures"


def _parser() -> OneLineParser:
    p = OneLineParser(
        prog=PROG,
        description="The paper's headline claims against this project's sweeps: writes "
        "<out>/reproduction.md and <out>/figures/.")
    p.add_argument("--results", default="outputs/reproduction", metavar="DIR",
                   help="sweep results to read (and, with --run, to write); "
                   "default outputs/reproduction")
    p.add_argument("--out", default="docs", metavar="DIR",
                   help="where reproduction.md and figures/ go (default docs)")
    p.add_argument("--run", action="store_true", help="run the presets of --presets first")
    p.add_argument("--presets", default=",".join(PRESETS), metavar="NAMES",
                   help="comma-separated presets --run sweeps, in order (default "
                   f"{','.join(PRESETS)}; the studies: start_rules, ours; mixed "
                   "fleets: hetero)")
    p.add_argument("--topologies", type=int, default=1000, metavar="N",
                   help="topologies per sweep point with --run (default 1000)")
    p.add_argument("--topologies-of", action="append", default=[], metavar="NAME=N",
                   help="topologies per sweep point of one preset of --presets with --run, "
                   "instead of --topologies (repeatable; e.g. ours=10000)")
    return p


# --------------------------------------------------------------------------- steps


#: The presets ``--run`` sweeps, in order: the paper's figures, then the SPEC §12 worlds.
PRESETS = ("all", "realistic")


def preset_override(name: str) -> str:
    """The override that picks preset ``name``: ``+preset=<name>``."""
    return f"+preset={name}"


def topologies_of(values: Iterable[str], presets: Iterable[str]) -> dict[str, int]:
    """``--topologies-of`` values (``NAME=N``) as preset -> topologies per point.

    Raises
    ------
    InputError
        One line: a value without ``=``, a name not in ``presets``, a name given twice, or a
        count that is not an integer >= 1 (:func:`bacepipe.validation.number`).
    """
    presets = list(presets)
    out: dict[str, int] = {}
    for value in values:
        name, sep, count = (part.strip() for part in value.partition("="))
        if not sep or not name:
            raise InputError("--topologies-of", f"expected NAME=N, got {value!r}")
        if name not in presets:
            raise InputError("--topologies-of", f"{name} is not one of --presets "
                             f"({', '.join(presets)})")
        if name in out:
            raise InputError("--topologies-of", f"{name} given twice")
        try:
            given: int | str = int(count)
        except ValueError:
            given = count  # not an integer: number() names it
        out[name] = number(given, f"--topologies-of {name}", minimum=1, integer=True)
    return out


def run_presets(results: Path, topologies: int, presets: Iterable[str] = PRESETS,
                per_preset: Mapping[str, int] | None = None) -> None:
    """Every preset of ``presets`` (default :data:`PRESETS`) into ``results`` via
    ``python -m bacepipe.sweep -m +preset=<name>``, at ``topologies`` per point, or at
    ``per_preset[name]`` for a preset named there.

    Hydra's own output directories go under ``results/`` too (the sweep runs there), so the
    working directory stays clean. Raises InputError when a sweep fails.
    """
    per_preset = per_preset or {}
    results.mkdir(parents=True, exist_ok=True)
    for preset in presets:
        cmd = [sys.executable, "-m", "bacepipe.sweep", "-m", preset_override(preset),
               f"topologies={per_preset.get(preset, topologies)}", f"results_dir={results}"]
        print(f"{PROG}: {shlex.join(cmd[1:])}  (in {results})", flush=True)
        code = subprocess.call(cmd, cwd=results)
        if code:
            raise InputError("--run", f"the sweep {preset_override(preset)} exited with status "
                             f"{code}")


def write_reports(results: Path) -> tuple[pl.LazyFrame, pl.DataFrame, pl.DataFrame,
                                          dict[str, Path]]:
    """The report of every point, and of each scenario alone, under ``results/report``.

    Returns the scanned rows, their summary, their gaps to the yardsticks and, per scenario, its
    report directory.
    """
    sources = find_runs([results])
    lf = scan_runs(sources)
    summary = summarize(lf, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    if summary.is_empty():
        raise InputError(str(results), "the runs/ datasets hold no result rows")
    ratios = paired_ratios(lf).collect()
    gaps = gap_table(lf, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    jobs = scan_jobs(sources)
    types = type_shares(jobs) if jobs is not None else None
    report = results / "report"
    write_report(summary, report, ratios=ratios, sources=sources, gaps=gaps, types=types)
    per_scenario = {}
    if "scenario" in summary.columns:
        for scenario in sorted(summary["scenario"].drop_nulls().unique().to_list()):
            where = pl.col("scenario") == scenario
            per_scenario[scenario] = report / scenario
            write_report(summary.filter(where), report / scenario, ratios=ratios.filter(where),
                         sources=sources, gaps=gaps.filter(where),
                         types=None if types is None or types.is_empty() else
                         types.filter(where))
    print(f"{PROG}: report {report / 'report.md'}", flush=True)
    return lf, summary, gaps, per_scenario


def copy_figures(per_scenario: dict[str, Path], out: Path) -> dict[str, list[Path]]:
    """Copy each scenario's PNGs to ``out/figures/<scenario>/``; stale PNGs there are removed
    first, so a figure skipped this time does not linger from an earlier run."""
    copied: dict[str, list[Path]] = {}
    for scenario, report in per_scenario.items():
        dest = out / FIGURES / scenario
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.glob("*.png"):
            old.unlink()
        # The paper's figure order first, then anything the report adds later, by name.
        rank = {name: i for i, name in enumerate(FIGURE_TITLES)}
        pngs = sorted((report / FIGURES).glob("*.png"),
                      key=lambda p: (rank.get(p.name, len(rank)), p.name))
        copied[scenario] = [atomic_write(dest / png.name, lambda f, png=png: f.write(
            png.read_bytes())) for png in pngs]
    return copied










def mechanism_section(results: Path, lf: pl.LazyFrame, out: Path,
                      scenarios: Iterable[str]) -> tuple[list[str], list[int]]:
    """The per-job mechanism of the start rule: a table per scenario and its figure, written to
    ``out/figures/<scenario>/`` (after :func:`copy_figures`, which clears that folder); and the
    topologies of its rows."""
    jobs = scan_jobs([results])
    tables, figures = {}, {}
    if jobs is not None:
        allowed = default_slack_points(lf)
        for scenario in scenarios:
            rows = mechanism_rows(jobs, scenario, allowed)
            if rows.is_empty():
                continue
            tables[scenario] = mechanism_table(rows)
            fig = plot_mechanism(rows, f"{FIGURE_TITLES[MECHANISM_FIGURE]}: scenario="
                                 f"{scenario}, default point")
            path = out / FIGURES / scenario / MECHANISM_FIGURE
            atomic_write(path, lambda f, fig=fig: fig.savefig(f, dpi=120, format="png"))
            figures[scenario] = path.relative_to(out).as_posix()
    counts = [n for t in tables.values() for n in t["topologies"].to_list()]
    return mechanism_markdown(tables, figures), counts


def ours_section(lf: pl.LazyFrame, jobs: pl.LazyFrame | None, out: Path) -> list[str]:
    """Role ``ours`` against BACE-Pipe on ``random``, with the JCT–cost plane written to
    ``out/figures/random/`` when the default point holds a ratio, and the per-job mechanism
    where ``spt_plan``'s CI is not below 1 (from ``jobs``)."""
    result = evaluate_ours(lf, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    if result is None:
        return ours_markdown(None)
    figure = None
    if not result.plane.is_empty():
        fig = plot_plane(result)
        path = out / FIGURES / result.scenario / PLANE_FIGURE
        atomic_write(path, lambda f: fig.savefig(f, dpi=120, format="png"))
        figure = path.relative_to(out).as_posix()
    causes = loss_causes(result, jobs)
    counts = [*result.points["n_pairs"], *result.curve["n_pairs"],
              *(causes["topologies"] if not causes.is_empty() else [])]
    return with_topologies(ours_markdown(result, figure, causes), counts)


def build(results: Path, out: Path, command: str) -> Path:
    """Read ``results``, write the reports, copy the figures, write ``out/reproduction.md``."""
    lf, summary, gaps, per_scenario = write_reports(results)
    copied = copy_figures(per_scenario, out)
    claims = evaluate_claims(lf, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    md = header_markdown(command, results, summary)
    md += with_topologies(claims_markdown(claims), [e.n for r in claims for e in r.estimates])
    rules = compare_rules(lf, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    mechanism, per_job = mechanism_section(results, lf, out,
                                           list(dict.fromkeys(r.scenario for r in claims)))
    md += with_topologies(start_rules_markdown(rules) + mechanism,
                          [*(e.n for c in rules for r in c.results for e in r.estimates),
                           *per_job])
    # The worlds of SPEC §12 under the paper's own start rule, as the claims.
    greedy = lf.filter(model_filter(DEFAULT_RULE))
    jobs = scan_jobs([results])
    facts = {**model_world_facts(), **measured_facts(lf, jobs)}
    worlds, nulls = evaluate_worlds(greedy, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    md += with_topologies(worlds_markdown(worlds, nulls, explain_worlds(facts)),
                          [n for w in worlds for n in w.topologies])
    md += ours_section(lf, jobs, out)
    md += fleet_section(lf, jobs, out, n_resamples=N_RESAMPLES, seed=BOOT_SEED)
    md += motivation_markdown(motivation(), motivation_facts())
    md += figures_markdown(copied, out, summary, gaps)
    md += points_markdown(summary)
    return atomic_write_text(out / DOC, "\n".join(md))


def main(argv: list[str] | None = None) -> int:
    """Run (optionally) and write the reproduction document; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    command = shlex.join(["python", "-m", "bacepipe.reproduce", *argv])
    results, out = Path(args.results), Path(args.out)

    def body() -> int:
        number(args.topologies, "--topologies", minimum=1, integer=True)
        presets = [p.strip() for p in args.presets.split(",") if p.strip()]
        if not presets:
            raise InputError("--presets", "no preset named")
        per_preset = topologies_of(args.topologies_of, presets)
        if args.run:
            run_presets(results.resolve(), args.topologies, presets, per_preset)
        print(f"{PROG}: wrote {build(results, out, command)}")
        return 0

    return run_cli(PROG, body, io_errors=(pl.exceptions.PolarsError, OSError),
                   io_field=str(results))

