"""Figure scripts and their plotting library: analysis/fig_ring_allreduce.py
--small end to end (exit status, PNG, tidy CSV, every simulated time at or
above its bound) and python/inasim/plot.py (PNG + CSV, the CSV equals the
plotted data, reference markers, determinism).

Run by ctest (test `python_figures`) with PYTHONPATH=python:build/python, or:

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_figures.py
"""

import hashlib
import math

import pytest

from helpers import PNG_MAGIC, assert_committed_small_csv, assert_paper_claims, SOURCE_DIR, import_inasim, load_script, read_csv, run_script

inasim = import_inasim()
from inasim import plot

SCRIPT = SOURCE_DIR / "analysis" / "fig_ring_allreduce.py"
SMALL_SCENARIO = SOURCE_DIR / "scenarios" / "figures" / "ring-allreduce-small.json"

HOSTS = [4, 8]
SIZES = [65536, 262144]
RATE_GBPS = 100.0




def bound_us(n, size):
    return 2 * (n - 1) / n * size * 8 / (RATE_GBPS * 1e9) * 1e6


# ------------------------------------------------- fig_ring_allreduce --small


@pytest.fixture(scope="module")
def small_figure(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    return out, run_script(SCRIPT, out)


def test_small_figure_exits_zero_and_prints_each_point(small_figure):
    out, p = small_figure
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [l for l in p.stdout.splitlines() if "time/bound" in l]
    assert len(lines) == len(HOSTS) * len(SIZES), p.stdout
    assert all(l.rstrip().endswith("correct") and "NOT" not in l for l in lines), p.stdout


def test_small_figure_paper_claims(small_figure):
    assert_paper_claims(small_figure[0], "fig_ring_allreduce")
    assert_committed_small_csv(small_figure[0], "fig_ring_allreduce")


def test_small_figure_png(small_figure):
    out, _ = small_figure
    png = out / "fig_ring_allreduce.png"
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000


def test_small_figure_csv(small_figure):
    out, _ = small_figure
    rows = read_csv(out / "fig_ring_allreduce.csv")
    for c in ("series", "kind", "x", "y", "hosts", "bytes", "panel", "x_label", "y_label"):
        assert c in rows[0], c
    assert {r["kind"] for r in rows} == {"sim", "bound", "reference"}  # reference: SwitchML's claims on the ring
    assert all(r["source"].startswith("SwitchML ") for r in rows if r["kind"] == "reference")

    # (a) time vs message size: hosts x sizes simulated points, the same bound points.
    a = [r for r in rows if r["panel"] == "a"]
    sim = {(int(r["hosts"]), int(r["bytes"])): r for r in a if r["kind"] == "sim"}
    bnd = {(int(r["hosts"]), int(r["bytes"])): r for r in a if r["kind"] == "bound"}
    grid = {(n, s) for n in HOSTS for s in SIZES}
    assert len([r for r in a if r["kind"] == "sim"]) == len(grid) and set(sim) == grid
    assert len([r for r in a if r["kind"] == "bound"]) == len(grid) and set(bnd) == grid
    for (n, s), r in sim.items():
        assert float(r["x"]) == s / 2**20  # MiB
        assert float(bnd[(n, s)]["x"]) == s / 2**20
        assert float(bnd[(n, s)]["y"]) == pytest.approx(bound_us(n, s), rel=1e-9)
        assert float(r["y"]) >= float(bnd[(n, s)]["y"]), (n, s)
        assert float(r["ratio"]) >= 1.0
    assert a[0]["x_label"] == "message size (MiB)" and a[0]["y_label"] == "allreduce time (µs)"

    # (b) time vs hosts at the largest size.
    b = [r for r in rows if r["panel"] == "b"]
    big = max(SIZES)
    for kind in ("sim", "bound"):
        pts = [r for r in b if r["kind"] == kind]
        assert sorted(int(r["hosts"]) for r in pts) == HOSTS
        assert {int(r["bytes"]) for r in pts} == {big}
        assert [float(r["x"]) for r in pts] == HOSTS
    for n in HOSTS:
        assert float(next(r["y"] for r in b if r["kind"] == "sim" and int(r["hosts"]) == n)) == \
            float(sim[(n, big)]["y"])
    assert b[0]["x_label"] == "hosts (count)"


def test_small_figure_matches_a_direct_run(small_figure):
    out, _ = small_figure
    rows = read_csv(out / "fig_ring_allreduce.csv")
    r = next(r for r in rows if r["panel"] == "a" and r["kind"] == "sim"
             and int(r["hosts"]) == 4 and int(r["bytes"]) == 65536)
    res = inasim.run(SMALL_SCENARIO, sets=["topology.hosts=4", "workload.bytes=65536"])
    assert res.correct
    assert float(r["time_s"]) == res.json["workload"]["mean_duration_s"]
    assert float(r["bound_s"]) == pytest.approx(res.json["workload"]["ring"]["analytic_bound_s"], rel=1e-12)
    # The sweep behind the figure is kept next to it.
    assert (out / "sweeps" / "ring-allreduce-small" / "sweep.csv").is_file()


# ------------------------------------------------------------------ plot.py


def make_figure():
    f = plot.Figure("ring", "message size", "time", "MiB", "us", logx=2, logy=True)
    c = f.line([0.25, 1, 4], [25.5, 90.25, 350], "8 hosts", columns={"hosts": [8, 8, 8]})
    f.bound([0.25, 1, 4], [22, 88, 352.5], "bound 8 hosts", color=c)
    f.reference([1, 4], [95, 370], "ring", "SwitchML Fig. 3")
    return f


def test_save_writes_png_and_csv_equal_to_the_plotted_data(tmp_path):
    png, csv_path = make_figure().save(tmp_path / "sub" / "fig")
    assert png == tmp_path / "sub" / "fig.png" and csv_path == tmp_path / "sub" / "fig.csv"
    assert png.read_bytes()[:8] == PNG_MAGIC
    rows = read_csv(csv_path)
    assert list(rows[0])[:8] == list(plot.CSV_COLUMNS)
    got = [(r["series"], r["kind"], float(r["x"]), float(r["y"])) for r in rows]
    assert got == [
        ("8 hosts", "sim", 0.25, 25.5), ("8 hosts", "sim", 1.0, 90.25), ("8 hosts", "sim", 4.0, 350.0),
        ("bound 8 hosts", "bound", 0.25, 22.0), ("bound 8 hosts", "bound", 1.0, 88.0),
        ("bound 8 hosts", "bound", 4.0, 352.5),
        ("ring", "reference", 1.0, 95.0), ("ring", "reference", 4.0, 370.0),
    ]
    assert {r["x_label"] for r in rows} == {"message size (MiB)"}
    assert {r["y_label"] for r in rows} == {"time (us)"}
    assert [r["hosts"] for r in rows[:3]] == ["8", "8", "8"] and all(r["hosts"] == "" for r in rows[3:])
    refs = [r for r in rows if r["kind"] == "reference"]
    assert refs and all(r["source"] == "SwitchML Fig. 3" for r in refs)
    assert all(r["source"] == "" for r in rows if r["kind"] != "reference")


def test_reference_markers_are_hollow_and_name_the_source():
    f = make_figure()
    fig = plot._new_figure(4, 3)
    ax = fig.add_subplot(1, 1, 1)
    f._draw(ax, None)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "ring, SwitchML Fig. 3 (paper)" in texts
    ref = next(l for l in ax.get_lines() if l.get_label() == "ring, SwitchML Fig. 3 (paper)")
    assert ref.get_markerfacecolor() == "none" and ref.get_linestyle() == "None"
    bound = next(l for l in ax.get_lines() if l.get_label() == "bound 8 hosts")
    assert bound.get_linestyle() == "--"
    assert ax.get_xlabel() == "message size (MiB)" and ax.get_ylabel() == "time (us)"


def test_save_is_deterministic(tmp_path):
    a = make_figure().save(tmp_path / "a")
    b = make_figure().save(tmp_path / "b")
    for x, y in zip(a, b):
        assert hashlib.sha256(x.read_bytes()).digest() == hashlib.sha256(y.read_bytes()).digest()


def test_axes_need_units_and_series_need_matching_lengths():
    with pytest.raises(ValueError, match="unit"):
        plot.Figure("t", "size", "time", "", "s")
    f = plot.Figure("t", "size", "time", "B", "s")
    with pytest.raises(ValueError, match="x has 2 values, y has 1"):
        f.line([1, 2], [1], "s")
    with pytest.raises(ValueError, match="source"):
        f.reference([1], [1], "r", "")


def test_panels_and_bar_table(tmp_path):
    g = plot.Figure("other", "hosts", "time", "count", "s")
    g.line([4, 8], [1.0, 2.0], "ring")
    png, csv_path = plot.save_panels(tmp_path / "two", [make_figure(), g], title="two panels")
    assert png.read_bytes()[:8] == PNG_MAGIC
    rows = read_csv(csv_path)
    assert [r["panel"] for r in rows].count("a") == 8 and [r["panel"] for r in rows].count("b") == 2

    png, csv_path = plot.bar_table([{"protocol": "ring", "t": 2.5, "g": None}, {"protocol": "other", "t": 1.5, "g": 3}],
                                   [("t", "time", "s"), ("g", "goodput", "Gb/s")], tmp_path / "bars", "bars")
    assert png.read_bytes()[:8] == PNG_MAGIC
    rows = read_csv(csv_path)
    assert [(r["panel"], r["series"], r["x"], r["y"]) for r in rows] == [
        ("a", "ring", "t", "2.5"), ("a", "other", "t", "1.5"), ("b", "ring", "g", ""), ("b", "other", "g", "3.0")]
    assert rows[0]["y_label"] == "time (s)" and not math.isnan(float(rows[1]["y"]))


def test_figure_script_fails_when_a_point_is_not_correct(tmp_path, monkeypatch, capsys):
    """Exit 1 when any run's `correct` is false (the sweep is replaced by a
    fake table so that no simulation has to fail for real)."""
    import pandas as pd
    from inasim import sweep

    def fake_run_sweep(definition, out=None, jobs=None, resume=True, **kw):
        rows = []
        for n in definition["grid"]["topology.hosts"]:
            for s in definition["grid"]["workload.bytes"]:
                b = bound_us(n, s) / 1e6
                rows.append({"topology.hosts": n, "workload.bytes": s, "workload.ranks": n,
                             "workload.mean_duration_s": 1.2 * b, "workload.ring.analytic_bound_s": b,
                             "correct": (n, s) != (8, 65536), "workload.correct": (n, s) != (8, 65536),
                             "sim.stopped_by": "workload_done"})
        return pd.DataFrame(rows)

    monkeypatch.setattr(sweep, "run_sweep", fake_run_sweep)
    assert load_script(SCRIPT).main(["--small", "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "hosts=8, bytes=65536: not correct" in captured.err
    assert "NOT CORRECT" in captured.out
