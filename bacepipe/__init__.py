"""bacepipe: BACE-Pipe and its baselines for geo-distributed pipeline-parallel LLM training,
simulated on many topologies at once.

Public entry points: :func:`run_scenario` (one scenario, one scheduler → SPEC §9 dict),
:func:`generate_scenario` (the scenario behind any sweep row), :data:`SCHEDULERS`,
:func:`source_hash` (the version of the code that determines results). They are
imported on first use, so tools that never simulate (the report) do not load numba.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from bacepipe.errors import InputError
from bacepipe.policies import SCHEDULERS
from bacepipe.sources import source_hash

try:
    __version__ = version("bacepipe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

_LAZY = {"run_scenario": "bacepipe.sim.run", "generate_scenario": "bacepipe.model.generate"}

__all__ = ["SCHEDULERS", "InputError", "__version__", "generate_scenario", "run_scenario",
           "source_hash"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bacepipe' has no attribute {name!r}")
