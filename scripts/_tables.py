"""Plain-text tables: text columns left-aligned, numbers right-aligned."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["format_table"]


def _cell(value, floatfmt):
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            return str(float(value))
        return format(float(value), floatfmt)
    return str(value)


def format_table(rows, columns=None, *, title=None, floatfmt=".4f"):
    """Render rows as a plain-text table (text columns left-aligned, numbers right-aligned).

    Parameters
    ----------
    rows : list of dict
        One dict per row, column name -> value (str, int, float or None, shown as ``-``).
    columns : list of str, optional
        Columns in order; by default the keys of the first row, then any new keys of later rows.
    title : str, optional
        A line printed above the table.
    floatfmt : str, default=".4f"
        Format spec for floats; a dict column -> spec sets it per column.

    Returns
    -------
    str
        The table, lines joined by newlines (no trailing newline).

    Raises
    ------
    ValueError
        If ``rows`` is empty.

    Examples
    --------
    >>> print(format_table([{"model": "AP-SVM", "AP": 0.91234}], floatfmt=".3f"))
    model      AP
    ------  -----
    AP-SVM  0.912
    """
    if not rows:
        raise ValueError("format_table needs at least one row")
    if columns is None:
        columns = []
        for row in rows:
            columns.extend(key for key in row if key not in columns)
    fmts = floatfmt if isinstance(floatfmt, dict) else {}
    default_fmt = ".4f" if isinstance(floatfmt, dict) else floatfmt
    cells = [[_cell(row.get(col), fmts.get(col, default_fmt)) for col in columns] for row in rows]
    numeric = [
        all(
            row.get(col) is None or isinstance(row.get(col), (int, float, np.integer, np.floating))
            for row in rows
        )
        for col in columns
    ]
    widths = [max(len(str(col)), *(len(r[j]) for r in cells)) for j, col in enumerate(columns)]

    def line(values):
        parts = [
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
        ]
        return "  ".join(parts).rstrip()

    out = [] if title is None else [title]
    out.append(line([str(c) for c in columns]))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)

