"""The generated direct dispatch of the built-in parts (bacepipe/core/dispatch.py)."""

import os
import subprocess
import sys

import pytest

from bacepipe.core import dispatch
from bacepipe.core.loop import builtin
from bacepipe.policies import BUILTIN_PARTS


def test_each_code_calls_the_builtin_part_of_that_index():
    # the loop's codes index part_names(kind), built-ins first: code i must call BUILTIN_PARTS[i]
    text = dispatch.source(BUILTIN_PARTS)
    for kind in dispatch.CALLS:
        for i, name in enumerate(BUILTIN_PARTS[kind]):
            assert f"from bacepipe.policies import {name} as {kind}_{i}\n" in text
            if kind in ("ordering", "placement"):
                # inlined: a second compile of that very part's body, under a name of its own
                assert (f"{kind}_{i}_inlined = kernel(inline=True)(renamed({kind}_{i}.kernel."
                        f"py_func, '{name}_inlined'))\n") in text
                assert f"    if code == {i}:\n        return {kind}_{i}_inlined(" in text
            else:
                assert f"    if code == {i}:\n        return {kind}_{i}.kernel(" in text
        # a plug-in's code (past the built-ins) goes through the tuple
        assert f"    return parts[code]({dispatch.CALLS[kind]})\n" in text


def test_the_loop_uses_the_module_written_from_the_registry():
    with open(builtin.__file__, encoding="utf-8") as f:
        assert f.read() == dispatch.source(BUILTIN_PARTS)
    for kind in dispatch.CALLS:
        assert callable(getattr(builtin, kind))


def test_an_equal_file_is_never_rewritten(tmp_path):
    # numba keys its cache to the file's timestamp: a rewrite would recompile in every process
    path = tmp_path / "dispatch.py"
    dispatch._write_once(str(path), "x = 1\n")
    os.utime(path, (1, 1))
    dispatch._write_once(str(path), "x = 1\n")
    assert path.stat().st_mtime == 1
    dispatch._write_once(str(path), "x = 2\n")
    assert path.read_text() == "x = 2\n"


@pytest.mark.parametrize("first", ["from bacepipe.policies.api import placement_kernel",
                                   "import bacepipe.policies.cost_min",
                                   "import bacepipe.core.loop",
                                   "from bacepipe.core import simulate_batch"])
def test_any_module_can_be_imported_first(first):
    """The loop imports the parts, whose modules import the plug-in API, which imports core
    kernels: a fresh process may start from any of them (a plug-in file starts from the API)."""
    proc = subprocess.run([sys.executable, "-c", f"{first}; import bacepipe.core.entry"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr.splitlines()[-1:]
