"""The generated direct dispatch of the built-in parts (bacepipe/core/dispatch.py)."""

import os

from bacepipe.core import dispatch
from bacepipe.core.loop import builtin
from bacepipe.policies import BUILTIN_PARTS


def test_each_code_calls_the_builtin_part_of_that_index():
    # the loop's codes index part_names(kind), built-ins first: code i must call BUILTIN_PARTS[i]
    text = dispatch.source(BUILTIN_PARTS)
    for kind in dispatch.CALLS:
        for i, name in enumerate(BUILTIN_PARTS[kind]):
            assert f"from bacepipe.policies import {name} as {kind}_{i}\n" in text
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
