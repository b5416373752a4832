"""Compiled kernels are always the current code (issue 11.1).

numba's disk cache only notices an edit of the file that defines a cached kernel. The event loop
(defined in ``core/loop.py``) calls ``t_comp`` of ``core/model.py``: with numba's own keying, an
edit of ``model.py`` under a warm cache would silently keep the old ``t_comp``. This test does
exactly that in a copy of the package and checks that the next run computes what a cold cache
computes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bacepipe
from bacepipe.sources import KERNEL_SOURCES, tree_hash

# A run of the paper scenario in a fresh interpreter: its totals and the folder numba cached in.
PROBE = """
import json, bacepipe
from bacepipe.core import jit
r = bacepipe.run_scenario("paper", "bace_pipe")
print(json.dumps({"file": bacepipe.__file__, "cache": str(jit.CACHE_DIR),
                  "jct": r["avg_jct_h"], "cost": r["total_cost"]}))
"""
# Double every stage's compute time: a helper kernel of model.py that the loop kernel calls.
EDIT = ("const[C_WORK] / g", "2.0 * const[C_WORK] / g")


def _run(root: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, cwd=root, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["file"]).is_relative_to(root), "the copy was not the package imported"
    return out


def _cached_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")}


@pytest.mark.long
def test_an_edit_of_a_helper_file_changes_the_next_run_under_a_warm_cache(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(Path(bacepipe.__file__).parent, root / "bacepipe",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    before = _run(root, cache)
    warm = _cached_files(Path(before["cache"]))
    assert warm, "the first run cached nothing"
    assert _run(root, cache) == before  # warm: loaded, same numbers
    assert _cached_files(Path(before["cache"])) == warm

    model = root / "bacepipe" / "core" / "model.py"
    text = model.read_text()
    assert EDIT[0] in text, f"update EDIT: {EDIT[0]!r} is no longer in core/model.py"
    model.write_text(text.replace(EDIT[0], EDIT[1], 1))

    after = _run(root, cache)
    cold = _run(root, tmp_path / "cold-cache")
    assert after["jct"] != before["jct"]
    assert (after["jct"], after["cost"]) == (cold["jct"], cold["cost"])
    assert after["cache"] != before["cache"]


def test_the_kernel_hash_covers_helper_files_and_nothing_else(tmp_path):
    root = tmp_path / "bacepipe"
    shutil.copytree(Path(bacepipe.__file__).parent, root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    base = tree_hash(KERNEL_SOURCES, root)
    (root / "core" / "__pycache__").mkdir(exist_ok=True)
    (root / "core" / "__pycache__" / "x.nbi").write_bytes(b"cache, not source")
    (root / "analysis" / "tables.py").write_text("# the report is no kernel source\n")
    assert tree_hash(KERNEL_SOURCES, root) == base
    with open(root / "core" / "model.py", "a") as f:
        f.write("\n# a comment is an edit too\n")
    assert tree_hash(KERNEL_SOURCES, root) != base


def test_a_user_cache_dir_is_the_parent_of_the_hash_folder(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", "from bacepipe.core import jit; "
                           "print(jit.CACHE_DIR)"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    folder = Path(proc.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("bacepipe-")
