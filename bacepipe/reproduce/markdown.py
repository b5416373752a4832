"""The markdown of ``reproduction.md`` that reads only what it is given: the header, the claims
table, the figures and the sweep points (the sections that write figures are in
:mod:`bacepipe.reproduce`)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Iterable, Mapping
from pathlib import Path

import polars as pl

import bacepipe
from bacepipe.analysis.claims import (
    DEFAULT_RULE,
    GROUPS,
    MATCH,
    MIXED,
    NOT_RUN,
    OPPOSITE,
    SAME,
    ClaimResult,
    explain,
    verdict_counts,
)
from bacepipe.analysis.fleets import FIGURE as FLEET_FIGURE
from bacepipe.analysis.mechanism import FIGURE as MECHANISM_FIGURE
from bacepipe.analysis.model_facts import model_facts
from bacepipe.analysis.ours import PLANE_FIGURE
from bacepipe.analysis.roles import BASELINE, scheduler_order
from bacepipe.analysis.schema import point_columns
from bacepipe.analysis.stats import (
    at_point,
    axis_slice,
    points,
    reference_point,
    topologies_sentence,
)
from bacepipe.analysis.yardsticks import CONTENTION_AXES, contention_slice
from bacepipe.analysis.yardsticks import FIGURE as GAP_FIGURE

#: Bootstrap resamples and seed of every CI in the document.
N_RESAMPLES, BOOT_SEED = 2000, 0

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


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(r) + " |" for r in (header, ["---"] * len(header), *rows)]


def markdown_row(cells: Iterable[str]) -> str:
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
    md += [markdown_row(["verdict", *scenarios]),
           markdown_row(["---"] + ["---:"] * len(scenarios))]
    md += [markdown_row([k, *(str(counts.get(s, {}).get(k, 0)) for s in scenarios)])
           for k in kinds]
    md.append("")
    for group, title in GROUPS.items():
        rows = [r for r in results if r.claim.group == group]
        if not rows:
            continue
        md += [f"### {title}", ""]
        md += [markdown_row(["claim (paper)", "paper ratio", "scenario", "ours [95 % CI]", "n",
                             "verdict", "reason"]), markdown_row(["---"] * 7)]
        for r in rows:
            n = str(min(e.n for e in r.estimates)) if r.estimates else "—"
            ref = "" if r.claim.baseline == BASELINE else f" (vs {r.claim.baseline})"
            md.append(markdown_row([r.claim.text + ref, r.claim.paper_text(), r.scenario,
                                    _ours(r), n, f"**{r.verdict}**", r.reason]))
        text = explanations.get(group, "Not yet analysed.")
        md += ["", f"*Explanation (words human-written, `EXPLANATIONS[\"{group}\"]` in "
               "`bacepipe/analysis/claims.py`; every number computed from the current model on "
               "the shipped data by `bacepipe.analysis.model_facts`):* " + text, ""]
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
    read = (summary.group_by(cols, maintain_order=True)
            .agg(pl.col("scheduler"), pl.col("n_topologies").max()).sort(cols))
    rows = [[*(str(r[c]) for c in cols), str(r["n_topologies"]),
             ", ".join(scheduler_order(r["scheduler"]))] for r in read.iter_rows(named=True)]
    return ["## Sweep points read", "",
            *markdown_table([*cols, "topologies", "schedulers"], rows), ""]
