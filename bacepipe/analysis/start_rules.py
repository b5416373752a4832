"""Each claim of SPEC §11 under both start rules of SPEC §13, side by side, and whether the rule
decides it.

A claim is evaluated once per rule by :func:`bacepipe.analysis.claims.evaluate_claims` on the rows
of that rule alone (the ``start_rule`` hive level), in the paper's world
(no SPEC §12 switch, one GPU type), with the same bootstrap settings, so every number here is the
claims machinery's own, recomputable from the Parquet rows. The rule *decides* a claim when the
two verdicts differ; the sentence says so, or says that the verdict is the same under both rules,
and how far our ratios moved. ``not run`` under either rule decides nothing (nothing is filled in).

The sweep that fills it: ``python -m bacepipe.sweep -m +preset=start_rules``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from bacepipe.analysis.claims import (
    CLAIMS,
    GROUPS,
    MATCH,
    MIXED,
    NOT_RUN,
    OPPOSITE,
    SAME,
    SCENARIOS,
    Claim,
    ClaimResult,
    evaluate_claims,
)
from bacepipe.analysis.roles import BASELINE

#: The start rules of SPEC §13, the default first.
RULES = ("greedy", "wait_if_faster")
#: The command that runs every claim's point under both rules.
STUDY_COMMAND = "python -m bacepipe.sweep -m +preset=start_rules"
DECIDES, SAME_UNDER_BOTH, UNDECIDED = "decides", "same", "not decided"


def verdict_kind(verdict: str) -> str:
    """The verdict's kind: ``mixed …`` verdicts count as :data:`MIXED`."""
    return MIXED if verdict.startswith(MIXED) else verdict


def comparison_outcome(results: Sequence[ClaimResult], differs: str) -> str:
    """``differs`` when the verdicts under the values of a switch differ, :data:`SAME_UNDER_BOTH`
    when they agree, :data:`UNDECIDED` when a value has no results."""
    if any(r.verdict == NOT_RUN for r in results):
        return UNDECIDED
    return SAME_UNDER_BOTH if len({r.verdict for r in results}) == 1 else differs


def means_text(result: ClaimResult) -> str:
    """Our mean ratio (one scheduler) or the range of the means (several)."""
    low, high = (f"{f(e.mean for e in result.estimates):.3f}" for f in (min, max))
    return low if low == high else f"{low}–{high}"


def claims_under(lf: pl.LazyFrame, claims: Iterable[Claim], scenarios: Iterable[str],
                 switch: str, values: Sequence[str], *, n_resamples: int,
                 seed: int) -> list[tuple[ClaimResult, ...]]:
    """Every claim on every scenario evaluated once per value of ``switch`` (a keyword of
    :func:`~bacepipe.analysis.claims.evaluate_claims`: ``start_rule`` or ``gpu_mix``): one tuple
    of results per (claim, scenario), in claim order, then scenario order."""
    claims, scenarios = list(claims), list(scenarios)
    per_value = [evaluate_claims(lf, claims, scenarios, n_resamples=n_resamples, seed=seed,
                                 **{switch: value}) for value in values]
    # evaluate_claims returns claim order, then scenario order, for every value alike.
    return [tuple(row) for row in zip(*per_value, strict=True)]


@dataclass(frozen=True)
class RuleComparison:
    """One claim on one scenario, evaluated under each rule of ``rules``."""

    claim: Claim
    scenario: str
    rules: tuple[str, ...]
    results: tuple[ClaimResult, ...]

    @property
    def outcome(self) -> str:
        """:data:`DECIDES` (verdicts differ), :data:`SAME_UNDER_BOTH` or :data:`UNDECIDED`
        (not run under some rule)."""
        return comparison_outcome(self.results, DECIDES)

    def sentence(self) -> str:
        """One computed sentence: does the start rule decide this claim?"""
        absent = [rule for rule, r in zip(self.rules, self.results, strict=True)
                  if r.verdict == NOT_RUN]
        if absent:
            return (f"Not decided here: no results under {' or '.join(absent)} "
                    f"(run `{STUDY_COMMAND}`).")
        moved = " → ".join(means_text(r) for r in self.results)
        verdicts = [r.verdict for r in self.results]
        if self.outcome == SAME_UNDER_BOTH:
            return (f"The start rule does not decide it: *{verdicts[0]}* under "
                    f"{' and '.join(self.rules)} (ours {moved}).")
        parts = ", ".join(f"*{v}* under {rule}"
                          for rule, v in zip(self.rules, verdicts, strict=True))
        kinds = {verdict_kind(v) for v in verdicts}
        side = ("; on the paper's side of 1 under both, so the rule decides only whether the "
                "size matches" if kinds <= {MATCH, SAME} else "")
        return f"The start rule decides it: {parts}{side} (ours {moved})."


def compare_rules(
    lf: pl.LazyFrame,
    claims: Iterable[Claim] = CLAIMS,
    scenarios: Iterable[str] = SCENARIOS,
    rules: Sequence[str] = RULES,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[RuleComparison]:
    """Every claim on every scenario under each rule, in claim order, then scenario order.

    Parameters
    ----------
    lf : polars.LazyFrame
        Result rows as made by :func:`bacepipe.analysis.scan_runs`.
    claims, scenarios : as :func:`~bacepipe.analysis.claims.evaluate_claims`.
    rules : the SPEC §13 rules to compare (default :data:`RULES`).
    n_resamples, seed : bootstrap settings, as :func:`bacepipe.analysis.summarize`.
    """
    rules = tuple(rules)
    return [RuleComparison(row[0].claim, row[0].scenario, rules, row)
            for row in claims_under(lf, claims, scenarios, "start_rule", rules,
                                    n_resamples=n_resamples, seed=seed)]


def estimates_text(result: ClaimResult) -> str:
    """Our ratio with its CI (one scheduler) or one line per scheduler (a range), or —."""
    if not result.estimates:
        return "—"
    if not result.claim.is_range:
        return result.estimates[0].text()
    return "<br>".join(f"{e.scheduler} {e.text()}" for e in result.estimates)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def outcome_counts(comparisons: Iterable[RuleComparison]) -> dict[str, dict[str, int]]:
    """scenario -> outcome (:data:`DECIDES`, :data:`SAME_UNDER_BOTH`, :data:`UNDECIDED`) ->
    count."""
    counts: dict[str, dict[str, int]] = {}
    for c in comparisons:
        per = counts.setdefault(c.scenario, {})
        per[c.outcome] = per.get(c.outcome, 0) + 1
    return counts


def start_rules_markdown(comparisons: list[RuleComparison]) -> list[str]:
    """The side-by-side section of ``reproduction.md``: counts per scenario, then per claim
    group a table (claim, paper, scenario, ours and verdict under each rule, n, the sentence)."""
    rules = comparisons[0].rules if comparisons else RULES
    md = ["## The start rule (SPEC §13): each claim under both rules", "",
          f"SPEC §5 starts a job on whatever its policy offers and keeps it for life (`greedy`, "
          f"the paper's literal reading and the default); under `wait_if_faster` a job offered "
          f"fewer than K* GPUs waits when a projection of the running jobs' releases says it "
          f"would finish sooner. Each claim of the section above is evaluated again on the rows "
          f"of each rule alone, with the same statistics (mean paired ratio to "
          f"{BASELINE}, 95 % percentile-bootstrap CI, n topologies) and verdict rules. The rule "
          f"*decides* a claim when its verdicts differ. Sweep: `{STUDY_COMMAND}`.", ""]
    counts = outcome_counts(comparisons)
    scenarios = list(counts)
    md += [_row(["claims", *scenarios]), _row(["---"] + ["---:"] * len(scenarios))]
    labels = {DECIDES: "decided by the start rule", SAME_UNDER_BOTH: "same verdict under both",
              UNDECIDED: "not run under some rule"}
    md += [_row([label, *(str(counts[s].get(k, 0)) for s in scenarios)])
           for k, label in labels.items()]
    for rule in rules:
        i = rules.index(rule)
        for kind in (MATCH, SAME, MIXED, OPPOSITE):
            n = {s: sum(1 for c in comparisons if c.scenario == s
                        and verdict_kind(c.results[i].verdict) == kind) for s in scenarios}
            md.append(_row([f"{kind} under {rule}", *(str(n[s]) for s in scenarios)]))
    md.append("")
    header = ["claim (paper)", "paper ratio", "scenario"]
    for rule in rules:
        header += [f"{rule}: ours [95 % CI]", f"{rule}: verdict"]
    header += ["n", "does the start rule decide it?"]
    for group, title in GROUPS.items():
        rows = [c for c in comparisons if c.claim.group == group]
        if not rows:
            continue
        md += [f"### {title}", "", _row(header), _row(["---"] * len(header))]
        for c in rows:
            ref = "" if c.claim.baseline == BASELINE else f" (vs {c.claim.baseline})"
            cells = [c.claim.text + ref, c.claim.paper_text(), c.scenario]
            for r in c.results:
                cells += [estimates_text(r), f"**{r.verdict}**"]
            ns = [str(min(e.n for e in r.estimates)) if r.estimates else "—"
                  for r in c.results]
            cells += [" / ".join(ns), c.sentence()]
            md.append(_row(cells))
        md.append("")
    return md
