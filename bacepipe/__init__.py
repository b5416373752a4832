"""bacepipe: BACE-Pipe and its baselines for geo-distributed pipeline-parallel LLM training,
simulated on many topologies at once.

Public entry points: :func:`run_scenario` (one scenario, one scheduler → SPEC §9 dict),
:func:`generate_scenario` (the scenario behind any sweep row), :data:`SCHEDULERS`.
"""

from importlib.metadata import PackageNotFoundError, version

from bacepipe.errors import InputError
from bacepipe.model.generate import generate_scenario
from bacepipe.policies import SCHEDULERS
from bacepipe.sim.run import run_scenario

try:
    __version__ = version("bacepipe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["SCHEDULERS", "InputError", "__version__", "generate_scenario", "run_scenario"]
