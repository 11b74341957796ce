"""Sphinx configuration of the ssvm documentation.

Build from the repository root (warnings are errors, as in CI):

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build documents and runs the installed ``ssvm`` (the package lives under ``src/``, so the
checkout itself is never imported: install it, editable or not, first). The examples under
``examples/`` are executed by sphinx-gallery.
"""

import importlib.util
import inspect
import os
import warnings

import ssvm

project = "ssvm"
author = "the ssvm developers"
copyright = "the ssvm developers"
version = release = ssvm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 shipped into _static/mathjax: the pages render math offline, no CDN
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5"]
templates_path = ["_templates"]

# --- API reference: autosummary pages from the numpydoc docstrings -------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False  # the class template lists the methods instead
numpydoc_class_members_toctree = False
# The docs extra alone builds the site: the API pages of ssvm.nn and of the dask problems import
# PyTorch and dask, which the docs extra does not install (PyTorch alone is ~1-6 GB). autodoc
# then documents them against stand-ins; with the packages installed (the dev extra) it uses them.
autodoc_mock_imports = [name for name in ("torch", "dask", "distributed", "zarr")
                        if importlib.util.find_spec(name) is None]



def _skip_generated_members(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing setters (``set_fit_request`` and the
    like): their docstrings point into scikit-learn's own documentation."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def _own_init_signature(app, what, name, obj, options, signature, return_annotation):
    """A class whose base is a stand-in (``torch.nn.Module`` when PyTorch is mocked) shows the
    stand-in's ``(*args, **kwargs)``: show the signature of the class's own ``__init__`` instead."""
    init = getattr(obj, "__init__", None)
    if what != "class" or signature != "(*args, **kwargs)" or not getattr(init, "__module__", "").startswith("ssvm"):
        return None
    own = inspect.signature(init)
    return str(own.replace(parameters=list(own.parameters.values())[1:])), return_annotation


def setup(app):
    app.connect("autodoc-skip-member", _skip_generated_members)
    app.connect("autodoc-process-signature", _own_init_signature)


# --- markdown pages (MyST) -------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# --- examples (sphinx-gallery): every examples/plot_*.py runs at build time --------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
}
# joblib and the solvers log or warn on stderr while the examples run; the examples'
# printed output is what the pages show.
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")


def _format_warning(message, category, filename, lineno, line=None):
    """A warning an example shows names its file, not the build machine's absolute path."""
    return f"{os.path.basename(filename)}:{lineno}: {category.__name__}: {message}\n"


warnings.formatwarning = _format_warning
os.environ.setdefault("MPLBACKEND", "agg")

# --- HTML --------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ssvm {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []
