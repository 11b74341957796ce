"""Mutation testing of the front door (issue #37): cosmic-ray, module by module, with the tests that cover it.

    python tools/mutation.py                       # every module below; a summary table at the end
    python tools/mutation.py cli model_files       # some of them
    python tools/mutation.py --report --survivors  # the kept sessions' table and every survivor's diff
    python tools/mutation.py --list                # the modules, their files and their tests

cosmic-ray (in the ``dev`` extra) writes one mutant at a time into the file itself, runs a test
command and puts the file back. That is what an editable meson-python install needs: ``import
ssvm`` maps to ``src/ssvm`` through an import hook, so a tool that copied the sources elsewhere
would test the unmutated package.

Three things keep a module to minutes on a shared 2-core machine:

* **A fork server.** Most of a ``pytest`` start is importing numpy, scipy, scikit-learn and numba.
  A server imports them once and forks a fresh process per mutant, which imports ``ssvm`` (the
  mutated file) and runs ``pytest.main``; cosmic-ray's test command is this script's ``client``.
* **Only the tests that run the mutated line.** Before the mutants, the module's tests
  (``MODULES``) run once under coverage, which records the tests that execute each line (the
  unmutated module must pass them, else it is not run). A mutant runs those tests, stopping at
  the first failure: the whole test file when a fixture ran the line, all the module's tests
  when it ran at import. A mutant of a line no test runs survives without a run ("uncovered").
* **One mutant per operator site and direction that matters** (``KEEP``): ``<`` ↔ ``<=``,
  ``>`` ↔ ``>=``, ``==`` ↔ ``!=``, ``!=`` → ``<`` / ``>``, ``==`` → ``<=`` / ``>=``, ``is`` ↔
  ``is not``, ``in`` ↔ ``not in``; ``+`` ↔ ``-``, ``*`` ↔ ``/``, ``//`` → ``/``, ``**`` → ``*``,
  ``&`` ↔ ``|``, ... . cosmic-ray's others (``<`` → ``is``, ``+`` → ``<<``, ...) are marked
  skipped: they crash at once or repeat these. Every other operator of cosmic-ray is kept.

Sessions (sqlite) are kept in ``.mutation/`` and resume where they stopped (``--fresh`` starts
again); ``--retest`` runs a session's survivors again (after new tests: the kill rate can only
grow, the killed mutants stay killed). ``--tests-root DIR`` runs the tests of another checkout's
``tests/`` (with its ``pyproject.toml``) against this ``src/``: the kill rate of an older suite.
While mutants are written into a file, a copy of it is kept in ``.mutation/`` and put back on the
way out, whatever stops the run (an error, Ctrl-C, ``kill``); a run that was killed outright
(``kill -9``, a closed session) leaves the copy, and the next run puts it back before anything
else. The run refuses to start, and stops, if ``src/`` is left changed. Survivors that no test can
kill are listed with the reason in ``docs/results/mutation.md``.
"""

import argparse
import contextlib
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT / ".mutation"

_FILES_TESTS = ["tests/test_persistence.py", "tests/test_model_files_relations.py", "tests/test_model_files_fuzz.py",
                "tests/test_cli.py"]
_CV_TESTS = ["tests/test_model_selection.py"]
_WARM_TESTS = ["tests/solvers/test_warm.py", "tests/solvers/test_cutting_plane.py", "tests/test_model_selection.py"]
# name: (file, the test files that cover it); a test file that does not exist is left out
MODULES = {
    "cli": ("src/ssvm/cli.py", ["tests/test_cli.py", "tests/test_cli_train.py"]),
    "model_files": ("src/ssvm/model_files.py", _FILES_TESTS),
    "model_schemas": ("src/ssvm/_model_schemas.py", _FILES_TESTS),
    "model_selection": ("src/ssvm/model_selection.py", _CV_TESTS),
    "cv_path": ("src/ssvm/_cv_path.py", _CV_TESTS),
    "letor": ("src/ssvm/datasets/letor.py", ["tests/datasets/test_letor.py", "tests/datasets/test_letor_twin.py",
                                             "tests/test_cli.py"]),
    "letor_lines": ("src/ssvm/datasets/_letor_lines.py", ["tests/datasets/test_letor.py",
                                                           "tests/datasets/test_letor_twin.py"]),
    "warm": ("src/ssvm/solvers/_warm.py", _WARM_TESTS),
    "warm_cutting_plane": ("src/ssvm/solvers/cutting_plane.py", _WARM_TESTS),
}
# of cutting_plane.py only the warm start is mutated: the lines that handle the carried bundle
LINE_FILTERS = {"warm_cutting_plane": re.compile(
    r"\b(warm|known)\b|model\.(load|planes)\(|Bundle\(|ws\.add\(float\(b_k\)")}
KEEP = {
    "Comparison": {("Lt", "LtE"), ("LtE", "Lt"), ("Gt", "GtE"), ("GtE", "Gt"), ("Eq", "NotEq"), ("NotEq", "Eq"),
                   ("NotEq", "Lt"), ("NotEq", "Gt"), ("Eq", "LtE"), ("Eq", "GtE"), ("Is", "IsNot"),
                   ("IsNot", "Is"), ("In", "NotIn"), ("NotIn", "In")},
    "Binary": {("Add", "Sub"), ("Sub", "Add"), ("Mul", "Div"), ("Div", "Mul"), ("FloorDiv", "Div"),
               ("Mod", "FloorDiv"), ("Pow", "Mul"), ("BitAnd", "BitOr"), ("BitOr", "BitAnd"), ("BitXor", "BitOr"),
               ("MatMult", "Mul"), ("LShift", "RShift"), ("RShift", "LShift")},
}
# imported once by the server, before any fork (never ssvm: each fork imports the mutated file)
PRELOAD = ["numpy", "scipy.sparse", "scipy.optimize", "scipy.stats", "sklearn", "sklearn.base", "sklearn.pipeline",
           "sklearn.preprocessing", "sklearn.model_selection", "sklearn.metrics", "sklearn.linear_model",
           "sklearn.svm", "sklearn.utils.estimator_checks", "sklearn.datasets", "numba", "joblib", "cvxpy",
           "coverage", "pytest", "hypothesis", "dask.array"]
PYTEST = ["-q", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
_MARK = "mutation-client:"  # the client's own lines; "uncovered" and "timeout" are tallied apart


# ------------------------------------------------------------------------------ the fork server


def _send(sock, payload):
    data = json.dumps(payload).encode()
    sock.sendall(len(data).to_bytes(8, "big") + data)


def _receive(sock):
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    size, data = int.from_bytes(head, "big"), b""
    while len(data) < size:
        chunk = sock.recv(min(65536, size - len(data)))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return json.loads(data)


def _request(address, payload):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(address)
        _send(sock, payload)
        return _receive(sock)


class _Contexts:
    """pytest plugin: coverage contexts ``call <nodeid>`` and ``setup <file>`` (fixtures), "" at import."""

    def __init__(self, cov):
        self.cov = cov

    def pytest_runtest_setup(self, item):
        self.cov.switch_context("setup " + item.nodeid.split("::")[0])

    def pytest_runtest_call(self, item):
        self.cov.switch_context("call " + item.nodeid)

    def pytest_runtest_teardown(self, item):
        self.cov.switch_context("setup " + item.nodeid.split("::")[0])


_RUNNING = []  # the process group of the test the server runs now


def _stop_server(*_):
    """The server's SIGTERM and SIGINT: kill the test it runs (its own process group), then exit."""
    for pid in _RUNNING:
        for kill in (os.killpg, os.kill):  # the group; the test itself if it has no group of its own yet
            with contextlib.suppress(ProcessLookupError):
                kill(pid, signal.SIGKILL)
    os._exit(143)


def _forked(work, timeout, sockets):
    """Run ``work()`` (→ exit status) in a fresh process group; ``(status or "timeout", output)``."""
    with tempfile.TemporaryFile() as log:
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                for s in sockets:  # a process the tests leave behind must not hold the answer back
                    s.close()
                os.setsid()
                sys.dont_write_bytecode = True  # no .pyc of a mutant (same size, same second)
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                status = work()
            except BaseException:  # noqa: B036 - whatever happens, the child reports and exits
                import traceback

                traceback.print_exc()
                status = 99
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        _RUNNING[:] = [pid]
        deadline = time.monotonic() + timeout
        while True:
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status = "timeout"
                break
            time.sleep(0.05)
        _RUNNING.clear()
        log.seek(0)
        return status, log.read().decode("utf-8", "replace")[-4000:]


def _prepare(module, sockets):
    """Run the module's tests once under coverage: which tests run each line (by statement)."""
    import coverage
    from coverage.parser import PythonParser

    path, cwd, tests = Path(module["path"]), module["cwd"], module["tests"]
    lines_file = tempfile.mktemp(suffix=".json")

    def work():
        import pytest

        os.chdir(cwd)
        cov = coverage.Coverage(data_file=None, include=[str(path)])
        cov.start()
        status = int(pytest.main([*PYTEST, "-x", *tests], plugins=[_Contexts(cov)]))
        cov.stop()
        data = cov.get_data()
        Path(lines_file).write_text(json.dumps({line: list(contexts) for line, contexts in
                                                data.contexts_by_lineno(str(path)).items()}))
        return status

    tic = time.perf_counter()
    status, output = _forked(work, module["timeout"], sockets)
    seconds = time.perf_counter() - tic
    if status != 0:
        return status, output, seconds
    runs = {int(line): contexts for line, contexts in json.loads(Path(lines_file).read_text()).items()}
    os.unlink(lines_file)
    parser = PythonParser(filename=str(path))
    parser.parse_source()
    text = path.read_text(encoding="utf-8")
    module.update(original=text.splitlines(), runs=runs, timeout=3 * seconds + 60,
                  first={n: parser.first_line(n) for n in range(1, len(text.splitlines()) + 1)})
    return 0, output, seconds


def _selection(module):
    """The tests of the mutant now in the module's file: pytest arguments, or None (no test runs it)."""
    now = Path(module["path"]).read_text(encoding="utf-8").splitlines()
    changed = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, module["original"], now,
                                                      autojunk=False).get_opcodes():
        if tag != "equal":
            changed.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    contexts = set()
    for line in changed:
        contexts.update(module["runs"].get(module["first"].get(line, line), ()))
    if not contexts:
        return None
    if "" in contexts:  # ran at import: every test of the module
        return module["tests"]
    files = sorted({c.split(" ", 1)[1] for c in contexts if c.startswith("setup ")})
    calls = sorted(c.split(" ", 1)[1] for c in contexts if c.startswith("call ") and
                   c.split(" ", 1)[1].split("::")[0] not in files)
    return [*files, *calls]


def serve(address):
    """Import ``PRELOAD``, then answer requests: ``prepare`` a module, or test the mutant in its file."""
    import importlib

    signal.signal(signal.SIGTERM, _stop_server)
    signal.signal(signal.SIGINT, _stop_server)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    modules = {}
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(1)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        with conn:
            request = _receive(conn)
            if request["what"] == "stop":
                break
            if request["what"] == "prepare":
                module = modules[request["name"]] = request
                status, output, seconds = _prepare(module, (server, conn))
                _send(conn, {"status": status, "output": output, "seconds": seconds})
                continue
            module = modules[request["name"]]
            tests = _selection(module)
            if tests is None:
                _send(conn, {"status": 0, "output": f"{_MARK} uncovered: no test runs the mutated line\n"})
                continue

            def work(tests=tests, cwd=module["cwd"]):
                import pytest

                os.chdir(cwd)
                return int(pytest.main([*PYTEST, "-x", *tests]))

            status, output = _forked(work, module["timeout"], (server, conn))
            _send(conn, {"status": status, "output": output})
    server.close()


def client(address, name):
    """cosmic-ray's test command: the tests' exit status for the mutant now in the file (0: survived)."""
    try:
        answer = _request(address, {"what": "test", "name": name})
    except (OSError, ConnectionError) as exc:
        print(f"{_MARK} no test server at {address}: {exc}")
        return 98
    print(answer["output"])
    if answer["status"] == "timeout":
        print(f"{_MARK} timeout")
        return 97
    return answer["status"]


# ------------------------------------------------------------------------------ sessions


def _git_clean():
    return subprocess.run(["git", "diff", "--quiet", "--", "src"], cwd=ROOT).returncode == 0


def _guard_file(path, folder):
    return folder / f"{path.name}-{hashlib.sha1(str(path).encode()).hexdigest()[:12]}.original.json"


def _put_back(guard):
    """Write the file a guard names back as the guard kept it, drop the guard; True if it had changed."""
    saved = json.loads(guard.read_text(encoding="utf-8"))
    path, original = Path(saved["path"]), saved["text"].encode("utf-8")
    changed = not path.exists() or path.read_bytes() != original
    if changed:
        path.write_bytes(original)
    guard.unlink()
    return changed


@contextlib.contextmanager
def guarded(path, folder):
    """Keep a copy of ``path`` in ``folder`` while mutants are written into it; put it back on the way
    out, whatever the way (an exception, ``SystemExit`` from SIGTERM, ``KeyboardInterrupt``)."""
    path, folder = Path(path).resolve(), Path(folder)
    guard = _guard_file(path, folder)
    if guard.exists():  # never overwrite the copy of an original with a mutant
        _put_back(guard)
    guard.write_text(json.dumps({"path": str(path), "text": path.read_bytes().decode("utf-8")}), encoding="utf-8")
    try:
        yield
    finally:
        if _put_back(guard):
            print(f"{path} was left mutated; it is put back", file=sys.stderr, flush=True)


def exit_on_sigterm():
    """SIGTERM raises ``SystemExit(143)``: the stack unwinds, so ``guarded`` puts its file back."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def put_back_left(folder):
    """Put back every file a killed run left mutated (its guard is still in ``folder``); their paths."""
    return [path for guard in sorted(Path(folder).glob("*.original.json"))
            for path in [json.loads(guard.read_text(encoding="utf-8"))["path"]] if _put_back(guard)]


def _kept(operator):
    match = re.match(r"core/Replace(Comparison|Binary)Operator_(\w+?)_(\w+)$", operator)
    return match is None or (match[2], match[3]) in KEEP[match[1]]


def _mark_skipped(session, path, pattern, sample):
    """Mark as skipped the mutants of operators outside ``KEEP``, of lines ``pattern`` does not match
    and, with ``sample``, all but a random sample of that many of the others (the same for a file)."""
    import random

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    lines = path.read_text(encoding="utf-8").splitlines()
    with use_db(str(session), WorkDB.Mode.open) as db:
        operators, places, kept = [], [], []
        for item in db.pending_work_items:
            if not all(_kept(m.operator_name) for m in item.mutations):
                operators.append(item.job_id)
            elif pattern is not None and not any(pattern.search(lines[m.start_pos[0] - 1]) for m in item.mutations):
                places.append(item.job_id)
            else:
                m = item.mutations[0]
                kept.append(((m.start_pos, m.operator_name, m.occurrence), item.job_id))
        unsampled = []
        if sample is not None and sample < len(kept):
            kept.sort()
            chosen = set(random.Random(path.name).sample(range(len(kept)), sample))
            unsampled = [job for i, (_, job) in enumerate(kept) if i not in chosen]
        for jobs, why in ((operators, "operator outside KEEP"), (places, "not the warm start"),
                          (unsampled, "not in the sample")):
            if jobs:
                db.set_multiple_results(jobs, WorkResult(output=why, worker_outcome=WorkerOutcome.SKIPPED))


def _retest(session):
    """Forget the survivors' results, so that ``exec`` runs them again."""
    import sqlite3

    with sqlite3.connect(session) as db:
        db.execute("delete from work_results where test_outcome = 'SURVIVED'")


def _tally(session):
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    counts = dict.fromkeys(("killed", "timeout", "survived", "uncovered", "skipped", "unsampled", "error",
                            "pending"), 0)
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            output = result.output or ""
            if result.worker_outcome in (WorkerOutcome.SKIPPED, WorkerOutcome.NO_TEST):
                counts["unsampled" if output == "not in the sample" else "skipped"] += 1
            elif result.worker_outcome != WorkerOutcome.NORMAL or f"{_MARK} no test server" in output:
                counts["error"] += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                counts["uncovered" if f"{_MARK} uncovered" in output else "survived"] += 1
                survivors.append((item, result))
            elif result.test_outcome == TestOutcome.KILLED:
                counts["timeout" if f"{_MARK} timeout" in output or output == "timeout" else "killed"] += 1
            else:
                counts["error"] += 1
        counts["pending"] = db.num_work_items - db.num_results
    return counts, survivors


def _session(name, tests_root):
    tag = "" if tests_root == ROOT else "-" + re.sub(r"\W+", "_", str(tests_root)).strip("_")
    return SESSIONS / f"{name}{tag}.sqlite", SESSIONS / f"{name}{tag}.toml"


def run_module(name, address, tests_root, fresh, retest, sample=None):
    """Coverage run, init, exec and tally of one module; its counts and survivors (None: not run)."""
    path, tests = MODULES[name]
    tests = [t for t in tests if (tests_root / t).exists()]
    session, config = _session(name, tests_root)
    answer = _request(address, {"what": "prepare", "name": name, "path": str(ROOT / path), "cwd": str(tests_root),
                                "tests": tests, "timeout": 1800})
    if answer["status"] != 0:
        print(f"{name}: the unmutated module fails its tests (status {answer['status']}); not run:\n"
              f"{answer['output'][-3000:]}")
        return None
    command = " ".join(shlex.quote(a) for a in [sys.executable, str(Path(__file__).resolve()), "client",
                                                address, name])
    config.write_text(f'[cosmic-ray]\nmodule-path = "{ROOT / path}"\ntimeout = 3600\nexcluded-modules = []\n'
                      f'test-command = {json.dumps(command)}\n\n[cosmic-ray.distributor]\nname = "local"\n',
                      encoding="utf-8")
    if fresh or not session.exists():
        session.unlink(missing_ok=True)
        subprocess.run([sys.executable, "-m", "cosmic_ray.cli", "init", str(config), str(session)], check=True,
                       cwd=ROOT)
        _mark_skipped(session, ROOT / path, LINE_FILTERS.get(name), sample)
    elif retest:
        _retest(session)
    counts, _ = _tally(session)
    print(f"{name}: {path}, {' '.join(tests)}: the tests ran in {answer['seconds']:.0f} s under coverage; "
          f"{counts['pending']} mutants to run", flush=True)
    try:
        with guarded(ROOT / path, SESSIONS):  # on an exception, subprocess.run kills cosmic-ray first
            subprocess.run([sys.executable, "-m", "cosmic_ray.cli", "exec", str(config), str(session)],
                           check=True, cwd=ROOT)
    finally:
        if not _git_clean():
            sys.exit(f"{path} is left changed: restore it (git checkout -- {path}) before anything else")
    return _tally(session)


def _table(rows):
    head = ("module", "mutants run", "killed", "timeout", "survived", "uncovered", "kill rate", "not sampled",
            "skipped")
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for name, (counts, _) in rows:
        tested = counts["killed"] + counts["timeout"] + counts["survived"] + counts["uncovered"]
        rate = f"{100.0 * (counts['killed'] + counts['timeout']) / tested:.1f}%" if tested else "-"
        extra = "".join(f", {counts[k]} {k}" for k in ("error", "pending") if counts[k])
        print(f"| {name} | {tested} | {counts['killed']} | {counts['timeout']} | {counts['survived']} | "
              f"{counts['uncovered']} | {rate} | {counts['unsampled']} | {counts['skipped']}{extra} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"among {', '.join(MODULES)} (default: all)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--report", action="store_true", help="only tally the kept sessions")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--fresh", action="store_true", help="start the sessions again (else resume them)")
    parser.add_argument("--retest", action="store_true", help="run the sessions' survivors again")
    parser.add_argument("--sample", type=int, default=None,
                        help="a new session runs a random sample of this many mutants per module (the same sample "
                        "every time), the others are marked skipped; default: all")
    parser.add_argument("--tests-root", default=str(ROOT),
                        help="folder holding tests/ and pyproject.toml (default: this checkout)")
    parser.add_argument("--from-root", default=None,
                        help="start each session from a copy of the one kept for this tests root, and run its "
                        "survivors again (the new tests' kill rate without running the killed mutants)")
    args = parser.parse_args(argv)
    if args.list:
        for name, (path, tests) in MODULES.items():
            print(f"{name:20} {path:34} {' '.join(tests)}")
        return 0
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(f"unknown module(s) {sorted(unknown)}; choose among {', '.join(MODULES)}")
    names = args.modules or list(MODULES)
    tests_root = Path(args.tests_root).resolve()
    if args.report:
        rows = [(n, _tally(_session(n, tests_root)[0])) for n in names if _session(n, tests_root)[0].exists()]
        _table(rows)
    else:
        SESSIONS.mkdir(exist_ok=True)
        for path in put_back_left(SESSIONS):
            print(f"{path}: a killed run left a mutant in it; it is put back", file=sys.stderr)
        if not _git_clean():
            parser.error("src/ has uncommitted changes: mutants are written into its files; commit or stash first")
        exit_on_sigterm()
        if args.from_root:
            for name in names:
                shutil.copyfile(_session(name, Path(args.from_root).resolve())[0], _session(name, tests_root)[0])
        address = tempfile.mktemp(prefix="ssvm-mutation-", suffix=".sock")
        server = subprocess.Popen([sys.executable, __file__, "serve", address], stdout=subprocess.PIPE, text=True,
                                  cwd=ROOT)
        rows = []
        try:
            if server.stdout.readline().strip() != "ready":
                sys.exit("the test server did not start")
            for name in names:
                outcome = run_module(name, address, tests_root, args.fresh, args.retest or bool(args.from_root),
                                     args.sample)
                if outcome is not None:
                    rows.append((name, outcome))
        except BaseException:
            server.terminate()  # it kills the test it is running
            raise
        else:
            try:
                _request(address, {"what": "stop"})
            except (OSError, ConnectionError):
                server.terminate()
        finally:
            server.wait(timeout=60)
            Path(address).unlink(missing_ok=True)
        _table(rows)
    if args.survivors:
        for _, (_, survivors) in rows:
            for item, result in survivors:
                m = item.mutations[0]
                where = "uncovered" if f"{_MARK} uncovered" in (result.output or "") else "survived"
                print(f"\n--- {Path(m.module_path).relative_to(ROOT)}:{m.start_pos[0]} {m.operator_name} "
                      f"({where}, job {item.job_id})\n{(result.diff or '').strip()}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "client":
        sys.exit(client(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(main())
