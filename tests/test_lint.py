"""The code base passes ruff (lint and import order, configured in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def _timeouts_below(limit):
    """``(file:line, value)`` of every process wait or ``pytest.mark.timeout`` in tests/ shorter than ``limit`` s."""
    import ast

    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            values = [k.value for k in node.keywords if k.arg == "timeout"] if name in (
                "run", "check_output", "check_call", "call", "communicate", "wait") else list(node.args[:1]) if (
                name == "timeout" and isinstance(node.func, ast.Attribute)) else []
            found += [(f"{path.relative_to(ROOT)}:{node.lineno}", v.value) for v in values
                      if isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and v.value < limit]
    return found


def test_no_process_is_given_less_time_than_pytests_own_timeout():
    """A subprocess timeout shorter than pytest-timeout's per-test one fails a slow test on a loaded machine
    (issue 36: two script tests died at 120 s on a busy 2-core host); pytest's own limit ends a real hang."""
    import tomllib

    limit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["timeout"]
    assert _timeouts_below(limit) == []
