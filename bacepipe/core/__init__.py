"""The numba core: :func:`simulate_batch` runs many topologies × schedulers in one call.

Kernels live in :mod:`~bacepipe.core.model` (job model), :mod:`~bacepipe.core.placement` and
:mod:`~bacepipe.core.projection` (what the parts of :mod:`bacepipe.policies` share),
:mod:`~bacepipe.core.bounds` (SPEC §15's lower bound), :mod:`~bacepipe.core.loop` (event
loop) and :mod:`~bacepipe.core.batch` (the batched entry point); :mod:`~bacepipe.core.entry`
validates and converts. The readable twin of every kernel is :mod:`bacepipe.sim.model` and
:mod:`bacepipe.sim.reference` (with the parts' own twins).

The names of :mod:`~bacepipe.core.entry` are exported on first use: the event loop imports the
built-in parts, whose modules import :mod:`bacepipe.policies.api`, which imports
``bacepipe.core.jit`` and ``bacepipe.core.structs`` — so this package must not import the loop
when it is first imported (``from bacepipe.policies.api import placement_kernel`` may come
first).
"""

from importlib import import_module


def __getattr__(name: str):
    entry = import_module("bacepipe.core.entry")
    try:
        return getattr(entry, name)
    except AttributeError:
        raise AttributeError(f"module 'bacepipe.core' has no attribute {name!r}") from None
