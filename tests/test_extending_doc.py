"""docs/extending.md runs verbatim: every command of its shell blocks, in a scratch directory that
sees the repository's examples/ (the sweep's results land there, not in the checkout)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"


def _commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.long
def test_every_command_of_the_page_runs(tmp_path):
    commands = _commands()
    assert len(commands) == 3 and all(c.startswith("python -m bacepipe.") for c in commands)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    for command in commands:
        argv = [sys.executable, *shlex.split(command)[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, f"{command}\n{proc.stderr[-2000:]}"
    report = next(tmp_path.rglob("report.md")).read_text()
    assert "sjf_ldf" in report
