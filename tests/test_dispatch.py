"""The generated direct dispatch of the built-in parts (bacepipe/core/dispatch.py)."""

import os
import subprocess
import sys

import pytest

from bacepipe.core import dispatch
from bacepipe.core.loop import builtin
from bacepipe.policies import BUILTIN_PARTS, BUILTIN_SCHEDULERS


def test_each_code_calls_the_builtin_part_of_that_index():
    # the loop's codes index part_names(kind), built-ins first: code i must call BUILTIN_PARTS[i]
    pairs = dispatch.builtin_pairs(BUILTIN_SCHEDULERS)
    text = dispatch.source(BUILTIN_PARTS, pairs)
    for kind in dispatch.CALLS:
        for i, name in enumerate(BUILTIN_PARTS[kind]):
            assert f"from bacepipe.policies import {name} as {kind}_{i}\n" in text
            if kind == "ordering":
                # inlined: a second compile of that very part's body, under a name of its own
                assert (f"{kind}_{i}_inlined = kernel(inline=True)(renamed({kind}_{i}.kernel."
                        f"py_func, '{name}_inlined'))\n") in text
                assert f"    if code == {i}:\n        return {kind}_{i}_inlined(" in text
            elif kind == "start_rule":
                assert f"    if code == {i}:\n        return {kind}_{i}.kernel(" in text
        # a plug-in's code (past the built-ins) goes through the tuple
        assert f"    return parts[code]({dispatch.CALLS[kind]})\n" in text


def test_a_placement_inlines_the_allocators_builtin_schedulers_pair_it_with():
    placements, allocators = BUILTIN_PARTS["placement"], BUILTIN_PARTS["allocator"]
    text = dispatch.source(BUILTIN_PARTS, {("pathfinder", "cost_min"), ("ldf", "fill")})
    for kind, names in (("placement", placements), ("allocator", allocators)):
        for i, name in enumerate(names):
            assert (f"{kind}_{i}_inlined = kernel(inline=True)(renamed({kind}_{i}.kernel."
                    f"py_func, '{name}_inlined'))\n") in text
    for i, placement in enumerate(placements):
        for a, allocator in enumerate(allocators):
            call = (f"    if code == {i} and allocator == {a}:\n        return placement_{i}_"
                    f"inlined(job, k, cluster, scratch, allocator_{a}_inlined, out)\n")
            assert (call in text) == ((placement, allocator) in {("pathfinder", "cost_min"),
                                                                 ("ldf", "fill")})
        # a placement no pair names keeps its inlined copy that calls the allocator it is given
        generic = (f"    if code == {i}:\n        return placement_{i}_inlined(job, k, cluster, "
                   f"scratch, allocate, out)\n")
        assert (generic in text) == (placement not in ("pathfinder", "ldf"))
    # the pairs of SPEC §7's table (tests/test_policies.py pins the table itself)
    assert dispatch.builtin_pairs(BUILTIN_SCHEDULERS) == {
        ("pathfinder", "cost_min"), ("pathfinder", "uniform"), ("lcf", "fill"), ("ldf", "fill"),
        ("cr_lcf", "fill"), ("cr_ldf", "fill")}


def test_the_loop_uses_the_module_written_from_the_registry():
    with open(builtin.__file__, encoding="utf-8") as f:
        assert f.read() == dispatch.source(BUILTIN_PARTS, dispatch.builtin_pairs(
            BUILTIN_SCHEDULERS))
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
