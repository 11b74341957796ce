"""Old against new in one run: a benchmark's cells timed again by another interpreter.

``--baseline-python PATH`` (:func:`add_option`) makes ``bench_oracles.py`` and ``bench_training.py``
run themselves once more in a child process with that interpreter (typically the venv of the last
commit before the port, whose ssvm compiled its kernels with numba: its caches warm, and every cell
is warmed up by the script before it is timed), read the child's JSON and print, per cell, the
new time, the old one and new / old (:func:`comparison_table`), with the CPU facts
(:func:`cpu_facts`) of both runs. The child runs the same script file with the same options, so
the cells and their random inputs are the same.

:func:`kernel_threads` sets the kernels' thread count for either ssvm: OpenMP's (the Cython
kernels, through ``threadpoolctl``) and, in an interpreter whose ssvm runs numba kernels, numba's.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = ["add_option", "comparison_table", "cpu_facts", "kernel_threads", "run_baseline"]

RATIO_TARGET = 1.10  # issue #34: new / old median <= 1.10 in every cell


def add_option(parser):
    """Add ``--baseline-python PATH`` to a script's parser."""
    parser.add_argument("--baseline-python", metavar="PATH",
                        help="also run every cell with this interpreter (e.g. the old numba ssvm's venv) in a child "
                        "process and print new, old and new/old per cell")


@contextmanager
def kernel_threads(n):
    """The compiled kernels of this interpreter's ssvm on ``n`` threads inside the block.

    OpenMP's limit (``threadpool_limits(n, user_api="openmp")``: ssvm's Cython kernels follow it),
    and numba's thread count when this process's ssvm has imported numba (an old, numba-compiled
    ssvm run as a ``--baseline-python``): the same cells on the same threads for both.
    """
    from threadpoolctl import threadpool_limits

    numba = sys.modules.get("numba")
    before = numba.get_num_threads() if numba is not None else None
    try:
        if numba is not None:
            numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
        with threadpool_limits(n, user_api="openmp"):
            yield
    finally:
        if numba is not None:
            numba.set_num_threads(before)


def cpu_facts():
    """One line on the machine and this interpreter's ssvm: CPU model, cores, SIMD, load, versions."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    simd = [f for f in ("sse4_2", "avx2", "fma", "avx512f") if f in flags]
    from joblib import cpu_count

    import ssvm

    kernels = "numba" if "numba" in sys.modules else "compiled at build"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{model}; {cpu_count(only_physical_cores=True)} cores ({os.cpu_count()} logical); "
            f"SIMD {' '.join(simd) or 'none found'}; load average {load}; Python {platform.python_version()}, "
            f"numpy {np.__version__}; ssvm from {Path(ssvm.__file__).parent} (kernels: {kernels})")


def _child_argv(argv, json_path):
    """``argv`` without ``--baseline-python``, ``--json`` and ``--plot`` (and their values), with
    ``--json json_path``."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--baseline-python", "--json", "--plot"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out + ["--json", str(json_path)]


def run_baseline(python, script, argv, timeout=None):
    """Run ``script`` with the interpreter ``python`` and the options ``argv`` (the parent's, less
    the baseline, JSON and plot options) in a child process; return its JSON payload.

    The child writes its tables to this process's stderr, so that stdout keeps the parent's own
    output and the comparison.

    Raises
    ------
    RuntimeError
        If the child fails (its exit status and the end of its error output).
    """
    with tempfile.TemporaryDirectory(prefix="ssvm-baseline-") as tmp:
        path = Path(tmp) / "baseline.json"
        proc = subprocess.run([python, str(script), *_child_argv(argv, path)], stdout=sys.stderr,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"the baseline run ({python}) failed with status {proc.returncode}:\n"
                               f"{proc.stderr[-3000:]}")
        sys.stderr.write(proc.stderr)
        return json.loads(path.read_text())


def comparison_table(new_rows, old_rows, keys, values):
    """Rows ``keys..., <value> new, <value> old, <value> new/old`` for every cell in both runs.

    Parameters
    ----------
    new_rows, old_rows : list of dict
        The two runs' records of one table.
    keys : list of str
        The fields that name a cell.
    values : list of str
        The timed fields to compare (a cell missing one, or with None, is left out of it).

    Returns
    -------
    list of dict
    """
    old = {tuple(r.get(k) for k in keys): r for r in old_rows}
    rows = []
    for r in new_rows:
        cell = tuple(r.get(k) for k in keys)
        if cell not in old:
            continue
        row = dict(zip(keys, cell))
        for v in values:
            a, b = r.get(v), old[cell].get(v)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
                row.update({f"{v} new": a, f"{v} old": b, f"{v} new/old": a / b})
        if len(row) > len(keys):
            rows.append(row)
    return rows
