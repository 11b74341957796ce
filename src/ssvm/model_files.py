"""Model files that are data: :func:`save_model` and :func:`load_model` (the docs: "Model files").

A model file is one UTF-8 JSON document, never code: loading it parses JSON and nothing else
(no pickle, no ``np.load(allow_pickle=True)``), so a file from someone else cannot run anything.
It holds the format name and version, the versions of ssvm and scikit-learn that wrote it, and
the model: the estimator's class, its parameters (``get_params``) and the fitted attributes that
prediction and scoring need, each array as ``{"dtype", "shape", "data"}``. A scikit-learn
``Pipeline`` of feature-wise transformers (``StandardScaler``, ``QuantileTransformer``,
``MinMaxScaler``, ``MaxAbsScaler``) ending in an ssvm estimator is saved step by step.

Loading checks the format, the version and every field — class names against a fixed list,
parameters (all of them) with the estimator's own validation, each attribute's type, shape and
finiteness, the shapes against each other and the relations of :mod:`ssvm._model_schemas` — and
refuses anything else with a one-line ``ValueError`` that names the field. Training records
(``history_``, ``objective_``) are not saved.

Why not skops: ``skops.io`` also loads without pickle and refuses untrusted types, but it restores
an object's whole ``__dict__`` as written, without checking a field's shape or finiteness, and
its files follow scikit-learn's private attribute layout; ssvm's estimators need a short,
documented list of arrays, which this module writes and checks field by field.
"""

import json
import math
import os
import warnings
from pathlib import Path

import numpy as np

from ssvm._atomic import atomic_write
from ssvm._model_schemas import ESTIMATORS, KINDS, RELATIONS, SCHEMAS, TRANSFORMERS, finite_number, module_of, nullable
from ssvm.exceptions import ModelVersionWarning, external_stacklevel

__all__ = ["FORMAT", "FORMAT_VERSION", "load_model", "save_model"]

FORMAT = "ssvm-model"
FORMAT_VERSION = 1
_DTYPES = {"float64", "float32", "int64", "int32", "bool", "str"}


class _Refusal(Exception):
    """A reason to refuse a file; :func:`load_model` turns it into a one-line ValueError."""


# ---------------------------------------------------------------------------------- save


def save_model(estimator, path, *, metadata=None):
    """Write a fitted model to ``path`` as a JSON model file.

    Parameters
    ----------
    estimator : RankSVM, RankSVMCV, LatentRankSVM, LabelRankSVM or sklearn.pipeline.Pipeline
        A fitted estimator, or a fitted pipeline of ``StandardScaler``, ``QuantileTransformer``,
        ``MinMaxScaler`` or ``MaxAbsScaler`` steps ending in one of them. A ``RankSVMCV`` is saved
        as its refitted ``best_estimator_`` (a ``RankSVM``; the cross-validation record is not
        saved), so loading it gives that ``RankSVM``.
    path : str or path-like
        The file to write (replaced if it exists). It is written to a temporary file in the same
        directory and renamed into place, so an interrupted save leaves the old file or none.
    metadata : dict, optional
        Notes kept beside the model: string keys, values None, bool, number or string (the
        ``ssvm`` command line keeps the training file's name and index base here).

    Raises
    ------
    ValueError
        If the estimator is of another class, not fitted, has a parameter that is not plain data
        (a callable, a ``RandomState``, a user loss object: set it to a name, number or None
        first), has non-finite fitted values, or ``metadata`` is not such a dict.

    Examples
    --------
    >>> import ssvm
    >>> ssvm.save_model(model, "ranker.json")          # doctest: +SKIP
    >>> same = ssvm.load_model("ranker.json")           # doctest: +SKIP
    """
    document = {"format": FORMAT, "version": FORMAT_VERSION, "ssvm_version": _version("ssvm"),
                "sklearn_version": _version("sklearn"), "metadata": _check_metadata(metadata or {}, ValueError),
                "model": _encode_model(estimator)}
    text = json.dumps(document, allow_nan=False, separators=(",", ":"))
    atomic_write(path, text + "\n")


def _check_metadata(metadata, error):
    if not (isinstance(metadata, dict) and all(
            isinstance(k, str) and (v is None or isinstance(v, (bool, int, str)) or
                                    (isinstance(v, float) and math.isfinite(v))) for k, v in metadata.items())):
        raise error("metadata must map strings to None, bools, finite numbers or strings")
    return metadata


def _version(module):
    from importlib import import_module

    return str(import_module(module).__version__)


def _encode_model(estimator):
    name = type(estimator).__name__
    if name == "RankSVMCV" and type(estimator).__module__.startswith("ssvm."):
        if not hasattr(estimator, "best_estimator_"):
            raise ValueError("save_model saves a RankSVMCV as its refitted best_estimator_: fit it with "
                             "refit=True first.")
        return _encode_model(estimator.best_estimator_)  # the cross-validation record is not the model
    if name == "Pipeline" and type(estimator).__module__.startswith("sklearn."):
        names = [step for step, _ in estimator.steps]
        kinds = [type(est).__name__ for _, est in estimator.steps]
        if not (kinds and kinds[-1] in (*ESTIMATORS, "RankSVMCV") and all(k in TRANSFORMERS for k in kinds[:-1])):
            raise ValueError(f"save_model saves pipelines of {', '.join(TRANSFORMERS)} steps ending in "
                             f"{', '.join(ESTIMATORS)}; got steps {kinds}.")
        params = {key: _plain(key, value, name) for key, value in estimator.get_params(deep=False).items()
                  if key != "steps"}
        return {"class": name, "params": params,
                "steps": [[step, _encode_model(est)] for step, est in zip(names, estimator)]}
    if name not in SCHEMAS or type(estimator).__module__.split(".")[0] != module_of(name).split(".")[0]:
        raise ValueError(f"save_model saves {', '.join(ESTIMATORS)} and pipelines of them; got "
                         f"{type(estimator).__module__}.{name}.")
    if not hasattr(estimator, "n_features_in_"):
        raise ValueError(f"save_model needs a fitted {name}: call fit first.")
    params = {key: _plain(key, value, name) for key, value in estimator.get_params(deep=False).items()}
    attributes = {}
    for attr in SCHEMAS[name]:
        value = getattr(estimator, attr, None)
        if value is None and not nullable(name, attr):
            raise ValueError(f"save_model needs a fitted {name}: it has no {attr}.")
        attributes[attr] = _encode_value(value, f"{name}.{attr}")
    return {"class": name, "params": params, "attributes": attributes}


def _plain(key, value, owner):
    """A parameter as JSON data (None, bool, number, string, list, dict of those); else a ValueError."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, os.PathLike):  # LatentRankSVM's checkpoint: a path is a string in the file
        return os.fspath(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, np.bool_):
        value = value.item() if isinstance(value, np.generic) else value
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"parameter {key}={value} of {owner} is not finite.")
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (list, tuple, np.ndarray)) and np.asarray(value, dtype=object).ndim >= 1:
        return [_plain(key, item, owner) for item in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _plain(key, v, owner) for k, v in value.items()}
    raise ValueError(f"parameter {key} of {owner} is a {type(value).__name__}: a model file holds "
                     "parameters as data (None, numbers, strings, lists, dicts); set it to one before "
                     "saving.")


def _encode_value(value, where):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{where} is not finite; a model with NaN or infinite values cannot be saved.")
        return float(value)
    array = np.asarray(value)
    if array.dtype.kind == "O" and all(isinstance(v, str) for v in array.ravel()):
        array = array.astype(str)
    dtype = "str" if array.dtype.kind == "U" else array.dtype.name
    if dtype not in _DTYPES:
        raise ValueError(f"{where} has dtype {array.dtype}; a model file holds {sorted(_DTYPES)} arrays.")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"{where} is not finite; a model with NaN or infinite values cannot be saved.")
    return {"dtype": dtype, "shape": list(array.shape), "data": array.ravel().tolist()}


# ---------------------------------------------------------------------------------- load


def load_model(path, *, with_metadata=False):
    """Read a model file written by :func:`save_model`, checking every field.

    Parameters
    ----------
    path : str or path-like
        The model file.
    with_metadata : bool, default=False
        Also return the ``metadata`` dict given to :func:`save_model`.

    Returns
    -------
    estimator : RankSVM, LatentRankSVM, LabelRankSVM or sklearn.pipeline.Pipeline
        The fitted model; its ``decision_function`` equals the saved model's. A file written by
        another version of ssvm loads with a :class:`~ssvm.exceptions.ModelVersionWarning`.
    metadata : dict
        Only with ``with_metadata=True``.

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    ValueError
        One line naming the file, the field and what is wrong: not a JSON model file (e.g. a
        pickle, which is never loaded), another format or a newer version, an unknown class, an
        unknown or missing parameter, a parameter the estimator refuses, a missing or extra
        attribute, a wrong type, dtype or shape, NaN or infinite values, or fields that disagree
        with each other.
    """
    path = Path(path)
    raw = path.read_bytes()
    try:
        document = _parse(raw)
        model = _decode_model(document["model"], "model")
    except _Refusal as refusal:
        raise ValueError(f"{path}: not a valid ssvm model file: {refusal}") from None
    if document["ssvm_version"] != _version("ssvm"):
        warnings.warn(f"{path} was written by ssvm {document['ssvm_version']} and is read by ssvm {_version('ssvm')}: "
                      "every field passed this version's checks; re-save it with this version (or retrain) before "
                      "relying on it", ModelVersionWarning, stacklevel=external_stacklevel())
    return (model, document["metadata"]) if with_metadata else model


def _parse(raw):
    if raw[:1] == b"\x80" or raw[:2] == b"PK" or raw[:6] == b"\x93NUMPY":
        raise _Refusal("it looks like a pickle or numpy file; ssvm model files are JSON (save_model) "
                       "and other formats are never loaded")
    tokens = []

    def non_finite(token):  # NaN, Infinity, -Infinity: parsed as marked strings, then found and named
        tokens.append(token)
        return _NonFinite(token)

    try:
        document = json.loads(raw.decode("utf-8"), parse_constant=non_finite)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _Refusal(f"not JSON ({str(exc).splitlines()[0]})") from None
    if tokens:
        token, where = _find_non_finite(document, "")
        raise _Refusal(f"the file holds {token}; model values must be finite (found at {where or 'the top'})")
    _expect(isinstance(document, dict), "the document is not a JSON object")
    _expect(document.get("format") == FORMAT, f"'format' is {document.get('format')!r}, not {FORMAT!r}")
    version = document.get("version")
    _expect(isinstance(version, int) and not isinstance(version, bool) and version >= 1,
            f"'version' is {version!r}, not a positive integer")
    _expect(version <= FORMAT_VERSION,
            f"format version {version} is newer than this ssvm reads ({FORMAT_VERSION}); upgrade ssvm")
    extra = set(document) - {"format", "version", "ssvm_version", "sklearn_version", "metadata", "model"}
    _expect(not extra, f"unknown top-level fields {sorted(extra)}")
    for key in ("ssvm_version", "sklearn_version"):
        _expect(isinstance(document.get(key), str), f"{key!r} is missing or not a string")
    _expect("model" in document, "'model' is missing")
    _check_metadata(document.setdefault("metadata", {}), _Refusal)
    return document


class _NonFinite(str):
    """A ``NaN``, ``Infinity`` or ``-Infinity`` token of the file, until :func:`_find_non_finite` places it."""


def _find_non_finite(node, where):
    """``(token, path)`` of the first NaN / Infinity token in the parsed document, or None."""
    if isinstance(node, _NonFinite):
        return str(node), where
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        found = _find_non_finite(child, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where
                                 else key)
        if found is not None:
            return found
    return None


def _expect(condition, reason):
    if not condition:
        raise _Refusal(reason)


def _decode_model(entry, where):
    _expect(isinstance(entry, dict), f"{where} is not a JSON object")
    name = entry.get("class")
    if name == "Pipeline":
        return _decode_pipeline(entry, where)
    _expect(isinstance(name, str) and name in SCHEMAS,
            f"{where}: class {name!r} is not one of {', '.join(['Pipeline', *SCHEMAS])}")
    _expect(set(entry) == {"class", "params", "attributes"},
            f"{where} must have exactly the fields class, params, attributes")
    estimator = _build(name, entry["params"], where)
    attrs = _decode_attributes(name, entry["attributes"], estimator.get_params(), f"{where} {name}")
    for attr, value in attrs.items():
        if value is not None or attr != "feature_names_in_":
            setattr(estimator, attr, value)
    return estimator


def _decode_pipeline(entry, where):
    from sklearn.pipeline import Pipeline

    _expect(set(entry) == {"class", "params", "steps"},
            f"{where}: a Pipeline must have exactly the fields class, params, steps")
    steps = entry["steps"]
    _expect(isinstance(steps, list) and steps and all(
        isinstance(s, list) and len(s) == 2 and isinstance(s[0], str) for s in steps),
        f"{where}: steps must be a non-empty list of [name, model] pairs")
    names = [step for step, _ in steps]
    _expect(len(set(names)) == len(names) and all(n and "__" not in n for n in names),
            f"{where}: step names must be distinct, non-empty and free of '__'")
    models = [_decode_model(model, f"{where} step {step!r}") for step, model in steps]
    kinds = [type(model).__name__ for model in models]
    _expect(kinds[-1] in ESTIMATORS and all(k in TRANSFORMERS for k in kinds[:-1]),
            f"{where}: a Pipeline must be transformers ending in an ssvm estimator, got {kinds}")
    widths = [model.n_features_in_ for model in models]
    _expect(len(set(widths)) == 1,
            f"{where}: the steps were fitted on different numbers of features (n_features_in_ {widths})")
    params = entry["params"]
    _expect(isinstance(params, dict) and set(params) <= {"memory", "verbose", "transform_input"},
            f"{where}: Pipeline params must be among memory, verbose, transform_input")
    _expect(params.get("memory") is None and params.get("transform_input") is None
            and isinstance(params.get("verbose", False), bool),
            f"{where}: Pipeline params must be memory=None, transform_input=None and a boolean verbose")
    return Pipeline(list(zip(names, models)), **params)


def _build(name, params, where):
    from importlib import import_module

    cls = getattr(import_module(module_of(name)), name)
    _expect(isinstance(params, dict), f"{where}: params is not a JSON object")
    defaults = cls().get_params(deep=False)
    unknown, missing = set(params) - set(defaults), set(defaults) - set(params)
    _expect(not unknown, f"{where}: {name} has no parameter(s) {sorted(unknown)}")
    _expect(not missing, f"{where}: {name} params missing {sorted(missing)} (a default may not be the saved value)")
    constraints = getattr(cls, "_parameter_constraints", {})  # where True would pass as the int 1
    flags = sorted(key for key, value in params.items() if isinstance(value, bool) and not any(
        isinstance(c, str) and c in ("boolean", "verbose") for c in constraints.get(key, ())))
    _expect(not flags, f"{where}: {name} parameter(s) {flags} must be numbers or names, not booleans")
    # JSON has no tuples: a list stands for a tuple where the default is one (feature_range)
    estimator = cls(**{key: tuple(value) if isinstance(value, list) and isinstance(defaults[key], tuple)
                       else value for key, value in params.items()})
    try:
        estimator._validate_params()
    except (ValueError, TypeError) as exc:
        raise _Refusal(f"{where}: {str(exc).splitlines()[0]}") from None
    return estimator


def _decode_attributes(name, attributes, params, where):
    _expect(isinstance(attributes, dict), f"{where}: attributes is not a JSON object")
    schema = SCHEMAS[name]
    missing, extra = set(schema) - set(attributes), set(attributes) - set(schema)
    _expect(not missing and not extra,
            f"{where}: attributes missing {sorted(missing)}, unexpected {sorted(extra)}")
    sizes, values = _Sizes(), {}
    for attr, (kind, shape) in schema.items():
        value = attributes[attr]
        if value is None:
            _expect(nullable(name, attr), f"{where}: {attr} must not be null")
            values[attr] = None
            continue
        values[attr] = _decode_value(value, kind, shape, sizes, f"{where}.{attr}")
    problem = RELATIONS[name](values, params, sizes)
    _expect(problem is None, f"{where}: {problem}")
    return values


def _decode_value(value, kind, shape, sizes, where):
    if shape is None or isinstance(shape, str):  # a scalar; an "int" may bind a size
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok, what = {"int": (number and isinstance(value, int) and value >= 0, "non-negative int"),
                    "bool": (isinstance(value, bool), "bool"),
                    "float": (finite_number(value), "finite float")}[kind]
        _expect(ok, f"{where} must be a {what}, got {value!r}")
        if isinstance(shape, str):
            _bind(sizes, shape, value, where)
        return float(value) if kind == "float" else value
    _expect(isinstance(value, dict) and set(value) == {"dtype", "shape", "data"},
            f"{where} must be an array {{dtype, shape, data}}")
    dtype, dims, data = value["dtype"], value["shape"], value["data"]
    _expect(dtype in _DTYPES, f"{where}: dtype {dtype!r} is not one of {sorted(_DTYPES)}")
    _expect(isinstance(dims, list) and len(dims) == len(shape) and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in dims),
        f"{where}: shape {dims!r} is not {len(shape)}-D")
    _expect(isinstance(data, list) and len(data) == math.prod(dims),
            f"{where}: data does not hold {math.prod(dims)} values")
    python = {"str": str, "bool": bool}.get(dtype, float if dtype.startswith("float") else int)  # 1.0, never 1
    _expect(all(isinstance(v, python) and (dtype == "bool" or not isinstance(v, bool)) for v in data),
            f"{where}: values are not all of dtype {dtype}")
    try:
        with np.errstate(over="ignore"):
            array = np.array(data, dtype=str if dtype == "str" else dtype).reshape(dims)
    except (OverflowError, ValueError):
        raise _Refusal(f"{where}: values do not fit dtype {dtype}") from None
    _expect(dtype != "float32" or array.ravel().tolist() == data,  # float64 → float32 would round them
            f"{where}: values do not fit dtype {dtype} exactly")
    _expect(array.dtype.kind in KINDS[kind], f"{where}: dtype {dtype} is not a {kind} array")
    _expect(array.dtype.kind != "f" or np.all(np.isfinite(array)), f"{where} holds NaN or infinite values")
    for size, n in zip(shape, dims):
        if isinstance(size, int):
            _expect(n == size, f"{where}: shape {dims} where {shape} is expected")
        else:
            _bind(sizes, size, n, where)
    return array


class _Sizes(dict):
    """The sizes bound so far (``"features"`` → 5, ...); ``bound_by`` names the attribute that bound each."""

    def __init__(self):
        super().__init__()
        self.bound_by = {}


def _bind(sizes, name, n, where):
    if name not in sizes:
        sizes[name], sizes.bound_by[name] = n, where.rsplit(".", 1)[-1]
    _expect(sizes[name] == n,
            f"{where}: {n} {name} where the other fields have {sizes[name]} ({sizes.bound_by[name]})")
