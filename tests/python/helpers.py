"""Shared by the Python tests: where things are, and importing `inasim`.

Under ctest (INASIM_BIN set) the package must import, so a broken build fails
the tests; run by hand without PYTHONPATH=python:build/python they skip."""

import os
import sys
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("INASIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DEFAULT = SOURCE_DIR / "scenarios" / "default.json"
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def import_inasim():
    try:
        import inasim

        if not hasattr(inasim, "run"):  # python/ alone imports as an empty namespace package
            raise ImportError("inasim has no run(): the _inasim extension is not built or not on PYTHONPATH")
        return inasim
    except ImportError as e:
        if os.environ.get("INASIM_BIN"):
            raise
        pytest.skip(f"cannot import inasim ({e}); set PYTHONPATH=python:build/python", allow_module_level=True)


def child_env():
    """The environment for a child process (a figure script): PYTHONPATH leading
    to the inasim and _inasim this test process imported, matplotlib headless."""
    import _inasim
    import inasim

    env = dict(os.environ)
    paths = [str(Path(inasim.__file__).resolve().parents[1]), str(Path(_inasim.__file__).resolve().parent)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["MPLBACKEND"] = "Agg"
    return env
