"""Hypothesis strategies of single-field corruptions of a model file (the fuzzer's half of issue #37).

A model file's fields are the nodes of its JSON tree; an array ``{"dtype", "shape", "data"}`` is one
field. :func:`corruptions` applies one kind of corruption (:data:`HOW`) to one field:

- ``replace``: a value of another JSON type (null, bool, number, string, list, object), a
  non-finite number (``NaN`` / ``Infinity`` tokens, ``1e999``, ``10**400``), a number out of range
  (negated, zero, integers past int64, one past a size or an index), a bad string, a newer version,
  another class;
- ``delete`` a key (or a list element) and ``extra``: a key added, a list element repeated;
- for an array: its ``dtype``, its ``shape``, one ``element`` (dropped, repeated, nested, replaced
  as above, or, in the :data:`DISTINCT` arrays, set to its neighbour's value), its ``array key``
  set, the whole array ``resize``-d along one axis with shape and data consistent (lengths that must
  agree, classes against rows, core labels against n_core, ...), or ``retype``-d to a dtype the
  field may not have, its data converted (a str or bool ``coef_``, a float ``core_``).

Out-of-range values are not drawn for the :data:`FREE` fields, where every finite value (every
string, every distinct label) is some valid model, nor neighbours for :data:`IN_RANGE` ones. A value
that is valid but different (a flipped bool, another finite weight, another step order, a step left
out) is no corruption a file can show, and is never drawn. Each corruption carries the names a
refusal may give: the field itself and, for a key added or deleted, that key.
"""

import copy
import json
import re
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from ssvm._model_schemas import KINDS, SCHEMAS
from ssvm.model_files import FORMAT_VERSION

#: fields where any finite number (any string, any distinct label) is a valid, different model
FREE = {"coef_", "intercept_", "threshold_", "classes_", "mean_", "min_", "quantiles_", "feature_range"}
#: integers whose neighbours are valid, different models (LabelRankSVM's k between 1 and n_labels - 1)
IN_RANGE = {"k"}
#: arrays whose values must differ from each other (a value set to its neighbour's is a corruption)
DISTINCT = {"classes_", "core_", "references_"}
STRUCTURAL = ("dtype", "shape", "data")
EXTRA_KEY = "zz_extra"
RAW = "\x00raw:"  # a string written without quotes: JSON numbers that parse to infinity
WRONG_TYPES = {"null": [None], "bool": [True, False], "number": [7, -3, 0.5],
               "string": ["bogus"], "list": [[], [1, 2]], "object": [{}, {"a": 1}]}
NON_FINITE = [float("nan"), float("inf"), float("-inf"), RAW + "1e999", RAW + "-1e999", 10**400]  # no float holds them
BAD_INTS = [-1, 0, 2**63, 2**64, -(2**63) - 1, 10**400]
BAD_STRINGS = ["", "bogus", "a__b"]
#: wrong values that only some fields have: a newer format, another class
RELATED = {"version": [FORMAT_VERSION + 1], "class": ["Pipeline", *SCHEMAS]}
DTYPES = ["float64", "float32", "int64", "int32", "bool", "str", "object", "float16", None, 3]


@dataclass
class Corruption:
    """One corrupted file: its text, what was done, and the names a refusal may give."""

    text: str = field(repr=False)
    what: str
    names: tuple


def dumps(document):
    """The document as JSON text, NaN / Infinity as tokens and ``RAW`` strings unquoted."""
    text = json.dumps(document, allow_nan=True, separators=(",", ":"))
    return re.sub(r'"\\u0000raw:([^"]*)"', r"\1", text)


def is_array(node):
    return isinstance(node, dict) and set(node) == set(STRUCTURAL)


def fields(document):
    """Every path (a tuple of keys and indices) into the document; an array is one field."""
    found = []

    def walk(node, path):
        if path:
            found.append(path)
        if is_array(node):
            return
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            walk(child, (*path, key))

    walk(document, ())
    return found


def field_names(document, path):
    """The names a refusal may give for ``path``: its innermost key; for a step, its name or "step(s)"."""
    keys = [key for key in path if isinstance(key, str) and key not in STRUCTURAL]
    if keys[0] == "metadata":  # free-form notes: a refusal names the metadata
        return ("metadata",)
    if keys[-1] == "steps":  # the steps, a step, its name or its model
        return ("steps", "step") + ((document["model"]["steps"][path[2]][0],) if len(path) > 2 else ())
    return (keys[-1],)


def _category(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "number", float: "number", str: "string", list: "list", dict: "object"}[type(value)]


def _bad_value(value, free, name=None):
    """A replacement of a scalar ``value`` of field ``name`` that no valid file holds (or that leaves the
    model's answers as they were): first a group (another type, non-finite, out of range, ...), then one
    of its values, so that each group is drawn often."""
    kind = _category(value)
    groups = [[v for category, vs in WRONG_TYPES.items() if category != kind for v in vs],
              [v for v in RELATED.get(name, ()) if v != value]]
    if kind == "number":
        groups.append(NON_FINITE)
        if not free:
            groups.append([-value if value else -1, 0] + (BAD_INTS if isinstance(value, int) else []))
        if isinstance(value, int) and not free and name not in IN_RANGE:
            groups.append([value - 1, value + 1])  # one past a size or an index
    elif kind == "string" and not free:
        groups.append([s for s in BAD_STRINGS if s != value])
    return st.sampled_from([group for group in groups if group]).flatmap(st.sampled_from)


def _parent(document, path):
    node = document
    for key in path[:-1]:
        node = node[key]
    return node


def _edit(document, path, change, what, names):
    edited = copy.deepcopy(document)
    change(_parent(edited, path), path[-1])
    return Corruption(dumps(edited), what, names)


def _set_to(value):
    def change(parent, key):
        parent[key] = value
    return change


def _delete(parent, key):
    del parent[key]


def _add_extra(parent, key):
    node = parent[key]
    if isinstance(node, dict):
        node[EXTRA_KEY] = 1
    else:
        node.append(copy.deepcopy(node[-1]) if node else 1)


#: the kinds of corruption, each applied to the fields it fits (see :func:`corruptions`)
HOW = ("replace", "delete", "extra", "dtype", "shape", "element", "resize", "array key", "retype")


def _fits(document, path, how):
    node = _parent(document, path)[path[-1]]
    if how == "replace":
        return True
    if how == "delete":
        return path[-2:-1] != ("steps",)  # a step left out is another valid pipeline
    if how == "extra":
        return isinstance(node, (dict, list)) and not is_array(node)
    return is_array(node) and (how != "retype" or bool(_retypes(document, path)))


@st.composite
def corruptions(draw, document, how):
    """One single-field corruption of kind ``how`` (one of :data:`HOW`) of ``document`` (a model file
    parsed with ``json.loads``), at a field drawn among those it fits."""
    paths = [path for path in fields(document) if _fits(document, path, how)]
    parents = sorted({path[:-1] for path in paths}, key=str)  # first a container, then a field of it,
    parent = draw(st.sampled_from(parents))  # so that the few attributes are drawn as often as the parameters
    path = draw(st.sampled_from([path for path in paths if path[:-1] == parent]))
    names = field_names(document, path)
    node = _parent(document, path)[path[-1]]
    free = names[0] in FREE
    if how == "delete":
        deleted = (path[-1],) if isinstance(path[-1], str) else ()
        return _edit(document, path, _delete, f"{path} deleted", names + deleted)
    if how == "extra":
        return _edit(document, path, _add_extra, f"{path} gets an extra entry", (*names, EXTRA_KEY))
    if how == "replace":
        value = draw(_bad_value(node, free, names[0]) if not is_array(node) else
                     st.sampled_from([v for vs in WRONG_TYPES.values() for v in vs] + NON_FINITE))
        # another class is refused for the parameters or attributes it lacks: the message names that class
        also = (value,) if names == ("class",) and isinstance(value, str) else ()
        return _edit(document, path, _set_to(value), f"{path} = {value!r}", names + also)
    array = copy.deepcopy(node)
    if how == "dtype":
        array["dtype"] = draw(st.sampled_from([d for d in DTYPES if d != node["dtype"]]))
    elif how == "shape":
        array["shape"] = draw(_bad_shapes(node["shape"]))
    elif how == "element":
        if not node["data"]:
            array["data"] = draw(st.one_of(_bad_value(0.5, False).map(lambda v: [v]), st.sampled_from([None, "x"])))
        else:
            index = draw(st.integers(0, len(node["data"]) - 1))
            operation = draw(st.sampled_from(["drop", "repeat", "replace", "nest"] + ["copy"] * (names[0] in DISTINCT)))
            if operation == "drop":
                del array["data"][index]
            elif operation == "repeat":
                array["data"].insert(index, array["data"][index])
            elif operation == "copy":  # a neighbour's value: repeated classes, indices, references
                array["data"][index] = node["data"][index - 1 if index else 1 % len(node["data"])]
            elif operation == "nest":
                array["data"][index] = [array["data"][index]]
            else:
                array["data"][index] = draw(_bad_value(node["data"][index], free, names[0]))
    elif how == "resize":
        array = draw(_resized(node))
    elif how == "retype":
        array["dtype"] = dtype = draw(st.sampled_from(_retypes(document, path)))
        array["data"] = [_convert(v, dtype) for v in node["data"]]
    else:
        key = draw(st.sampled_from([*STRUCTURAL, EXTRA_KEY]))
        if key == EXTRA_KEY:
            array[key] = 1
        else:
            del array[key]
    return _edit(document, path, _set_to(array), f"{path} {how}: {array}"[:300], names)


def _convert(value, dtype):
    """``value`` as a JSON value of ``dtype`` (a string becomes its length)."""
    if dtype == "str":
        return str(value)
    if dtype == "bool":
        return bool(value)
    number = len(value) if isinstance(value, str) else value
    return float(number) if dtype == "float64" else int(number)


def _retypes(document, path):
    """The dtypes the array at ``path`` must not have, by the schema's kind of the field (a str or bool
    ``coef_``, a float ``core_``, int feature names): its data converted to one is valid JSON of it."""
    entry, array = _parent(document, path[:-1]), _parent(document, path)[path[-1]]
    schema = SCHEMAS.get(entry.get("class"), {}).get(path[-1])
    if schema is None:
        return []
    return [d for d in ("float64", "int64", "int32", "bool", "str")
            if np.dtype(d.replace("str", "U")).kind not in KINDS[schema[0]] and d != array["dtype"]]


def _bad_shapes(shape):
    """Shapes that do not fit the data or the field (other sizes, dimensions, types)."""
    options = [[], [*shape, 1], shape[:-1], list(reversed(shape)) + [2], [-1] * len(shape),
               [float(n) for n in shape], [True] * len(shape), "x", None, {"0": 1}]
    options += [[n + delta if i == axis else n for i, n in enumerate(shape)]
                for axis in range(len(shape)) for delta in (1, -1) if shape[axis] + delta >= 0]
    if len(shape) == 2 and shape[0] != shape[1]:
        options.append(list(reversed(shape)))  # transposed: the same data read the other way
    return st.sampled_from(options)


def _fresh(values, dtype):
    """A value of ``dtype`` that ``values`` does not hold (distinct labels and indices stay distinct)."""
    if dtype == "str":
        return "new-" + "x" * len(values)
    if dtype == "bool":
        return not values[-1] if values else False
    if dtype.startswith("int"):
        return min(set(range(len(values) + 1)) - set(values))
    return (max(values) + 1.0) if values else 0.5


@st.composite
def _resized(draw, array):
    """The array one longer or shorter along one axis, its shape and data consistent."""
    shape = array["shape"]
    axis = draw(st.integers(0, len(shape) - 1))
    grow = draw(st.booleans()) or shape[axis] == 0
    values = np.array(array["data"], dtype=object).reshape(shape)
    if not grow:
        values = np.delete(values, -1, axis=axis)
    elif len(shape) == 1:
        values = np.append(values, np.array([_fresh(array["data"], array["dtype"])], dtype=object))
    else:  # a copy of the last row or column (no 2-D field of a model is empty)
        values = np.concatenate([values, np.take(values, [-1], axis=axis)], axis=axis)
    return {"dtype": array["dtype"], "shape": list(values.shape), "data": values.ravel().tolist()}
