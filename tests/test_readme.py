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


def test_readme_blocks_print_what_they_compute():
    quiet = [k for k, code in enumerate(python_blocks("README.md")) if "print(" not in code]
    assert not quiet, f"README python blocks {quiet} print nothing: show what they compute"


def test_readme_and_getting_started_list_the_same_extras_as_pyproject():
    import tomllib

    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for page in ("README.md", "docs/getting_started.md"):
        listed = set(re.findall(r'^pip install "\.\[(\w+)\]"', (REPO / page).read_text(), re.M))
        assert listed == extras, (page, sorted(listed ^ extras))


def test_readme_stays_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_readme_results_are_a_few_one_line_rows_each_with_its_page():
    """The details, targets and machines live on the results pages (issue 36); the README keeps a line each."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Results"):].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert 0 < len(rows) <= 8
    for row in rows:
        assert len(row) <= 160 and "](docs/" in row.split("|")[-2], row


@pytest.mark.parametrize("page, k, code", BLOCKS, ids=[f"{page}-{k}" for page, k, _ in BLOCKS])
def test_block_runs(tmp_path, page, k, code):
    env = {**os.environ, "MPLBACKEND": "agg"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env)
    assert proc.returncode == 0, f"{page}, python block {k}:\n{code}\n{proc.stderr[-3000:]}"
