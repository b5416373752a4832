"""Scheduler roles in the report: groupings, the reference of every ratio, order and colours.

The policy registry (:mod:`bacepipe.policies`) gives each scheduler a role: ``paper`` (the one
scheduler every ratio is normalized to), ``baseline``, ``ablation``, ``ours`` or ``user``
(anything the registry does not know, e.g. a plug-in read back from Parquet). The report never
lists scheduler names itself: which figure shows a scheduler, the order of table rows and legend
entries, and its colour all follow from its role, so any number of schedulers works.

Colours: the reference scheduler is black; each other role has its own hue family (a matplotlib
sequential colormap), and a scheduler's shade is its rank among the names of its role in the
palette (:func:`palette`), so one report colours a scheduler the same in every figure. Line
figures add a marker per rank, so two schedulers of one role stay apart even when their shades
are close.
"""

from __future__ import annotations

from collections.abc import Iterable

from bacepipe.policies import REFERENCE_SCHEDULER, ROLES, SCHEDULERS, role_of

#: The scheduler every ratio is normalized to: the one scheduler of role ``paper``.
BASELINE = REFERENCE_SCHEDULER
#: Hue family per role (matplotlib colormap names); ``paper`` is plain black.
ROLE_CMAPS = {"baseline": "Blues", "ablation": "Oranges", "ours": "Greens", "user": "Purples"}
PAPER_COLOR = "#1b1b1b"
#: Markers cycled by rank within a role (line and scatter figures).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")


def of_role(names: Iterable[str], *roles: str) -> list[str]:
    """The names among ``names`` whose role is one of ``roles``, in :func:`scheduler_order`."""
    return [n for n in scheduler_order(names) if role_of(n) in roles]


def registered(*roles: str) -> tuple[str, ...]:
    """The registered schedulers of ``roles``, in registry order."""
    return tuple(n for n in SCHEDULERS if role_of(n) in roles)


#: The registered schedulers of role ``baseline`` and ``ablation``, in registry order.
BASELINES = registered("baseline")
ABLATIONS = registered("ablation")


def scheduler_order(names: Iterable[str]) -> list[str]:
    """``names`` (deduplicated) by role (:data:`ROLES` order), then registry order, then name."""
    rank = {name: i for i, name in enumerate(SCHEDULERS)}
    return sorted(set(names), key=lambda n: (ROLES.index(role_of(n)), rank.get(n, len(rank)), n))


def palette(names: Iterable[str]) -> dict[str, tuple[str | tuple[float, ...], str]]:
    """Colour and marker of every name, by role and rank within the role.

    Parameters
    ----------
    names : iterable of str
        Every scheduler the report shows (pass all of them once, so each figure draws a
        scheduler alike).

    Returns
    -------
    dict
        name -> (colour, marker): a hex string or an RGBA tuple, and a matplotlib marker.
    """
    from matplotlib import colormaps  # figures only: keep matplotlib out of plain imports

    out: dict[str, tuple[str | tuple[float, ...], str]] = {}
    ordered = scheduler_order(names)
    for r in ROLES:
        mine = [n for n in ordered if role_of(n) == r]
        if r == "paper":
            out.update((n, (PAPER_COLOR, MARKERS[i % len(MARKERS)])) for i, n in enumerate(mine))
            continue
        cmap = colormaps[ROLE_CMAPS[r]]
        for i, n in enumerate(mine):
            # Shades from mid to dark: the light end of a sequential map is invisible on white.
            shade = 0.85 if len(mine) == 1 else 0.45 + 0.5 * i / (len(mine) - 1)
            out[n] = (tuple(float(c) for c in cmap(shade)), MARKERS[i % len(MARKERS)])
    return out
