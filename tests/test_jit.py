"""The package's kernels index arrays without numba's wrap of negative indices; every other
function keeps it (bacepipe.core.jit._unwrapped_index)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from bacepipe.core import jit

# A negative index test on the index argument: numba's wrap (``if i < 0: i += n``).
WRAP = re.compile(r"icmp slt i64 %arg\.i, 0")


def _at(module: str):
    """``a[i]`` compiled as a function of ``module``."""
    namespace = {"__name__": module}
    exec("def at(a, i):\n    return a[i]\n", namespace)
    return numba.njit(namespace["at"])


def _ir(fn) -> str:
    fn(np.arange(3.0), 1)
    return next(iter(fn.inspect_llvm().values()))


def test_a_function_of_the_package_indexes_without_the_wrap():
    at = _at("bacepipe.core.index_probe")
    assert not WRAP.search(_ir(at))
    assert next(iter(at.overloads.values())).fndesc.mangled_name.startswith(
        jit.OWN_SYMBOL_PREFIX)
    assert at(np.arange(3.0), 2) == 2.0


def test_a_function_of_another_module_keeps_numba_s_wrap():
    for module in ("user_kernels", "bacepipe_plugin_0123456789abcdef", "bacepipes"):
        at = _at(module)
        assert WRAP.search(_ir(at)), module
        assert at(np.arange(3.0), -1) == 2.0


# The core on settings that reach every built-in part and start rule, under numba's bounds
# check, in a fresh cache: an index below 0 (no longer wrapped) or past the end raises.
BOUNDS_PROBE = """
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
from bacepipe.model.rules import Rules
from bacepipe.policies import SCHEDULER_PARTS
names = tuple(SCHEDULER_PARTS)
for rule in ("greedy", "wait_if_faster"):
    for options in (dict(gpu_mix="cloud", price_profile="business"),
                    dict(num_jobs=40, num_regions=12, arrivals="poisson", arrival_rate_per_h=2.0,
                         latency="geo", memory_model="adam_mixed"),
                    dict(bandwidth_scale=0.3, gpu_scale=1.5)):
        result = simulate_batch(generate_batch("random", 3, range(12), **options), names,
                                Rules(start_rule=rule))
        assert (result.status == 0).any(), (rule, options)
print("ok")
"""


@pytest.mark.long
def test_the_core_never_indexes_out_of_bounds(tmp_path):
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": str(Path(jit.__file__).parents[2])}
    proc = subprocess.run([sys.executable, "-c", BOUNDS_PROBE], capture_output=True, text=True,
                          env=env, timeout=1800)
    assert proc.returncode == 0 and proc.stdout.split()[-1:] == ["ok"], proc.stderr[-2000:]
