"""Compile time of the numba core: cold (empty cache directory) and warm (cache filled), each
measured in a fresh interpreter as the first simulate_batch call of a sweep would pay it.

    python benchmarks/compile_time.py
"""

import os
import subprocess
import sys
import tempfile

from _common import header, table

FIRST_CALL = """
import time
t0 = time.perf_counter()
from bacepipe.core import simulate_batch
from bacepipe.model.generate import generate_batch
import bacepipe
batch = generate_batch("random", 0, range(4))
simulate_batch(batch, bacepipe.SCHEDULERS)
simulate_batch(generate_batch("random", 0, [0]), bacepipe.SCHEDULERS)
print(time.perf_counter() - t0)
"""


def _first_call(cache_dir: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip())


def main() -> None:
    header("compile time of the numba core (import + first calls, parallel and serial kernels)")
    with tempfile.TemporaryDirectory() as cache:
        cold = _first_call(cache)
        warm = _first_call(cache)
    table([{"cache": "cold", "seconds": cold}, {"cache": "warm", "seconds": warm}])


if __name__ == "__main__":
    main()
