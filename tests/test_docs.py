"""The documentation's sources: every public name in the API reference, links inside the repository.

The build itself (``python -m sphinx -W --keep-going -b html docs docs/_build/html``) is a separate
CI step; these checks are the cheap part that the test suite can run.
"""

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
API = (REPO / "docs" / "api.rst").read_text(encoding="utf-8")
DOCUMENTED = ["ssvm", "ssvm.losses", "ssvm.datasets", "ssvm.detection", "ssvm.metrics",
              "ssvm.exceptions", "ssvm.nn"]
NOT_IN_API = {"ssvm": {"__version__", "losses"}}  # the version string, a module documented below it
PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("**/*.md")),
         REPO / "docs" / "api.rst", *sorted((REPO / "examples").glob("*"))]
PAGES = [p for p in PAGES if "_build" not in p.parts and "auto_examples" not in p.parts]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize("module", DOCUMENTED)
def test_every_public_name_is_in_the_api_reference(module):
    names = set(importlib.import_module(module).__all__) - NOT_IN_API.get(module, set())
    missing = sorted(name for name in names if not re.search(rf"\b{re.escape(name)}\b", API))
    assert not missing, f"add {missing} of {module} to docs/api.rst"


@pytest.mark.parametrize("module", DOCUMENTED[1:] + ["ssvm.estimators", "ssvm.latent"])
def test_documented_docstrings_point_nowhere_outside(module):
    mod = importlib.import_module(module)
    for name in getattr(mod, "__all__", []):
        doc = getattr(getattr(mod, name), "__doc__", None) or ""
        assert "DESIGN" not in doc and "../shared" not in doc, f"{module}.{name} cites a file outside the repository"


def _resolves(page, target):
    path = target.split("#")[0]
    if not path:
        return True  # an anchor on the same page
    base = (page.parent / path).resolve()
    if not base.is_relative_to(REPO):
        return False
    candidates = [base, base.with_name(base.name + ".md"), base.with_name(base.name + ".rst")]
    if "auto_examples" in base.parts:  # pages sphinx-gallery makes from examples/
        stem = base.stem if base.suffix else base.name
        candidates.append(REPO / "examples" / ("README.txt" if stem == "index" else f"{stem}.py"))
    return any(c.exists() for c in candidates)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_links_stay_inside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    outside = text.replace(PYTORCH_CPU_INDEX, "")  # the one address users need: PyTorch's CPU wheels
    assert "../shared" not in text and "http://" not in outside and "https://" not in outside
    broken = [target for target in LINK.findall(text) if not _resolves(page, target)]
    assert not broken, f"{page.name}: links that do not resolve inside the repository: {broken}"


def test_nothing_cites_the_design_file_outside_the_repository():
    sources = [*(REPO / "ssvm").rglob("*.py"), *(REPO / "scripts").rglob("*.py"), *(REPO / "tests").rglob("*.py"),
               *(p for p in (REPO / "docs").rglob("*.md") if "_build" not in p.parts)]
    citing = [str(p.relative_to(REPO)) for p in sources
              if re.search(r"DESIGN(\.md)? §", p.read_text(encoding="utf-8")) and p.name != "test_docs.py"]
    assert not citing, f"cite docs/design.md instead of DESIGN.md in {citing}"
    assert "design\n" in (REPO / "docs" / "index.md").read_text(encoding="utf-8")  # in the toctree


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", REPO / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_math_renders_offline_from_mathjax_shipped_with_the_site():
    conf = _conf()
    assert "sphinx.ext.mathjax" in conf.extensions and "sphinx-mathjax-offline" in conf.extensions
    offline = importlib.import_module("sphinx-mathjax-offline")
    assert (Path(offline.__file__).parent / "static" / "mathjax" / "tex-chtml.js").is_file()
    assert not any(word in (REPO / "docs" / "conf.py").read_text() for word in ("cdn.", "mathjax_path ="))


def test_a_class_on_a_mocked_base_shows_its_own_signature():
    """With PyTorch mocked (the docs extra alone), ssvm.nn's classes would show the stand-in's (*args, **kwargs)."""
    pytest.importorskip("torch")
    from ssvm.nn import DirectRankLoss, RankHingeLoss

    hook = _conf()._own_init_signature
    assert hook(None, "class", "ssvm.nn.RankHingeLoss", RankHingeLoss, {}, "(*args, **kwargs)", None) == (
        "(loss='ap', oracle='auto', **loss_params)", None)
    assert hook(None, "class", "ssvm.nn.DirectRankLoss", DirectRankLoss, {}, "(*args, **kwargs)", None)[0] == (
        "(loss='ap', epsilon=0.1, direction='positive', **loss_params)")
    assert hook(None, "class", "ssvm.nn.RankHingeLoss", RankHingeLoss, {}, "(loss='ap')", None) is None
    assert hook(None, "class", "x.Other", dict, {}, "(*args, **kwargs)", None) is None
