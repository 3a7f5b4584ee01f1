"""Sweeps (python/inasim/sweep.py, docs/SWEEPS.md): expansion, validation
before anything runs, the cache and resume, repetitions and seeds, local
processes vs a Dask cluster, and the `python3 -m inasim.sweep` command line.

Run by ctest (test `python_sweep`) with PYTHONPATH=python:build/python, or:

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_sweep.py
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import DEFAULT, SOURCE_DIR, import_inasim

inasim = import_inasim()
from inasim import sweep as sw

pd = pytest.importorskip("pandas")

RING_SMALL = SOURCE_DIR / "scenarios" / "sweeps" / "ring-small.json"

HOSTS = [4, 8]
BYTES = [65536, 131072]
GRID = {
    "name": "grid4",
    "scenario": str(DEFAULT),
    "grid": {"topology.hosts": HOSTS, "workload.bytes": BYTES},
}


def no_perf(df):
    return df.drop(columns=[c for c in df.columns if c.startswith("perf.")])


def mtimes(out):
    return {p.parent.name: p.stat().st_mtime_ns for p in (Path(out) / "cache").glob("*/results.json")}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The 2x2 grid run once with two local processes: (out dir, DataFrame)."""
    out = tmp_path_factory.mktemp("local") / "grid4"
    df = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    return out, df


# ------------------------------------------------------------------ grid


def test_grid_rows_and_columns(local):
    out, df = local
    assert len(df) == 4
    cols = list(df.columns)
    assert cols[:6] == ["point", "repetition", "seed", "key", "topology.hosts", "workload.bytes"]
    metrics = cols[6:]
    assert metrics == sorted(metrics)
    for c in ("correct", "sim.end_time_s", "workload.mean_duration_s", "network.ecn_marks", "perf.wall_s"):
        assert c in metrics, c
    assert "scenario" not in metrics and not any(c.startswith("scenario.") for c in metrics)
    # Expansion order: first key outer, last key fastest.
    assert list(df["point"]) == [0, 1, 2, 3]
    assert list(zip(df["topology.hosts"], df["workload.bytes"])) == [(h, b) for h in HOSTS for b in BYTES]
    assert list(df["repetition"]) == [0] * 4
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    assert df["key"].nunique() == 4
    for h in HOSTS:
        d = df[df["topology.hosts"] == h].sort_values("workload.bytes")["workload.mean_duration_s"].tolist()
        assert d[0] < d[1], (h, d)
    # One atomic, complete result directory per run; no temporaries left.
    for k in df["key"]:
        assert (out / "cache" / k / "results.json").is_file()
    assert not [p.name for p in (out / "cache").iterdir() if p.name.startswith(".")]
    # sweep.csv is the returned table; sweep.json echoes the definition.
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv.columns) == cols and len(csv) == 4
    assert list(csv["key"]) == list(df["key"])
    echo = json.loads((out / "sweep.json").read_text())
    assert echo["sweep"] == GRID
    assert echo["inasim_version"] == inasim.version()
    assert [p["key"] for p in echo["points"]] == list(df["key"])
    assert echo["points"][3]["values"] == {"topology.hosts": 8, "workload.bytes": 131072}


def test_cache_key_is_resolved_scenario_hash(local):
    out, df = local
    results = json.loads((out / "cache" / df["key"][0] / "results.json").read_text())
    assert sw.cache_key(results["scenario"]) == df["key"][0]


# ---------------------------------------------------------------- resume


def test_resume(local, tmp_path):
    src, first = local
    out = tmp_path / "grid4"
    shutil.copytree(src, out)  # copy2: mtimes preserved
    before = mtimes(out)
    assert len(before) == 4

    again = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    assert again.attrs["ran"] == [] and sorted(again.attrs["cached"]) == sorted(before)
    assert mtimes(out) == before
    assert (out / "sweep.csv").read_bytes() == (src / "sweep.csv").read_bytes()

    victim = first["key"][2]
    shutil.rmtree(out / "cache" / victim)
    third = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    assert third.attrs["ran"] == [victim]
    after = mtimes(out)
    assert set(after) == set(before)
    assert {k: v for k, v in after.items() if k != victim} == {k: v for k, v in before.items() if k != victim}
    pd.testing.assert_frame_equal(no_perf(third), no_perf(first))

    # --no-resume / resume=False re-runs everything.
    fourth = sw.run_sweep(GRID, out=out, jobs=2, progress=False, resume=False)
    assert sorted(fourth.attrs["ran"]) == sorted(before)
    assert all(after[k] != v for k, v in mtimes(out).items())


# ----------------------------------------------------------- repetitions


def test_repetitions_seeds_and_keys(tmp_path):
    sweep = {
        "scenario": str(DEFAULT),
        "set": ["topology.hosts=4"],
        "points": [{"workload.bytes": 65536}],
        "repetitions": 2,
        "seed": 7,
    }
    df = sw.run_sweep(sweep, out=tmp_path / "reps", jobs=2, progress=False)
    assert list(df["point"]) == [0, 0]
    assert list(df["repetition"]) == [0, 1]
    assert list(df["seed"]) == [7, 8]
    assert df["key"].nunique() == 2
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    for k, s in zip(df["key"], df["seed"]):
        assert json.loads((tmp_path / "reps" / "cache" / k / "results.json").read_text())["seed"] == s


def test_default_base_seed_is_the_scenarios(tmp_path):
    plan = sw.plan_sweep(
        {"scenario": str(DEFAULT), "points": [{"workload.bytes": 65536}], "repetitions": 3}, out=tmp_path / "x"
    )
    base = inasim.load(str(DEFAULT)).get("seed", 1)
    assert [r.seed for r in plan.runs] == [base, base + 1, base + 2]
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------- bad input


def test_bad_point_fails_before_anything_runs(tmp_path):
    sweep = dict(GRID, grid={"topology.hosts": [4], "workload.bytes": [65536, 1026]})
    out = tmp_path / "bad"
    with pytest.raises(sw.SweepError) as e:
        sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    msg = str(e.value)
    assert msg.startswith("point 1 (topology.hosts=4, workload.bytes=1026): workload.bytes: must be a multiple of 4")
    assert "\n" not in msg
    assert not out.exists()


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"grdi": {}}, 'unknown key "grdi"'),
        ({"points": [{"workload.bytes": 65536}]}, 'exactly one of "grid" and "points"'),
        ({"repetitions": 0}, '"repetitions" must be an integer >= 1'),
        ({"seed": 0}, '"seed" must be a positive integer'),
        ({"grid": {"workload.bytes": []}}, 'grid "workload.bytes" must be a non-empty list'),
        ({"grid": {"seed": [1, 2]}}, '"seed" cannot be swept'),
        ({"scenario": "no-such-file.json"}, "no-such-file.json"),
    ],
)
def test_bad_sweep_definitions(tmp_path, change, expect):
    with pytest.raises(sw.SweepError) as e:
        sw.plan_sweep(dict(GRID, **change), out=tmp_path / "x")
    assert expect in str(e.value)


def test_flatten_metrics():
    doc = {
        "scenario": {"seed": 1},
        "correct": True,
        "seed": 3,
        "sim": {"end_time_s": 1.5e-5, "stopped_by": "workload_done", "hist": [1, 2], "none": None},
        "background": {"flows": {"fct": {"all": {"fct_s": {"p99": 0.25}}}}},
    }
    assert sw.flatten_metrics(doc) == {
        "correct": True,
        "seed": 3,
        "sim.end_time_s": 1.5e-5,
        "sim.stopped_by": "workload_done",
        "background.flows.fct.all.fct_s.p99": 0.25,
    }


# ------------------------------------------------------------------ Dask


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado, inside distributed
def test_dask_local_cluster_matches_local(local, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, expected = local
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster:
        df = sw.run_sweep(GRID, out=tmp_path / "dask", scheduler=cluster, progress=False)
        assert len(df.attrs["ran"]) == 4
        # A Client is accepted too (and left open); everything is cached now.
        with distributed.Client(cluster) as client:
            again = sw.run_sweep(GRID, out=tmp_path / "dask", scheduler=client, progress=False)
            assert again.attrs["ran"] == [] and client.status == "running"
    pd.testing.assert_frame_equal(no_perf(df), no_perf(expected))
    pd.testing.assert_frame_equal(no_perf(again), no_perf(expected))


# ------------------------------------------------------------------- CLI


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "inasim.sweep", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_ring_small(tmp_path):
    out = tmp_path / "ring"
    p = cli(RING_SMALL, "--out", out, "--jobs", "2", "--progress", "off")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    df = pd.read_csv(out / "sweep.csv")
    assert len(df) == 4 and df["correct"].all()
    assert list(df.columns[4:6]) == ["topology.hosts", "workload.bytes"]
    assert json.loads((out / "sweep.json").read_text())["name"] == "ring-small"
    assert "4 ran, 0 cached" in p.stdout
    p = cli(RING_SMALL, "--out", out, "--jobs", "2", "--progress", "off")
    assert p.returncode == 0 and "0 ran, 4 cached" in p.stdout


def test_cli_default_out_is_relative_to_cwd(tmp_path):
    sweep = tmp_path / "defs" / "tiny.json"
    sweep.parent.mkdir()
    sweep.write_text(json.dumps({"scenario": str(DEFAULT), "points": [{"topology.hosts": 4, "workload.bytes": 65536}]}))
    p = cli(sweep, "--jobs", "1", "--progress", "off", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "sweeps" / "tiny" / "sweep.csv").is_file()


def test_cli_unknown_key_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(GRID, repetitons=2)))
    p = cli(bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and 'unknown key "repetitons"' in lines[0] and '"repetitions"' in lines[0]
    assert not (tmp_path / "o").exists()


def test_cli_bad_point_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(GRID, grid={"workload.bytes": [65536, 1026]})))
    p = cli(bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "point 1 (workload.bytes=1026): workload.bytes: must be a multiple of 4" in lines[0]
    assert not (tmp_path / "o").exists()


def test_cli_not_valid_json_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = cli(bad, "--progress", "off", cwd=tmp_path)
    assert p.returncode == 2 and "not valid JSON" in p.stderr


def test_cli_incorrect_result_exits_1(monkeypatch, capsys, tmp_path):
    df = pd.DataFrame({"point": [0, 1], "repetition": [0, 0], "correct": [True, False]})
    df.attrs.update({"out": str(tmp_path), "ran": ["a", "b"], "cached": []})
    monkeypatch.setattr(sw, "run_sweep", lambda *a, **k: df)
    assert sw.main([str(RING_SMALL), "--progress", "off"]) == 1
    assert "1 run(s) not correct: point 1 repetition 0" in capsys.readouterr().err


def test_progress_line():
    import io

    stream = io.StringIO()
    bar = sw._Progress(4, 1, True, stream=stream)
    bar.update()
    bar.close()
    text = stream.getvalue()
    assert text.startswith("\r[1/4] 25% elapsed 0:00 eta ?")
    assert "\r[2/4] 50% elapsed 0:00 eta 0:0" in text and text.endswith("\n")
    assert "\n" not in text[:-1]
    quiet = io.StringIO()
    sw._Progress(4, 0, False, stream=quiet).close()
    assert quiet.getvalue() == ""
