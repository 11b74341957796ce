"""Output files written whole or not at all: :func:`atomic_write` and :func:`refuse_overwriting`.

Every file ssvm writes (``save_model``, ``ssvm train``'s model, ``ssvm predict``'s scores, the demo's
JSON) goes through :func:`atomic_write`: the text is written to a temporary file in the target's
directory, flushed to disk (``fsync``) and renamed over the target (``os.replace``, atomic on POSIX
and Windows). A run interrupted at any moment (Ctrl-C, a kill, a full disk, an exception while the
text is produced) leaves the old file or no file, never half of one.
"""

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "refuse_overwriting"]


def _new_file_mode():
    """The permissions ``open(path, "w")`` would give a new file (0o666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path, text, *, encoding="utf-8"):
    """Write ``text`` to ``path`` through a temporary file renamed into place.

    Parameters
    ----------
    path : str or path-like
        The file to write; a symbolic link is written through (its target is replaced). An
        existing file keeps its permissions, a new one gets those of ``open(path, "w")``.
    text : str or bytes
        The whole content (``bytes`` are written as they are, ``str`` encoded).
    encoding : str, default="utf-8"

    Raises
    ------
    OSError
        If the directory is missing or not writable, or the disk is full; the target is then
        untouched and no temporary file is left behind.
    """
    target = Path(os.path.realpath(path))
    data = text if isinstance(text, bytes) else text.encode(encoding)
    mode = target.stat().st_mode & 0o7777 if target.exists() else _new_file_mode()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    _sync_directory(target.parent)


def _sync_directory(directory):
    """fsync a directory so that a rename in it survives a crash (POSIX; nothing to do elsewhere)."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    except OSError:  # some file systems refuse fsync on a directory; the rename is done all the same
        pass
    finally:
        os.close(descriptor)


def refuse_overwriting(output, output_name, inputs):
    """Refuse an output file that is one of the inputs (the same file, by any path or link).

    Parameters
    ----------
    output : str or path-like
        The file about to be written.
    output_name : str
        What it is, for the message (``"MODEL"``).
    inputs : sequence of (str, path-like)
        ``(name, path)`` of each input file.

    Raises
    ------
    ValueError
        One line naming both paths, when ``output`` is the same file as an input
        (:func:`os.path.samefile` when both exist, else their resolved paths are compared).
    """
    for name, path in inputs:
        if os.path.exists(output) and os.path.exists(path):
            same = os.path.samefile(output, path)
        else:
            same = os.path.realpath(output) == os.path.realpath(path)
        if same:
            raise ValueError(f"{output_name} {output} is the {name} file {path}: refusing to write over an "
                             f"input; give {output_name} another path")
