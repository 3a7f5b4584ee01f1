"""inasim from a notebook or an interactive session: Ctrl-C stops a running
simulation within a second (the child runs on a pseudo-terminal and gets the
SIGINT the terminal driver sends to the foreground group on ^C), progress
reaches Python callbacks and tqdm, the package refuses an extension built
from another checkout, and setup's build/venv imports this checkout."""

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import DEFAULT, PYTHON, SOURCE_DIR, child_env, import_inasim

inasim = import_inasim()

#: A run of minutes made of short events: 2,000 ring allreduces of 4 MiB over 8 hosts (~0.25 s each).
LONG = ["workload.iterations=2000", "stop.max_sim_time_ms=100000"]

CHILD = r"""
import sys, time
import inasim
ticks = []
def tick(p):
    if not ticks:
        print("RUNNING", flush=True)
    ticks.append(p)
try:
    inasim.run(sys.argv[1], sets=sys.argv[2:], progress=tick)
    print("FINISHED", flush=True)
except KeyboardInterrupt:
    print(f"INTERRUPTED {time.monotonic():.6f} ticks={len(ticks)}", flush=True)
    r = inasim.run(sys.argv[1], sets=["workload.bytes=65536"])  # ns-3 was reset: the process runs again
    print(f"AGAIN correct={r.correct}", flush=True)
"""


def _read_until(fd, word, deadline):
    buf = b""
    while word.encode() not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {word!r} before the deadline; output: {buf.decode(errors='replace')!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            buf += chunk
    return buf.decode(errors="replace")


def test_ctrl_c_on_a_terminal_stops_a_long_run_within_one_second():
    master, slave = pty.openpty()
    proc = subprocess.Popen([PYTHON, "-c", CHILD, str(DEFAULT), *LONG], stdin=slave, stdout=slave, stderr=slave,
                            env=child_env(), start_new_session=True)
    os.close(slave)
    try:
        _read_until(master, "RUNNING", time.monotonic() + 60)
        time.sleep(0.5)  # well inside the simulation, between two ticks
        # Typing ^C makes the terminal driver send SIGINT to the foreground
        # process group; the child leads its own session and group, so this
        # is that signal, with a clock on it.
        sent = time.monotonic()
        os.killpg(proc.pid, 2)
        out = _read_until(master, "AGAIN", time.monotonic() + 60)
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    assert "FINISHED" not in out
    line = next(l for l in out.splitlines() if l.startswith("INTERRUPTED"))
    stopped = float(line.split()[1])
    assert stopped - sent < 1.0, f"Ctrl-C took {stopped - sent:.3f} s to stop the run"
    assert "AGAIN correct=True" in out


def test_an_exception_in_the_progress_callback_stops_the_run():
    seen = []

    class Stop(Exception):
        pass

    def tick(p):
        seen.append(p)
        if len(seen) == 3:
            raise Stop()

    t0 = time.monotonic()
    with pytest.raises(Stop):
        inasim.run(DEFAULT, sets=LONG, progress=tick)
    assert time.monotonic() - t0 < 10
    assert len(seen) == 3
    assert set(seen[0]) == {"sim_time_s", "fraction", "events", "elapsed_s", "eta_s"}
    assert 0 < seen[0]["sim_time_s"] < seen[2]["sim_time_s"]
    assert seen[0]["events"] < seen[2]["events"]
    assert 0 <= seen[0]["fraction"] <= seen[2]["fraction"] < 1
    assert inasim.run(DEFAULT, sets=["workload.bytes=65536"]).correct  # the process is clean


def test_progress_callback_and_tqdm_do_not_change_results():
    plain = inasim.run(DEFAULT, sets=["workload.bytes=1048576"])
    ticks = []
    with_cb = inasim.run(DEFAULT, sets=["workload.bytes=1048576"], progress=ticks.append)
    bar = inasim.run(DEFAULT, sets=["workload.bytes=1048576"], progress="tqdm")
    assert ticks, "the callback was never called"
    fractions = [t["fraction"] for t in ticks]
    assert fractions == sorted(fractions)
    for r in (with_cb, bar):
        a, b = dict(plain.json), dict(r.json)
        a.pop("perf"), b.pop("perf")
        assert a == b  # the ticks' own events are not counted: every count matches


def test_bad_progress_value_is_named():
    with pytest.raises(ValueError, match="progress: must be True, False, \"tqdm\" or a callable"):
        inasim.run(DEFAULT, progress="bar")


def test_package_refuses_an_extension_of_another_checkout(tmp_path):
    """A copy of the package elsewhere (another checkout) with this build's
    extension: import fails, naming both, unless mixing is asked for."""
    import shutil

    import _inasim

    other = tmp_path / "checkout" / "python"
    shutil.copytree(SOURCE_DIR / "python" / "inasim", other / "inasim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=f"{other}:{os.path.dirname(_inasim.__file__)}")
    env.pop("INASIM_ALLOW_FOREIGN_BUILD", None)
    r = subprocess.run([PYTHON, "-c", "import inasim"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "is not the one the simulator extension" in r.stderr
    assert str(other) in r.stderr and str(SOURCE_DIR.resolve() / "python") in r.stderr
    env["INASIM_ALLOW_FOREIGN_BUILD"] = "1"
    r = subprocess.run([PYTHON, "-c", "import inasim; print(inasim.version())"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_setup_venv_imports_this_checkout():
    """scripts/setup.sh's build/venv: Debian's python3 packages plus this
    checkout's inasim, and no machine-wide path file."""
    build = Path(os.environ["INASIM_BIN"]).resolve().parent if os.environ.get("INASIM_BIN") else SOURCE_DIR / "build"
    venv_python = build / "venv" / "bin" / "python"
    if not venv_python.exists():
        pytest.skip(f"{venv_python} is made by scripts/setup.sh (this build was configured by hand)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "INASIM_ALLOW_FOREIGN_BUILD")}
    r = subprocess.run([str(venv_python), "-c", "import inasim, scipy, tqdm; print(inasim.__file__)"],
                       env=env, capture_output=True, text=True, timeout=60, cwd="/")
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()) == SOURCE_DIR.resolve() / "python" / "inasim" / "__init__.py"
    r = subprocess.run(["/usr/bin/python3", "-c", "import site, glob; print(sum(len(glob.glob(d + '/inasim.pth')) "
                        "for d in site.getsitepackages() + [site.getusersitepackages()]))"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "0", "a machine-wide inasim.pth follows whichever checkout was set up last"
