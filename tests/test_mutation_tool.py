"""tools/mutation.py never leaves a mutant in src/: the file is put back however a run stops."""

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
ORIGINAL = "def f(x):\n    return x[0] < 0\n"
MUTANT = "def f(x):\n    return x[0] <= 0\n"


@pytest.fixture(scope="module")
def mutation():
    sys.path.insert(0, str(TOOLS))
    try:
        import mutation
    finally:
        sys.path.remove(str(TOOLS))
    return mutation


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "src" / "m.py"
    path.parent.mkdir()
    path.write_text(ORIGINAL)
    (tmp_path / "sessions").mkdir()
    return path, tmp_path / "sessions"


def test_an_error_while_guarded_puts_the_original_back(mutation, module):
    path, folder = module
    with pytest.raises(KeyboardInterrupt), mutation.guarded(path, folder):
        path.write_text(MUTANT)
        raise KeyboardInterrupt
    assert path.read_text() == ORIGINAL
    assert list(folder.iterdir()) == []


def test_a_clean_exit_leaves_no_guard_and_the_file_as_it_is(mutation, module):
    path, folder = module
    with mutation.guarded(path, folder):
        assert len(list(folder.iterdir())) == 1
    assert path.read_text() == ORIGINAL
    assert list(folder.iterdir()) == []


def test_a_second_guard_never_keeps_a_mutant_as_the_original(mutation, module):
    """A guard left by a killed run puts its original back before a new copy is kept."""
    path, folder = module
    mutation._guard_file(path.resolve(), folder).write_text(json.dumps({"path": str(path.resolve()),
                                                                         "text": ORIGINAL}))
    path.write_text(MUTANT)
    with mutation.guarded(path, folder):
        path.write_text(MUTANT)
    assert path.read_text() == ORIGINAL


def _run_guarded(path, folder):
    """A process that writes a mutant under ``guarded`` (SIGTERM handled as the tool does) and waits."""
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(TOOLS)!r})
        import mutation
        mutation.exit_on_sigterm()
        with mutation.guarded({str(path)!r}, {str(folder)!r}):
            open({str(path)!r}, "w").write({MUTANT!r})
            print("mutated", flush=True)
            time.sleep(60)
    """)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "mutated"
    assert path.read_text() == MUTANT
    return process


def test_a_terminated_run_puts_the_original_back(mutation, module):
    path, folder = module
    process = _run_guarded(path, folder)
    process.send_signal(signal.SIGTERM)
    assert process.wait() == 143
    assert path.read_text() == ORIGINAL
    assert list(folder.iterdir()) == []


def test_the_next_run_puts_back_what_a_killed_run_left(mutation, module):
    path, folder = module
    process = _run_guarded(path, folder)
    process.kill()
    process.wait()
    assert path.read_text() == MUTANT  # nothing runs after SIGKILL: the guard stays
    assert mutation.put_back_left(folder) == [str(path.resolve())]
    assert path.read_text() == ORIGINAL
    assert list(folder.iterdir()) == []
    assert mutation.put_back_left(folder) == []
