"""First use: what a new user's first commands cost (issue #34, item 4), each in a fresh process.

Rows, each timed from outside its process (wall time; CPU time = user + system of the process and
its children):

* ``pip install .``: a fresh virtual environment, then ``pip install <checkout>`` (the build of the
  compiled kernels included; dependencies from pip's cache or index). Its interpreter then runs
  every row below: no cache of any kind exists yet;
* ``import ssvm``: a fresh process that imports ssvm;
* ``first fit``: a fresh process that imports ssvm and fits ``RankSVM(loss="ap")`` on 2,000 × 10
  rows with ``qid`` (20 queries);
* ``first ssvm demo --quick``: the quick demo (``--no-progress -q``);
* ``a new dask worker's first task``: a ``LocalCluster`` of one new worker process runs one task
  (the in-memory training round of a small ranking problem, fused: scores, QS oracles, ``Xᵀ c``, and
  the 0-1 oracle's) and then a second one; the worker's own clock times each: a first task that
  compiled would be seconds slower than the second.

The targets are the issue's: import ≤ 0.5 s, first fit ≤ 1.5 s, quick demo ≤ 10 s, ``pip install``
≤ 150 s, and a worker's first task without compilation (here: within 1 s of its second). The CPU
facts and the load average are printed with the table: measure on an idle machine.

``--baseline-python PATH`` measures the same rows (all but ``pip install``) again with that
interpreter's ssvm, for example the old, numba-compiled one (``/work/venv-old/bin/python``), with
``NUMBA_CACHE_DIR`` pointed at a new empty directory so that its JIT cache is as empty as a new
user's; a last table prints, per row, this build, the baseline and their ratio. ``--python PATH``
measures that interpreter's ssvm instead of a fresh venv (no ``pip install`` row). ``--quick`` (the
smoke test) measures the import and the first fit with this interpreter only (and the baseline's).

Usage: ``python scripts/bench_first_use.py [--quick] [--python PATH] [--baseline-python PATH]
[--json PATH] [--plot DIR]``.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _baseline
import _common
from _common import format_table, logger

ROOT = Path(__file__).resolve().parents[1]

FIT = """
import numpy as np
from ssvm import RankSVM
rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 10))
y = (X[:, 0] + rng.standard_normal(2000) > 1.0).astype(int)
RankSVM(loss="ap").fit(X, y, qid=np.repeat(np.arange(20), 100))
"""

WORKER = """
import json, warnings
from distributed import Client, LocalCluster

def task(seed):
    import time
    t0 = time.perf_counter()
    import numpy as np
    from ssvm.losses import get_oracle
    from ssvm.problem import StructuredHinge
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((3000, 20))
    y = rng.random(3000) < 0.1
    queries = [np.arange(a, a + 100) for a in range(0, 3000, 100)]
    for loss in ("ap", "ndcg", "zero_one"):
        oracle = get_oracle(loss, **({"gain": "binary"} if loss == "ndcg" else {}))
        StructuredHinge(X, y, queries, oracle).plane(rng.standard_normal(20))
    return time.perf_counter() - t0

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \\
            Client(cluster) as client:
        first = client.submit(task, 0, pure=False).result()
        second = client.submit(task, 1, pure=False).result()
print(json.dumps([first, second]))
"""

TARGETS = {"pip install .": 150.0, "import ssvm": 0.5, "first fit (2,000 x 10, qid)": 1.5,
           "first ssvm demo --quick": 10.0}


def timed(argv, env=None, **kwargs):
    """``(wall seconds, CPU seconds, stdout)`` of one process (and its children); ``env``: variables
    added to this process's environment."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, **kwargs)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed:\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def row(what, wall, cpu, note=""):
    target = TARGETS.get(what)
    logger.info("%s: %.2f s wall, %.2f s CPU", what, wall, cpu)
    return {"what": what, "wall s": wall, "CPU s": cpu, "target s": target,
            "met": None if target is None else bool(wall <= target), "note": note}


def fresh_venv(tmp):
    """A new venv in ``tmp`` with this checkout installed: ``(python, row of pip install)``."""
    venv = Path(tmp) / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    wall, cpu, _ = timed([python, "-m", "pip", "install", "-q", str(ROOT)], cwd=tmp)
    pip_row = row("pip install .", wall, cpu, "fresh venv, the kernels' build included")
    # dask for the worker row, untimed (an extra, not the install the issue times)
    subprocess.run([python, "-m", "pip", "install", "-q", "dask[array]", "distributed"], check=True,
                   capture_output=True, cwd=tmp)
    return python, pip_row


def first_use_rows(python, quick, cwd, env=None):
    """The rows of a first use with ``python`` (in fresh processes, from ``cwd``, with ``env`` added
    to their environment)."""
    rows = [row("import ssvm", *timed([python, "-c", "import ssvm"], env, cwd=cwd)[:2]),
            row("first fit (2,000 x 10, qid)", *timed([python, "-c", FIT], env, cwd=cwd)[:2])]
    if quick:
        return rows
    rows.append(row("first ssvm demo --quick",
                    *timed([python, "-m", "ssvm", "demo", "--quick", "--no-progress", "-q"], env, cwd=cwd)[:2]))
    wall, cpu, out = timed([python, "-c", WORKER], env, cwd=cwd)
    first, second = json.loads(out.splitlines()[-1])
    worker = row("a new dask worker's first task", first, cpu,
                 f"its second task {second:.2f} s; the cluster's process {wall:.1f} s wall")
    worker.update({"target s": None, "met": bool(first - second <= 1.0)})
    rows.append(worker)
    return rows


def plot(rows, plot_dir):
    """Bars: wall seconds per row, the target as a tick."""
    plt = _common.pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = range(len(rows))
    ax.bar(list(x), [r["wall s"] for r in rows], width=0.6, label="wall")
    ax.scatter([i for i, r in enumerate(rows) if r["target s"]], [r["target s"] for r in rows if r["target s"]],
               marker="_", s=400, color="k", label="target")
    ax.set_xticks(list(x), [r["what"] for r in rows], fontsize=7, rotation=15)
    ax.set_yscale("log")
    ax.set_ylabel("seconds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/first_use.png", dpi=100)
    plt.close(fig)


def baseline_rows(python, quick, tmp):
    """:func:`first_use_rows` with the baseline interpreter, its numba JIT cache (if it has one)
    redirected to a new empty directory: the first use of a new user of that build."""
    cache = Path(tmp) / "numba-cache"
    cache.mkdir()
    return first_use_rows(python, quick, tmp, env={"NUMBA_CACHE_DIR": str(cache)})


def ratio_rows(rows, old_rows):
    """Per row measured by both: this build's wall and CPU seconds, the baseline's and new / old."""
    old = {r["what"]: r for r in old_rows}
    return [{"what": r["what"], "wall s": r["wall s"], "baseline wall s": old[r["what"]]["wall s"],
             "wall new/old": r["wall s"] / old[r["what"]]["wall s"], "CPU s": r["CPU s"],
             "baseline CPU s": old[r["what"]]["CPU s"]} for r in rows if r["what"] in old]


def main(argv=None):
    """Command-line entry point."""
    parser = _common.make_parser(__doc__)
    parser.add_argument("--python", metavar="PATH", help="measure this interpreter's ssvm (no fresh venv)")
    parser.add_argument("--baseline-python", metavar="PATH",
                        help="also measure this interpreter's ssvm (e.g. the old numba one), its JIT cache empty")
    args = _common.setup(parser, argv)
    old_rows = []
    with tempfile.TemporaryDirectory(prefix="ssvm-first-use-") as tmp:
        if args.quick or args.python:
            python, rows = args.python or sys.executable, []
        else:
            python, pip_row = fresh_venv(tmp)
            rows = [pip_row]
        rows += first_use_rows(python, args.quick, tmp)
        if args.baseline_python:
            old_rows = baseline_rows(args.baseline_python, args.quick, tmp)
    facts = _baseline.cpu_facts()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    tables = [format_table(rows, floatfmt={"wall s": ".2f", "CPU s": ".2f", "target s": "g"},
                           title=f"First use, each row a fresh process ({python}); load average now {load}\n{facts}")]
    payload = {"python": python, "cpu": facts, "rows": rows}
    if args.baseline_python:
        tables.append(format_table(old_rows, floatfmt={"wall s": ".2f", "CPU s": ".2f", "target s": "g"},
                                   title=f"The same with the baseline {args.baseline_python} (its JIT cache empty)"))
        compared = ratio_rows(rows, old_rows)
        tables.append(format_table(compared, floatfmt=".2f", title="This build against the baseline"))
        payload["baseline"] = {"python": args.baseline_python, "rows": old_rows, "comparison": compared}
    if args.plot:
        plot(rows, args.plot)
    _common.emit(args, tables, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
