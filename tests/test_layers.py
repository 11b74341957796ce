"""The data flows one way (DESIGN.md §3): no module of a lower layer imports a higher one, not even
inside a function (``ssvm.losses`` re-exports the functional layer's two functions by name, on
first access, as ``ssvm`` does its estimators)."""

import ast
from pathlib import Path

import pytest

import ssvm

ROOT = Path(ssvm.__file__).parent
ABOVE = {
    "losses": ("ssvm.problem", "ssvm.functional", "ssvm.solvers", "ssvm._fitting", "ssvm.estimators",
               "ssvm.metrics", "ssvm.nn", "ssvm.latent", "ssvm.label_ranking"),
    "problem": ("ssvm.functional", "ssvm.solvers", "ssvm._fitting", "ssvm.estimators", "ssvm.metrics",
                "ssvm.nn", "ssvm.latent", "ssvm.label_ranking"),
}


def imported_modules(path):
    package = ".".join(("ssvm",) + path.relative_to(ROOT).parent.parts)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            yield ".".join(base + ([node.module] if node.module else []))


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_module_imports_a_layer_above_it(layer):
    upward = [f"{path.relative_to(ROOT)} imports {name}" for path in sorted((ROOT / layer).rglob("*.py"))
              for name in imported_modules(path) if name.startswith(ABOVE[layer])]
    assert upward == []


def test_the_checker_sees_relative_imports():
    assert "ssvm.losses.oracle" in set(imported_modules(ROOT / "problem" / "score_space.py"))
