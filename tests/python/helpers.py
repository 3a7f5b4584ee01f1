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


def inasim_p4():
    """The inasim-p4 binary next to $INASIM_BIN (else build/); a module
    that needs it is skipped when it is not built, and fails when
    INASIM_BIN says where it should be."""
    import pytest
    bin_dir = Path(os.environ["INASIM_BIN"]).parent if os.environ.get("INASIM_BIN") else SOURCE_DIR / "build"
    p4 = bin_dir / "inasim-p4"
    if not os.access(p4, os.X_OK):
        if os.environ.get("INASIM_BIN"):
            raise RuntimeError(f"{p4} is not built")
        pytest.skip(f"{p4} is not built", allow_module_level=True)
    return p4


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


def read_csv(path):
    """The rows of a CSV file, as dicts."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def run_script(script, out, *args, jobs=2, timeout=300):
    """Runs a figure script `--small --out OUT --jobs N` (plus `args`) in OUT;
    the CompletedProcess."""
    import subprocess

    return subprocess.run([PYTHON, str(script), "--small", "--out", str(out), "--jobs", str(jobs), *args],
                          capture_output=True, text=True, env=child_env(), cwd=out, timeout=timeout)


def small_runs(tmp_path_factory, scripts, jobs=2):
    """Each of `scripts` (name -> path) run by run_script in a directory of its
    own: name -> (out dir, CompletedProcess)."""
    return {name: (out, run_script(path, out, jobs=jobs))
            for name, path in scripts.items() for out in [tmp_path_factory.mktemp(name)]}


def load_script(path):
    """A figure script imported by path (its main() callable in this process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def spoil_last_run(monkeypatch):
    """Makes inasim.sweep.run_sweep read every run from the cache (asserting
    that nothing runs) and turn the last row's `correct` false."""
    from inasim import sweep

    real = sweep.run_sweep

    def spoiled(definition, out=None, jobs=None, resume=True, **kw):
        df = real(definition, out=out, jobs=jobs, resume=True, **kw)
        assert not df.attrs["ran"]  # everything came from the cache
        df.loc[df.index[-1], "correct"] = False
        return df

    monkeypatch.setattr(sweep, "run_sweep", spoiled)


def assert_small_run(out, p, stem):
    """A figure script's --small run (CompletedProcess `p`, writing to `out`)
    exited 0 with every point correct, and wrote a real PNG, the tidy CSV and
    its sweep."""
    assert p.returncode == 0, p.stdout + p.stderr
    assert "NOT CORRECT" not in p.stdout
    png = out / f"{stem}.png"
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 10_000
    rows = read_csv(out / f"{stem}.csv")
    assert rows and {"panel", "series", "kind", "x", "y", "x_label", "y_label"} <= set(rows[0])
    assert list((out / "sweeps").glob("*/sweep.csv"))


def assert_paper_claims(out, stem):
    """Every paper claim whose number figure `stem` gives (all of it from this
    figure) reaches, on this --small run, the verdict its claims file expects
    (`small.verdict`), as the script's own `<stem>_paper.csv` says and as the
    claims module recomputes; returns {claim id: why} of the claims that do
    not survive the reduction (the test names them)."""
    from inasim import claims, fidelity

    path = out / f"{stem}_paper.csv"
    table = {r["claim"]: r for r in read_csv(path)} if path.exists() else {}
    tables = claims.FigureTables(out)
    skipped, checked = {}, 0
    for book in claims.find_all(SOURCE_DIR):
        for c in book.figure_claims(stem):
            small = c.get("small") or {"survives": False, "why": "no small section"}
            if claims.figures_of(c) != [stem] or not small["survives"]:
                skipped[c["id"]] = small["why"] if claims.figures_of(c) == [stem] else "reads other figures too"
                continue
            got = claims.evaluate(c, tables, small=True).verdict
            assert fidelity.tally_key(got) == fidelity.tally_key(small["verdict"]), (c["id"], got, small)
            assert table[c["id"]]["verdict"] == got, (c["id"], table[c["id"]])
            checked += 1
    assert checked + len(skipped) == len(table), (checked, skipped, sorted(table))
    return skipped



def assert_committed_small_csv(out, stem):
    """The fresh --small CSV is byte for byte the committed one
    (scenarios/<home>/results/small/<stem>.csv, inasim.results_store), so the
    reduced columns of the README tables are what the code gives now. When
    behaviour changes on purpose, `inasim fidelity --small --run all --record
    --readme` refreshes both (and the commit says why)."""
    from inasim import claims, results_store

    books = claims.find_all(SOURCE_DIR)
    committed = results_store.store_dir(results_store.home(books, stem), small=True) / f"{stem}.csv"
    assert committed.is_file(), f"{committed} missing: run `inasim fidelity --small --run all --record --readme`"
    fresh = (out / f"{stem}.csv").read_bytes()
    assert fresh == committed.read_bytes(), (
        f"{stem}: the --small run no longer gives {committed.relative_to(SOURCE_DIR)}: if the change is meant, "
        "refresh it with `inasim fidelity --small --run all --record --readme` and say why in the commit")


def small_run_tests(prefix, scripts):
    """A figure test module's three generic tests over its scripts' --small
    runs (its `runs` fixture: name -> (out dir, process)): each run exits 0
    with its PNG and CSV (assert_small_run), each run's paper claims reach
    their reduced verdicts (assert_paper_claims), and its CSV is the
    committed one (assert_committed_small_csv):

        test_small_run_exits_zero_and_writes_png_and_csv, test_paper_claims_reach_their_reduced_verdicts, \
            test_committed_small_results_are_current = small_run_tests("fig_canary_", SCRIPTS)
    """
    @pytest.mark.parametrize("name", scripts)
    def test_small_run(runs, name):
        assert_small_run(*runs[name], f"{prefix}{name}")

    @pytest.mark.parametrize("name", scripts)
    def test_paper_claims(runs, name):
        skipped = assert_paper_claims(runs[name][0], f"{prefix}{name}")
        print(f"{prefix}{name}: not checked at --small: {skipped}")

    @pytest.mark.parametrize("name", scripts)
    def test_committed_small(runs, name):
        assert_committed_small_csv(runs[name][0], f"{prefix}{name}")

    return test_small_run, test_paper_claims, test_committed_small
