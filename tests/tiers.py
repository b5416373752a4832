"""Test tiers: a fast tier that the README's test command runs, and a long tier for breadth.

``python -m pytest`` runs the fast tier; ``--tier long`` runs what the fast tier leaves out,
``--tier all`` both (``.ci/run`` runs fast, then long). A test marked ``long`` runs only in the
long tier (recompiles, many seeds, the docs' commands). A test marked ``breadth`` runs in both:
in the fast tier on a share of its examples (:func:`examples`, :func:`share`), in the long tier
on all of them, so every scheduler and switch is still compared on every run of the fast tier.
"""

#: The tier this session runs (set by ``conftest.py`` from ``--tier`` before any test module is
#: imported).
TIER = "fast"
#: The fast tier draws one example in FAST_SHARE.
FAST_SHARE = 10


def full() -> bool:
    """Whether this session runs every example (the long tier, or all)."""
    return TIER != "fast"


def examples(n: int) -> int:
    """Hypothesis examples of a ``breadth`` test: ``n`` in the long tier, a tenth (at least 5)
    in the fast tier."""
    return n if full() else max(5, n // FAST_SHARE)


def share(values):
    """The parameters of a ``breadth`` test: all in the long tier, the first ones (a tenth, at
    least one) in the fast tier."""
    values = list(values)
    return values if full() else values[:max(1, len(values) // FAST_SHARE)]
