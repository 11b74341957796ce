"""Scale of windows + CNN window features: time, memory and disk per image, extrapolated to VOC 2007.

On a sample of training images (``--images``, spread over the split) it measures:

* selective search per image (one core; and the wall time per image of two joblib workers) for the
  ``--ss-settings`` (``mode@working_size``);
* CNN window features (:class:`ssvm.detection.CnnFeatures`, the default network and pooling unless
  ``--stage`` / ``--max-side`` / ``--grid`` say otherwise) at ``--windows`` windows per image (the
  first windows of the densest selective-search setting, topped up with random boxes where it
  returned fewer): the network's forward pass and the RoIAlign pooling per image with torch on one
  thread and on two threads in one process (one thread only with ``--quick``), and the wall time
  per image of two single-threaded joblib workers (``WindowStore.build(..., n_jobs=2)``), which is
  what "2 cores" gives;
* memory: the peak resident memory of a fresh process computing one image's features, and how
  much of it the image's windows add over a one-window call (network and torch loaded);
* disk: the bytes per image of a ``WindowStore`` (features float32 + boxes float64), and the time
  of one scoring pass over the store (``WindowStore.score``, float32, from the page cache; the
  median of three), and the disk's sequential read rate bypassing the page cache (O_DIRECT);
* the extrapolation to VOC 2007 trainval (5,011 images) at each window count, with each
  selective-search setting that gives at least that many windows: store size, hours of
  windows + features on 2 cores, and seconds per scoring pass (page-cache rate; a store larger
  than memory is read from disk at the measured rate instead).

Timings on a shared machine are noisy: medians over the sample images are printed.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit, format_table, make_parser, setup  # noqa: E402
from _windows import add_data_arguments, capped, load_detection_splits, search_all  # noqa: E402

logger = logging.getLogger("scripts")

VOC2007_TRAINVAL = 5011


def parse_args(argv=None):
    """Command line (shared options from ``_common.make_parser``)."""
    parser = make_parser(__doc__)
    add_data_arguments(parser)
    parser.add_argument("--images", type=int, help="sample images (default 20; --quick 2)")
    parser.add_argument("--windows", help="windows per image (default 150,500,2000; --quick 20,50)")
    parser.add_argument("--ss-settings", help="selective-search settings to time "
                        "(default fast@256,fast@512,quality@512; --quick fast@128)")
    parser.add_argument("--stage", help="EfficientNet-Lite0 stage (default: CnnFeatures' default)")
    parser.add_argument("--max-side", type=int, help="network input side (default: CnnFeatures' default)")
    parser.add_argument("--grid", type=int, help="RoIAlign cells per side (default: CnnFeatures' default)")
    parser.add_argument("--out", metavar="DIR", help="cache of windows and the stores (default: temporary)")
    args = setup(parser, argv)
    if args.plot:
        parser.error("this script draws no figure")
    args.images = args.images or (2 if args.quick else 20)
    args.threads = (1,) if args.quick else (1, 2)
    try:
        args.windows = [int(w) for w in (args.windows or ("20,50" if args.quick else "150,500,2000")).split(",")]
        args.ss_settings = [(mode, int(size)) for mode, size in (s.split("@") for s in (
            args.ss_settings or ("fast@128" if args.quick else "fast@256,fast@512,quality@512")).split(","))]
    except ValueError:
        parser.error("--windows must look like 150,500 and --ss-settings like fast@256,quality@512")
    return args


def sample(dataset, n):
    """``n`` image paths spread evenly over the split."""
    picks = np.unique(np.linspace(0, len(dataset) - 1, min(n, len(dataset))).round().astype(int))
    return [dataset.image_paths[i] for i in picks]


def top_up(boxes, shape, count, rng):
    """The first ``count`` windows, plus random boxes inside the image if there are fewer."""
    boxes = boxes[:count]
    missing = count - len(boxes)
    if missing <= 0:
        return boxes
    height, width = shape
    x = np.sort(rng.uniform(1, width, size=(missing, 2)), axis=1)
    y = np.sort(rng.uniform(1, height, size=(missing, 2)), axis=1)
    return np.vstack([boxes, np.column_stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]])])


# VmHWM (this process's peak) rather than ru_maxrss, which after fork + exec keeps the parent's peak
_PROBE = """
import pickle, sys
from pathlib import Path
from ssvm.detection import read_image
def peak():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM"))
    return int(line.split()[1])
extractor, path, boxes = pickle.load(open(sys.argv[1], "rb"))
image = read_image(path)
extractor(image, boxes[:1])  # the network loaded and run once
base = peak()
extractor(image, boxes)
print(base, peak())
"""


def peak_memory(extractor, path, boxes, work):
    """Peak resident memory (MB) of a fresh process computing one image's features, and its growth
    over the same process after a one-window call (the network and torch already loaded); Linux."""
    import pickle
    import subprocess

    job = Path(work) / "memory-probe.pkl"
    job.write_bytes(pickle.dumps((extractor, str(path), boxes)))
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                          os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", _PROBE, str(job)], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    base, peak = (int(v) / 1024 for v in out[-2:])  # kB
    return peak, peak - base


def disk_read_rate(path):
    """Sequential read rate (GB/s) of a file bypassing the page cache (O_DIRECT); NaN if unsupported."""
    import mmap

    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except (AttributeError, OSError):
        return float("nan")
    buffer = mmap.mmap(-1, 1 << 24)  # page-aligned, as O_DIRECT needs
    total, start = 0, time.perf_counter()
    try:
        while True:
            n = os.readv(fd, [buffer])
            total += n
            if n < len(buffer):
                break
    except OSError:
        return float("nan")
    finally:
        os.close(fd)
    return total / (time.perf_counter() - start) / 2**30


def time_selective_search(paths, settings, work):
    """Rows of selective-search cost per setting, and each setting's uncapped windows."""
    rows, windows = [], {}
    for mode, size in settings:
        searched = search_all(paths, mode, size, n_jobs=1, cache_dir=None)
        start = time.perf_counter()
        search_all(paths, mode, size, n_jobs=2, cache_dir=None)
        wall = (time.perf_counter() - start) / len(paths)
        windows[(mode, size)] = searched
        rows.append({"setting": f"{mode}@{size}",
                     "win/img": float(np.mean([len(b) for b, _, _ in searched])),
                     "s/img 1 core": float(np.median([s for _, s, _ in searched])),
                     "s/img 2 workers": wall})
        logger.info("selective search %s@%d: %.2f s per image", mode, size, rows[-1]["s/img 1 core"])
    return rows, windows


def time_features(extractor, images, windows, threads):
    """Median forward and pooling seconds per image, torch on ``threads`` threads in this process."""
    import torch

    from ssvm.detection import read_image

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    forward, pooling = [], []
    try:
        for path, boxes in zip(images, windows):
            image = read_image(path)
            x = extractor.preprocess(image)
            start = time.perf_counter()
            maps = extractor.feature_maps(x[None])
            middle = time.perf_counter()
            extractor.pool(maps[0], boxes, image.shape[:2], tuple(x.shape[1:]))
            forward.append(middle - start)
            pooling.append(time.perf_counter() - middle)
    finally:
        torch.set_num_threads(previous)
    return float(np.median(forward)), float(np.median(pooling))


def run(args):
    import torch

    from ssvm.detection import (
        CnnFeatures,
        WindowStore,
        efficientnet_lite0,
        whole_image_box,
    )

    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-windows-"))
    root, data = load_detection_splits(args, work, splits=("train",))
    paths = sample(data["train"], args.images)
    logger.info("%d sample images of %s", len(paths), root)
    ss_rows, searched = time_selective_search(paths, args.ss_settings, work)
    densest = max(searched, key=lambda key: np.mean([len(b) for b, _, _ in searched[key]]))
    options = {"verbose": 0}
    if args.grid:
        options["output_size"] = args.grid
    if args.max_side:
        options["max_side"] = args.max_side
    extractor = CnnFeatures(efficientnet_lite0(args.stage), **options) if args.stage \
        else CnnFeatures(**options)
    _ = extractor.module  # load the network before timing
    # start the two workers (and their copy of the network) before timing: joblib reuses them
    WindowStore.build(work / "warm-up", paths[:2], [whole_image_box(*shape) for _, _, shape in
                                                    searched[densest][:2]], extractor, n_jobs=2,
                      resume=False)
    rng = np.random.default_rng(args.seed)
    feature_rows, disk_rows = [], []
    for count in args.windows:
        windows = [top_up(capped(b, shape, count), shape, count, rng) for b, _, shape in searched[densest]]
        row = {"windows": count}
        for threads in args.threads:
            forward, pooling = time_features(extractor, paths, windows, threads)
            row[f"forward s {threads}t"] = forward
            row[f"pool s {threads}t"] = pooling
        start = time.perf_counter()
        store = WindowStore.build(work / f"store-{count}", paths, windows, extractor, n_jobs=2,
                                  resume=False)
        row["s/img 2 workers"] = (time.perf_counter() - start) / len(paths)
        row["process peak MB"], row["growth MB"] = peak_memory(extractor, paths[0], windows[0], work)
        feature_rows.append(row)
        n_bytes = sum(os.path.getsize(store.path / name) for name in ("features.npy", "boxes.npy",
                                                                        "offsets.npy", "done.npy"))
        w = np.random.default_rng(0).normal(size=store.n_features)
        store.score(w, dtype=np.float32)  # warm the page cache
        passes = []
        for _ in range(3):
            start = time.perf_counter()
            store.score(w, dtype=np.float32)
            passes.append(time.perf_counter() - start)
        per_row = float(np.median(passes)) / store.n_windows
        disk_rows.append({"windows": count, "dims": store.n_features, "MB/img": n_bytes / len(paths) / 2**20,
                          "score s/Mrow": per_row * 1e6})
        logger.info("%d windows: %.2f s per image on 2 workers", count, row["s/img 2 workers"])
    # the read rate of the largest store (small files measure latency, not the rate)
    rate = disk_read_rate(work / f"store-{max(args.windows)}" / "features.npy")
    ss_by_name = {r["setting"]: r for r in ss_rows}
    voc_rows = []
    for f_row, d_row in zip(feature_rows, disk_rows):
        for setting, s_row in ss_by_name.items():
            if s_row["win/img"] < f_row["windows"]:
                continue  # that setting does not give that many windows
            seconds = (s_row["s/img 2 workers"] + f_row["s/img 2 workers"]) * VOC2007_TRAINVAL
            store_gb = d_row["MB/img"] * VOC2007_TRAINVAL / 1024
            voc_rows.append({"windows": f_row["windows"], "selective search": setting,
                             "store GB": store_gb, "windows + features h": seconds / 3600,
                             "score pass s (cache)": d_row["score s/Mrow"] * f_row["windows"]
                             * VOC2007_TRAINVAL / 1e6,
                             "score pass s (disk)": store_gb / rate})
    n_params = sum(p.numel() for p in extractor.module.parameters())
    header = (f"{len(paths)} images of {root.name}; features: {extractor!r} "
              f"({n_params / 1e6:.2f} M parameters); torch {torch.__version__}, {os.cpu_count()} CPUs")
    tables = [
        header,
        format_table(ss_rows, floatfmt={"win/img": ".0f", "s/img 1 core": ".2f", "s/img 2 workers": ".2f"},
                     title="Selective search per image (2 workers: wall time per image of two processes)"),
        format_table(feature_rows, floatfmt=".3f", title=(
            f"CNN window features per image (windows from {densest[0]}@{densest[1]}, topped up with "
            "random boxes; 1t/2t: torch threads in one process; 2 workers: WindowStore.build "
            "n_jobs=2, wall time per image)")),
        format_table(disk_rows, floatfmt={"MB/img": ".2f", "score s/Mrow": ".3f"},
                     title=f"Store on disk per image; one scoring pass per million windows (float32, page "
                           f"cache); the disk reads {rate:.2f} GB/s (O_DIRECT, no page cache)"),
        format_table(voc_rows, floatfmt={"store GB": ".1f", "windows + features h": ".1f",
                                         "score pass s (cache)": ".0f", "score pass s (disk)": ".0f"},
                     title=f"Extrapolation to VOC 2007 trainval ({VOC2007_TRAINVAL} images) on 2 cores; "
                           "a scoring pass reads the store from the page cache if it fits in memory, "
                           "else from disk"),
    ]
    emit(args, tables, {"data": str(root), "images": [str(p) for p in paths], "extractor": repr(extractor),
                        "selective_search": ss_rows, "features": feature_rows, "disk": disk_rows,
                        "voc2007": voc_rows, "disk_read_gb_per_s": rate})


def main(argv=None):
    run(parse_args(argv))


if __name__ == "__main__":
    main()
