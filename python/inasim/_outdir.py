"""Checks an output directory (`--out`) before anything runs, so that a path
that cannot be written fails at once with exit 2 instead of a traceback after
the runs (sweep and compare write only at the end); and writes each output
file atomically (write_atomic), so a reader never sees half a file."""

from __future__ import annotations

import os
from typing import Iterable, Optional, Union


def _nearest_existing(path: str) -> str:
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def out_dir_problem(path: "str | os.PathLike[str]", files: Iterable[str] = (), dirs: Iterable[str] = ()) -> Optional[str]:
    """Why `path` cannot serve as an output directory, or None.

    The directory may exist (it is written into) or be missing with missing
    parents (they are created, as `inasim run --out` does); the nearest
    existing ancestor must then be a writable directory. `files` and `dirs`
    are entries the writer will create inside it: an existing entry of the
    other kind would make the final rename fail."""
    p = os.path.abspath(os.fspath(path))
    if os.path.lexists(p) and not os.path.isdir(p):
        return "exists and is not a directory"
    if os.path.isdir(p):
        if not os.access(p, os.W_OK | os.X_OK):
            return "is a directory this user cannot write into"
        for name in files:
            if os.path.isdir(os.path.join(p, name)):
                return f"{name} inside it is a directory, where a file is to be written"
        for name in dirs:
            q = os.path.join(p, name)
            if os.path.lexists(q) and not os.path.isdir(q):
                return f"{name} inside it exists and is not a directory"
        return None
    base = _nearest_existing(p)
    if not os.path.isdir(base):
        return f"cannot be created: {base} is not a directory"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"cannot be created: {base} is not writable"
    return None


def make_out_dir(path: "str | os.PathLike[str]") -> Optional[str]:
    """Creates the directory and its parents; returns None or why it failed
    (what out_dir_problem cannot foresee, e.g. a read-only file system)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        return f"cannot be created: {e.strerror or e}"
    return None


def write_atomic(path: "str | os.PathLike[str]", data: Union[str, bytes]) -> None:
    """Writes `data` (text as UTF-8, no newline translation; or bytes) to a
    temporary file beside `path`, then renames it over `path`; the
    temporary file is removed if anything fails."""
    path = os.fspath(path)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        if isinstance(data, bytes):
            with open(tmp, "wb") as f:
                f.write(data)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
