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
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import polars as pl

import bacepipe
from bacepipe.analysis import find_runs, paired_ratios, scan_runs, summarize, write_report
from bacepipe.analysis.claims import (
    DEFAULT_RULE,
    GROUPS,
    MATCH,
    MIXED,
    NOT_RUN,
    OPPOSITE,
    SAME,
    ClaimResult,
    evaluate_claims,
    explain,
    model_filter,
    verdict_counts,
)
from bacepipe.analysis.fleets import FIGURE as FLEET_FIGURE
from bacepipe.analysis.fleets import fleet_section, type_shares
from bacepipe.analysis.mechanism import (
    FIGURE as MECHANISM_FIGURE,
)
from bacepipe.analysis.mechanism import (
    default_slack_points,
    mechanism_markdown,
    mechanism_rows,
    mechanism_table,
    plot_mechanism,
    scan_jobs,
)
from bacepipe.analysis.model_facts import model_facts
from bacepipe.analysis.ours import (
    PLANE_FIGURE,
    evaluate_ours,
    loss_causes,
    ours_markdown,
    plot_plane,
)
from bacepipe.analysis.roles import BASELINE, scheduler_order
from bacepipe.analysis.schema import point_columns
from bacepipe.analysis.start_rules import compare_rules, start_rules_markdown
from bacepipe.analysis.stats import (
    at_point,
    axis_slice,
    points,
    reference_point,
    topologies_sentence,
    with_topologies,
)
from bacepipe.analysis.world_facts import explain_worlds, measured_facts, model_world_facts
from bacepipe.analysis.worlds import evaluate_worlds, worlds_markdown
from bacepipe.analysis.yardsticks import CONTENTION_AXES, contention_slice, gap_table
from bacepipe.analysis.yardsticks import FIGURE as GAP_FIGURE
from bacepipe.cli import OneLineParser, run_cli
from bacepipe.errors import InputError
from bacepipe.io import atomic_write, atomic_write_text
from bacepipe.validation import number

PROG = "reproduce"
DOC = "reproduction.md"
FIGURES = "figures"
N_RESAMPLES, BOOT_SEED = 2000, 0
#: The paper's Fig. 1 numbers (SPEC §8): (label, our scheduler, avg JCT h, total cost $).
#: ``q_first`` runs BACE-Pipe's placement with Q listed first: the paper's "order Q, P".
MOTIVATION = (
    ("LCF", "lcf", 1.50, 0.53),
    ("LDF", "ldf", 1.32, 0.56),
    ("BACE-Pipe placement, FCFS order (P, Q)", "bace_pipe_no_priority", 1.27, 0.55),
    ("BACE-Pipe with priority (paper: order Q, P)", "bace_pipe", 0.75, 0.52),
    ("BACE-Pipe placement, Q placed first", "q_first", 0.75, 0.52),
)
#: Kept verbatim: why our motivation numbers differ from the figure (SPEC §8).
MOTIVATION_EXPLANATION = (
    "The paper's Fig. 1 is illustrative; this project never tunes its model to hit it (SPEC §8). "
    "Four of its six link values are our reading of the figure (A–B 700, A–D 300, B–C 300, C–D 400 "
    "Mbit/s). Under SPEC §2 both jobs have K* = 11, the whole cluster, and one epoch of "
    "Alpaca-52k takes hours on a few A6000s at 40 % MFU, so every time and cost is far larger than "
    "the figure's. A pipeline needs b_j(g) = a_j / t_comp(g) per hop, which grows with its GPU "
    "count g, so the 0.2–1 Gbit/s links carry only short pipelines of P (see above): the "
    "placements differ from the figure's. BACE-Pipe's priority at t = 0 (α = 0) is 1 − I_j, "
    "which favours the job with the shorter single-GPU time; whether that is P or Q is shown "
    "above.")
FIGURE_TITLES = {
    "fig4_normalized.png": "Fig. 4: normalized avg JCT and cost per scheduler",
    "fig5_bandwidth.png": "Fig. 5: vs bandwidth scale",
    "fig6_gpu.png": "Fig. 6: vs GPU scale",
    "fig7_jobs.png": "Fig. 7: vs number of jobs",
    "fig8_ablation.png": "Fig. 8: ablation",
    "jct_vs_cost.png": "avg JCT vs total cost (Pareto front)",
    "jct_ratio_cdf.png": "CDF of per-topology avg-JCT ratios",
    MECHANISM_FIGURE: "GPUs at start ÷ K* and waiting time per scheduler and start rule",
    PLANE_FIGURE: "JCT–cost plane of role ours, with spt_plan's plan_slack curve",
    FLEET_FIGURE: "share of GPU-hours, energy and cost by GPU type (gpu_mix=cloud)",
    GAP_FIGURE: "avg JCT ÷ lower bound (SPEC §15) by GPU scale and job count",
}


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


def motivation() -> list[dict]:
    """The motivation scenario under each schedule of :data:`MOTIVATION` (SPEC §9 dicts)."""
    from bacepipe.model.generate import generate_scenario

    scenario = generate_scenario("motivation")
    swapped = {**scenario, "jobs": list(reversed(scenario["jobs"]))}
    out = []
    for _, name, _, _ in MOTIVATION:
        if name == "q_first":
            run = bacepipe.run_scenario(swapped, "bace_pipe_no_priority")
            run["jobs"] = list(reversed(run["jobs"]))  # back to P, Q for the table
        else:
            run = bacepipe.run_scenario(scenario, name)
        out.append(run)
    return out


def motivation_facts() -> list[str]:
    """Computed facts behind the placements: K*, b_j(K*), the largest pipeline each link speed
    carries, and BACE-Pipe's priorities at t = 0 (SPEC §2, §6), from the reference twin."""
    from bacepipe.model.generate import load_scenario
    from bacepipe.policies.priority import twin as order_priority
    from bacepipe.sim.reference import hop_feasible, job_model, min_bandwidth_bps

    sc = load_scenario("motivation")
    total = sum(r.gpus for r in sc.regions)
    models = [job_model(j, sc.hardware, total, index=i) for i, j in enumerate(sc.jobs)]
    speeds = sorted({b for row in sc.links_gbps for b in row if b > 0})
    lines = []
    for job, jm in zip(sc.jobs, models, strict=True):
        largest = [max((g for g in range(1, jm.k_star + 1) if hop_feasible(jm, b, g)), default=0)
                   for b in speeds]
        carry = ", ".join(f"{b:g} → {g}" for b, g in zip(speeds, largest, strict=True))
        lines.append(f"- {job.name} ({job.model}): K* = {jm.k_star}, b_j(K*) = "
                     f"{min_bandwidth_bps(jm, jm.k_star) / 1e9:.2f} Gbit/s, "
                     f"E_j(1) = {jm.exec_1gpu_s / 3600:.1f} h; largest pipeline a link of "
                     f"x Gbit/s admits (x → GPUs): {carry}.")
    e_max = max(m.exec_1gpu_s for m in models)
    prio = {sc.jobs[j].name: 1 - models[j].exec_1gpu_s / e_max for j in range(len(models))}
    order = [sc.jobs[j].name for j in order_priority(range(len(models)), models, [0.0] * 2, 0.0)]
    shown = ", ".join(f"{n} {p:.3f}" for n, p in prio.items())
    same = "the same as" if order == [j.name for j in sc.jobs] else "not"
    lines.append(f"- BACE-Pipe's priority at t = 0 (α = 0): {shown}; it places "
                 f"{', then '.join(order)}: {same} FCFS order.")
    return lines


# --------------------------------------------------------------------------- markdown


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(r) + " |" for r in (header, ["---"] * len(header), *rows)]


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _ours(result: ClaimResult) -> str:
    if not result.estimates:
        return "—"
    if not result.claim.is_range:
        return result.estimates[0].text()
    return "<br>".join(f"{e.scheduler} {e.text()}" for e in result.estimates)


def claims_markdown(results: list[ClaimResult],
                    explanations: Mapping[str, str] | None = None) -> list[str]:
    """The claims section of ``reproduction.md``: a verdict count, then per group a table
    (claim, paper, scenario, ours, n, verdict, reason) and its explanation (default: the
    templates of :data:`EXPLANATIONS` filled by the current model, :func:`model_facts`)."""
    if explanations is None:
        explanations = explain(model_facts())
    md = ["## Headline claims (SPEC §11)", "",
          "Every number is a mean of paired per-topology ratios (value / value of the reference "
          "scheduler on the same topology) with its 95 % percentile-bootstrap CI. The paper's "
          "\"x % longer\" is the ratio 1 + x/100. Verdicts: *matches within CI* (the paper's value "
          "lies in our CI; for a range: every scheduler's CI overlaps it), *same direction* (on "
          "the paper's side of 1), *opposite*, *mixed* (some schedulers on each side, the "
          "opposite ones named), *not run* (no results: nothing is filled in). Rows are read "
          f"under the `{DEFAULT_RULE}` start rule (SPEC §5's literal reading); the next section "
          "reads each claim under both rules of SPEC §13.", ""]
    counts = verdict_counts(results)
    scenarios = list(dict.fromkeys(r.scenario for r in results))
    kinds = [MATCH, SAME, MIXED, OPPOSITE, NOT_RUN]
    md += [_row(["verdict", *scenarios]), _row(["---"] + ["---:"] * len(scenarios))]
    md += [_row([k, *(str(counts.get(s, {}).get(k, 0)) for s in scenarios)]) for k in kinds]
    md.append("")
    for group, title in GROUPS.items():
        rows = [r for r in results if r.claim.group == group]
        if not rows:
            continue
        md += [f"### {title}", ""]
        md += [_row(["claim (paper)", "paper ratio", "scenario", "ours [95 % CI]", "n",
                     "verdict", "reason"]), _row(["---"] * 7)]
        for r in rows:
            n = str(min(e.n for e in r.estimates)) if r.estimates else "—"
            ref = "" if r.claim.baseline == BASELINE else f" (vs {r.claim.baseline})"
            md.append(_row([r.claim.text + ref, r.claim.paper_text(), r.scenario, _ours(r), n,
                            f"**{r.verdict}**", r.reason]))
        text = explanations.get(group, "Not yet analysed.")
        md += ["", f"*Explanation (words human-written, `EXPLANATIONS[\"{group}\"]` in "
               "`bacepipe/analysis/claims.py`; every number computed from the current model on "
               "the shipped data by `bacepipe.analysis.model_facts`):* " + text, ""]
    return md


def motivation_markdown(runs: list[dict], facts: list[str]) -> list[str]:
    """The motivation section: paper vs ours per schedule, then every job's placement."""
    md = ["## Motivation scenario (paper Fig. 1, SPEC §8)", "",
          "Regions A (4 GPUs, $0.230/kWh), B (3, 0.222), C (2, 0.191), D (2, 0.291); jobs "
          "P = Qwen2.5-14B, then Q = Llama-3.1-70B, both on Alpaca-52k. Simulated by "
          "`bacepipe.run_scenario(\"motivation\", scheduler)`; the last row lists Q before P in "
          "the scenario, so FCFS places Q first.", "", *facts, ""]
    rows = [[label, f"`{name}`" if name != "q_first" else "`bace_pipe_no_priority`, Q first",
             f"{pj:.2f}", f"{r['avg_jct_h']:.2f}", f"{pc:.2f}", f"{r['total_cost']:.2f}"]
            for (label, name, pj, pc), r in zip(MOTIVATION, runs, strict=True)]
    md += _table(["schedule (paper)", "ours", "paper avg JCT h", "our avg JCT h",
                  "paper cost $", "our cost $"], rows)
    md += ["", "Per job (paper's Fig. 1 placements are in the figure; ours below):", ""]
    rows = []
    for (label, _, _, _), r in zip(MOTIVATION, runs, strict=True):
        for j in r["jobs"]:
            gpus = ", ".join(f"{k} {v}" for k, v in j["gpus"].items())
            rows.append([label, j["name"], str(j["k_star"]), " → ".join(j["path"]), gpus,
                         f"{j['start_h']:.2f}", f"{j['jct_h']:.2f}", f"{j['cost']:.2f}"])
    md += _table(["schedule", "job", "K*", "path", "GPUs", "start h", "JCT h", "cost $"], rows)
    md += ["", "*Why they differ (human-written, `MOTIVATION_EXPLANATION` in "
           "`bacepipe/reproduce.py`):* " + MOTIVATION_EXPLANATION, ""]
    return md


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def header_markdown(command: str, results: Path, summary: pl.DataFrame) -> list[str]:
    """Title, the exact command, date, machine, version, and topologies per point."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    sizes = summary.group_by(point_columns(summary.columns)).agg(pl.col("n_topologies").max())
    counts = sizes.group_by("n_topologies").len().sort("n_topologies").rows()
    per_point = (str(counts[0][0]) if len(counts) == 1 else
                 ", ".join(f"{n} ({k} point{'s' * (k != 1)})" for n, k in counts)
                 + "; each section says which it reads")
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [
        "# Reproduction of the paper's headline results", "",
        f"Generated by `{command}` (do not edit by hand; the explanation paragraphs are kept in "
        "the code and copied unchanged).", "",
        f"- date: {now}",
        f"- machine: {_cpu()}, {os.cpu_count()} cores ({usable} usable), "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        f"- bacepipe {bacepipe.__version__}",
        f"- results: `{results}` ({points(summary).height} sweep points); full report: "
        f"`{results / 'report' / 'report.md'}`",
        f"- topologies per point: {per_point}",
        f"- CIs: percentile bootstrap, {N_RESAMPLES} resamples, seed {BOOT_SEED}", "",
    ]


def figure_topologies(summary: pl.DataFrame, gaps: pl.DataFrame) -> list[int]:
    """Topologies of the points the report draws for one scenario's ``summary`` and ``gaps``:
    Fig. 4-8, the scatter and the CDF at :func:`~bacepipe.analysis.stats.reference_point` and
    on the axis slices, the gaps to the lower bound on their contention slices."""
    frames = [at_point(summary, reference_point(summary))]
    frames += [f for axis in ("bandwidth_scale", "gpu_scale", "num_jobs")
               if (f := axis_slice(summary, axis)[0]) is not None]
    frames += [f for axis, _ in CONTENTION_AXES
               if (f := contention_slice(gaps, axis)[0]) is not None]
    return [n for f in frames for n in f["n_topologies"].to_list()]


#: Figures written into a scenario's folder by a section of the document, not by the report.
SECTION_FIGURES = {MECHANISM_FIGURE, PLANE_FIGURE, FLEET_FIGURE}


def figures_markdown(copied: dict[str, list[Path]], out: Path, summary: pl.DataFrame,
                     gaps: pl.DataFrame) -> list[str]:
    md = ["## Figures", "", "Made by the report (`bacepipe.analysis.make_figures`) for each "
          "scenario; every ratio is to `bace_pipe` on the same topology, error bars 95 % CIs.", ""]
    for scenario, files in copied.items():
        where = pl.col("scenario") == scenario
        md += [f"### scenario = {scenario}", "", *topologies_sentence(
            figure_topologies(summary.filter(where), gaps.filter(where)), "by figure")]
        # Figures of their own sections (drawn there, or said why not) are not repeated here.
        files = [f for f in files if f.name not in SECTION_FIGURES]
        names = {f.name for f in files}
        gone = [t for n, t in FIGURE_TITLES.items() if n not in names | SECTION_FIGURES]
        for f in files:
            title = FIGURE_TITLES.get(f.name, f.stem)
            md += [f"**{title}**", "", f"![{title}]({f.relative_to(out).as_posix()})", ""]
        if gone:
            md += [f"Not drawn (see the scenario's report.md for why): {'; '.join(gone)}.", ""]
    return md


def points_markdown(summary: pl.DataFrame) -> list[str]:
    cols = point_columns(summary.columns)
    table = (summary.group_by(cols, maintain_order=True)
             .agg(pl.col("scheduler"), pl.col("n_topologies").max()).sort(cols))
    rows = [[*(str(r[c]) for c in cols), str(r["n_topologies"]),
             ", ".join(scheduler_order(r["scheduler"]))] for r in table.iter_rows(named=True)]
    return ["## Sweep points read", "", *_table([*cols, "topologies", "schedulers"], rows), ""]


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


if __name__ == "__main__":
    sys.exit(main())
