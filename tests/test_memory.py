"""bacepipe.core.memory: freed memory is reused, not faulted in again (glibc only)."""

import subprocess
import sys

import pytest

#: Allocates, frees and allocates again 64 MB (over glibc's largest mmap threshold), then prints
#: the page faults of the second allocation's first touch (-1: not glibc, nothing set).
PROBE = """
import resource, sys
import numpy as np
if sys.argv[1] == "retain":
    from bacepipe.core.memory import retain_freed_memory
    if not retain_freed_memory():
        print(-1)
        sys.exit()
def touch():
    np.ones(8_000_000)
touch()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
touch()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(allocator: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, allocator], capture_output=True,
                         text=True, check=True, timeout=120)
    return int(out.stdout)


def test_a_freed_block_is_reused_without_faults():
    retained = _faults("retain")
    if retained < 0:
        pytest.skip("the C library is not glibc")
    default = _faults("default")
    assert default > 0  # the probe can see fresh pages at all
    assert retained * 10 <= default, (retained, default)
