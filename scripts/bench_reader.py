"""Reading LETOR files: ssvm's compiled reader against scikit-learn's load_svmlight_file, side by side.

Two kinds of file, each written at every ``--rows`` size (10^5 and 10^6 by default) into a
temporary folder (``--data-dir`` keeps them):

* ``MSLR-like``: shaped as MSLR-WEB10K (which does not ship with ssvm): 136 features, every one
  written on every row as MSLR writes them, spelled as MSLR spells them (counts, fractions with up
  to 6 decimals, scores that can be negative, large integers), grades 0-4 in MSLR's proportions,
  ``qid:`` queries of 60 to 180 rows (120 on average); the rows are drawn from a pool of 5,000;
* ``sample x k``: the bundled LETOR sample (LightGBM's lambdarank example: 300 features, about 95
  written per row, grades 0-4) copied until it has the rows, each copy of a query with a new
  ``qid:`` token (the sample's ``.query`` structure written into the rows).

Readers: ``ssvm`` (``ssvm.datasets.load_letor``: matrix, labels and qids), ``sklearn``
(``sklearn.datasets.load_svmlight_file(path)``: matrix and labels, the qids skipped) and ``sklearn,
qid`` (``load_svmlight_file(path, query_id=True)``, what a ranking user needs; it appends each row's
qid with ``np.append``, a copy of every qid so far, so its time grows with the square of the rows:
it is timed only up to ``--qid-rows`` rows), all reading the index base as ``"auto"``. Each reads
each file in a fresh child process, ``--repeats`` times; the file is read once before, so the page
cache holds it for all. Columns: ``seconds``, the median wall time of the call,
and ``CPU s``, its median CPU time (user + system: on a shared machine the wall time grows with the
load, the CPU time much less); ``peak MB``, the largest growth of the process's resident memory
during the call (``VmHWM``, reset first through ``/proc/self/clear_refs``, minus the resident memory
before it; Linux), median over the repeats; ``CSR MB``, the bytes of the matrix returned (data +
indices + indptr) and ``peak/CSR``; ``vs sklearn``, the seconds of ``sklearn`` (without the qids, its
fastest) over the reader's. At the smallest size ``ssvm`` and ``sklearn, qid`` also read the file in
this process, and ``same`` says whether they return the same matrix, labels and qids.

Targets: ssvm at least as fast as scikit-learn (without the qids) at every size, and its peak at
most 2x its CSR matrix.

Usage: ``python scripts/bench_reader.py [--rows 100000 1000000] [--repeats 3] [--qid-rows 100000]
[--data-dir DIR] [--quick] [--json PATH] [--plot DIR] [--seed K]``.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import _common
import numpy as np
from _common import format_table, logger

N_FEATURES = 136
GRADES = (0.52, 0.32, 0.13, 0.02, 0.01)  # MSLR-WEB10K's grade proportions, about
SAMPLE = Path(__file__).resolve().parents[1] / "src" / "ssvm" / "datasets" / "data" / "letor_sample"

_PROBE = r"""
import json, sys, time
from pathlib import Path

def status(key):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(key))
    return int(line.split()[1]) * 1024

reader, path, tiny = sys.argv[1:4]
if reader == "ssvm":
    from ssvm.datasets import load_letor as load
else:
    from functools import partial
    from sklearn.datasets import load_svmlight_file
    load = partial(load_svmlight_file, query_id=reader == "sklearn, qid")
load(tiny)  # imports and first calls before the measurement
Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
base = status("VmRSS:")
start, cpu = time.perf_counter(), time.process_time()
X = load(path)[0]
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = status("VmHWM:") - base
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak": peak, "rows": X.shape[0], "nnz": X.nnz,
                  "csr": X.data.nbytes + X.indices.nbytes + X.indptr.nbytes}))
"""


def cpu_model():
    """The CPU's model name (Linux ``/proc/cpuinfo``), or the platform's processor string."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _spell(values):
    """Numbers as MSLR writes them: integers bare, others with up to 6 decimals, no trailing zeros."""
    return [str(int(v)) if v == int(v) else f"{v:.6f}".rstrip("0") for v in values.tolist()]


def mslr_pool(rng, size=5000):
    """``size`` feature parts (``1:v 2:v ... 136:v``) with MSLR's kinds of columns."""
    kinds = np.array(["count"] * 15 + ["idf"] * 5 + ["count"] * 25 + ["fraction"] * 50 + ["score"] * 30
                     + ["large"] * 11)
    columns = []
    for kind in kinds:
        if kind == "count":
            column = rng.poisson(rng.uniform(0.3, 20), size).astype(float)
        elif kind == "idf":
            column = np.round(rng.uniform(1, 25, size), 6)
        elif kind == "fraction":
            column = np.round(rng.beta(0.5, 3, size) * (rng.random(size) < 0.6), 6)
        elif kind == "score":
            column = np.round(rng.normal(-5, 12, size) * (rng.random(size) < 0.8), 6)
        else:
            column = np.floor(rng.lognormal(6, 3, size))
        columns.append(_spell(column))
    return [" ".join(f"{j + 1}:{column[i]}" for j, column in enumerate(columns)) for i in range(size)]


def write_mslr_like(path, n_rows, rng):
    """An MSLR-WEB10K-shaped file of ``n_rows`` rows (see the module docstring)."""
    pool = mslr_pool(rng)
    qid, written = 0, 0
    with open(path, "w", encoding="ascii") as handle:
        while written < n_rows:
            qid += 1
            size = min(int(rng.integers(60, 181)), n_rows - written)
            grades = rng.choice(5, size, p=GRADES)
            rows = rng.integers(0, len(pool), size)
            handle.write("".join(f"{g} qid:{qid} {pool[r]}\n" for g, r in zip(grades.tolist(), rows.tolist())))
            written += size


def write_sample_copies(path, n_rows):
    """The bundled LETOR sample's training file copied to ``n_rows`` rows, ``qid:`` per query copy."""
    with gzip.open(SAMPLE / "rank.train.gz", "rt", encoding="ascii") as handle:
        lines = handle.read().splitlines()
    sizes = [int(v) for v in (SAMPLE / "rank.train.query").read_text().split()]
    queries = np.split(np.array(lines, dtype=object), np.cumsum(sizes)[:-1])
    qid, written = 0, 0
    with open(path, "w", encoding="ascii") as handle:
        while written < n_rows:
            for query in queries:
                qid += 1
                part = query[: n_rows - written]
                handle.write("".join(f"{label} qid:{qid} {rest}\n"
                                     for label, rest in (line.split(" ", 1) for line in part)))
                written += len(part)
                if written == n_rows:
                    break


def probe(reader, path, tiny):
    """One read in a fresh process: seconds, peak growth (bytes), CSR bytes."""
    done = subprocess.run([sys.executable, "-c", _PROBE, reader, str(path), str(tiny)],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{reader} on {path} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def same_result(path):
    """Whether both readers give the same matrix, labels and qids (read in this process)."""
    from sklearn.datasets import load_svmlight_file

    from ssvm.datasets import load_letor

    X, y, qid = load_letor(path)
    X_ref, y_ref, qid_ref = load_svmlight_file(str(path), query_id=True)
    return (X.shape == X_ref.shape and (X != X_ref).nnz == 0 and np.array_equal(y, y_ref)
            and np.array_equal(qid, qid_ref))


def measure(kind, path, n_rows, repeats, tiny, check, with_qid):
    """The rows of the table for one file."""
    Path(path).read_bytes()  # into the page cache, for every reader alike
    readers = ("ssvm", "sklearn", "sklearn, qid") if with_qid else ("ssvm", "sklearn")
    runs = {reader: [probe(reader, path, tiny) for _ in range(repeats)] for reader in readers}
    seconds = {reader: float(np.median([run["seconds"] for run in got])) for reader, got in runs.items()}
    cpu = {reader: float(np.median([run["cpu"] for run in got])) for reader, got in runs.items()}
    same = same_result(path) if check else None
    rows = []
    for reader, got in runs.items():
        peak = float(np.median([run["peak"] for run in got])) / 2**20
        csr = got[0]["csr"] / 2**20
        rows.append({"file": kind, "rows": n_rows, "file MB": Path(path).stat().st_size / 2**20,
                     "reader": reader, "seconds": seconds[reader], "CPU s": cpu[reader], "peak MB": peak, "CSR MB": csr,
                     "peak/CSR": peak / csr, "vs sklearn": seconds["sklearn"] / seconds[reader],
                     "same": same})
        logger.info("%s, %d rows, %s: %.2f s, peak %.0f MB (%.2fx its CSR)", kind, n_rows, reader,
                    seconds[reader], peak, peak / csr)
    return rows


def plot(rows, plot_dir):
    """Bars: seconds and peak/CSR per file and size, the two readers side by side."""
    plt = _common.pyplot()
    labels = [f"{r['file']}\n{r['rows']:.0e} rows" for r in rows if r["reader"] == "ssvm"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, key in zip(axes, ("seconds", "peak/CSR")):
        x = np.arange(len(labels))
        for offset, reader in ((-0.2, "ssvm"), (0.2, "sklearn")):  # sklearn without the qids, its fastest
            ax.bar(x + offset, [r[key] for r in rows if r["reader"] == reader], width=0.4, label=reader)
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_ylabel(key)
        ax.set_yscale("log" if key == "seconds" else "linear")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(f"{plot_dir}/reader.png", dpi=100)
    plt.close(fig)


def main(argv=None):
    """Command-line entry point."""
    parser = _common.make_parser(__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000],
                        help="file sizes in rows (default 100000 1000000)")
    parser.add_argument("--repeats", type=int, default=3, help="reads per reader and file (default 3)")
    parser.add_argument("--qid-rows", type=int, default=100_000,
                        help="time load_svmlight_file(query_id=True) up to this many rows (default 100000)")
    parser.add_argument("--data-dir", help="write the files here and keep them (default: a temporary folder)")
    args = _common.setup(parser, argv)
    sizes, repeats = ([2000], 1) if args.quick else (sorted(args.rows), args.repeats)
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="ssvm-bench-reader-") as scratch:
        folder = Path(args.data_dir or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        tiny = folder / "tiny.txt"
        tiny.write_text("1 qid:1 1:0.5 3:1\n0 qid:1 2:2\n")
        rows = []
        for n_rows in sizes:
            for kind, write in (("MSLR-like", lambda p, n: write_mslr_like(p, n, rng)),
                                ("sample x k", write_sample_copies)):
                path = folder / f"{kind.split()[0].lower()}_{n_rows}.txt"
                logger.info("writing %s (%d rows)", path, n_rows)
                write(path, n_rows)
                rows += measure(kind, path, n_rows, repeats, tiny, check=n_rows == sizes[0],
                                with_qid=n_rows <= args.qid_rows)
                if not args.data_dir:
                    path.unlink()
    machine = {**_common.machine_info(), "cpu": cpu_model()}
    title = (f"Reading LETOR files: seconds (median of {repeats}) and peak memory in a fresh process; "
             f"{machine['cpus']} CPUs, {machine['cpu']}, {machine['platform']}")
    fmt = {"file MB": ".0f", "seconds": ".2f", "CPU s": ".2f", "peak MB": ".0f", "CSR MB": ".0f", "peak/CSR": ".2f",
           "vs sklearn": ".1f"}
    table = format_table(rows, title=title, floatfmt=fmt)
    if args.plot:
        plot(rows, args.plot)
    _common.emit(args, [table], {"rows": rows, "cpu": machine["cpu"], "repeats": repeats})
    return 0


if __name__ == "__main__":
    sys.exit(main())
