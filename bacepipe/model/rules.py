"""The schedulers' rules (SPEC §13-14): what a simulation is told besides the world it runs on.

A run's world is a :class:`~bacepipe.model.scenario.Scenario` (regions, links, jobs, prices, GPU
types); its :class:`Rules` are the start rule of every scheduler that does not fix its own
(SPEC §13) and the slack ε of ``spt_plan`` (SPEC §14). A scenario file may set both, as its
top-level keys ``start_rule`` and ``plan_slack``: :func:`split_rules` takes them off the file's
mapping before the world is parsed, and from there on the two travel apart (the simulation takes
them as two arguments).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import partial

from bacepipe.errors import InputError
from bacepipe.validation import choice, number

#: The start rules a scenario (or sweep) may name (SPEC §13); ``greedy`` is §5 exactly.
START_RULES = ("greedy", "wait_if_faster")


def _rule(default, check):
    """A field of :class:`Rules`: its default and its check, ``(value, name) -> value``."""
    return field(default=default, metadata={"check": check})


@dataclass(frozen=True)
class Rules:
    """What every scheduler of a run is told besides the world.

    Attributes
    ----------
    start_rule : ``greedy`` (a job starts on whatever its placement offers, SPEC §5) or
        ``wait_if_faster`` (it may wait for a wider placement, SPEC §13); a scheduler that fixes
        its own start rule (``spt_wait``, ``spt_plan``) ignores it.
    plan_slack : the slack ε >= 0 of ``spt_plan`` (SPEC §14), dimensionless: an option is kept
        while its JCT is within (1 + ε) of the least.
    """

    start_rule: str = _rule("greedy", partial(choice, options=START_RULES))
    # The bound keeps (1 + ε)·JCT finite for every JCT a validated scenario can reach.
    plan_slack: float = _rule(0.2, partial(number, minimum=0.0, maximum=1e6))

    def updated(self, given: Mapping) -> Rules:
        """These rules with the values of ``given`` that are not None, each checked.

        Raises
        ------
        InputError
            A name that is not a rule, or a value its check refuses (naming the rule).
        """
        for name in given:
            if name not in RULE_CHECKS:
                raise InputError(str(name), f"not a rule of the schedulers (known: "
                                 f"{', '.join(RULE_CHECKS)})")
        return replace(self, **{name: RULE_CHECKS[name](value, name)
                                for name, value in given.items() if value is not None})

    def to_dict(self) -> dict:
        """The rules that differ from the defaults, as scenario keys (SPEC §9 shape)."""
        default = Rules()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}


#: The rules of the paper (SPEC §5: greedy starts), with SPEC §14's default slack.
PAPER_RULES = Rules()
#: Each rule's check, ``(value, name) -> value``: a sweep's values are checked by the same.
RULE_CHECKS = {f.name: f.metadata["check"] for f in fields(Rules)}


def split_rules(data) -> tuple[object, Rules]:
    """A scenario mapping without its rules' keys, and those rules (checked; the defaults where
    a key is absent). Anything but a mapping is returned as it is, with the defaults:
    parsing the world reports it."""
    if not isinstance(data, Mapping):
        return data, Rules()
    world = {key: value for key, value in data.items() if key not in RULE_CHECKS}
    return world, Rules(**{key: check(data[key], key) for key, check in RULE_CHECKS.items()
                           if key in data})
