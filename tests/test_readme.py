"""Every python block of the README (and of the user-guide pages written as runnable code) runs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/concepts.md", "docs/queries.md", "docs/scaling.md"]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def python_blocks(page):
    return FENCE.findall((REPO / page).read_text(encoding="utf-8"))


BLOCKS = [(page, k, code) for page in PAGES for k, code in enumerate(python_blocks(page))]


def test_every_block_is_collected():
    for page in PAGES:
        text = (REPO / page).read_text(encoding="utf-8")
        assert len(python_blocks(page)) == text.count("```python") > 0, page
    assert len(python_blocks("README.md")) >= 3  # the tour: labels, queries, detection


@pytest.mark.parametrize("page, k, code", BLOCKS, ids=[f"{page}-{k}" for page, k, _ in BLOCKS])
def test_block_runs(tmp_path, page, k, code):
    env = {**os.environ, "MPLBACKEND": "agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=env)
    assert proc.returncode == 0, f"{page}, python block {k}:\n{code}\n{proc.stderr[-3000:]}"
