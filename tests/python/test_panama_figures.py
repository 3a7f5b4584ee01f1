"""PANAMA figure script end to end: analysis/fig_panama_load_balance.py --small
(exit status, PNG, the tidy CSV with every configuration at every load, and
that every configuration ran what it says: 4 trees, one tree per spine, ring).

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_panama_figures.py
"""

import json

import pytest

from helpers import (PNG_MAGIC, assert_committed_small_csv, assert_paper_claims, SOURCE_DIR, import_inasim, load_script,
                     read_csv, run_script)

inasim = import_inasim()

ANALYSIS = SOURCE_DIR / "analysis"


def test_load_balance_small(tmp_path):
    r = run_script(ANALYSIS / "fig_panama_load_balance.py", tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "fig_panama_load_balance.png").read_bytes()[:8] == PNG_MAGIC
    assert_paper_claims(tmp_path, "fig_panama_load_balance")  # PANAMA's Fig. 9 claims, their reduced verdicts
    assert_committed_small_csv(tmp_path, "fig_panama_load_balance")
    rows = read_csv(tmp_path / "fig_panama_load_balance_points.csv")
    configs = ["PANAMA (4 trees)"] + [f"PANAMA-Agg{i}" for i in range(1, 5)] + ["Ring-AllReduce"]
    assert sorted({r["config"] for r in rows}) == sorted(configs)
    assert sorted({int(r["long_flow_nodes"]) for r in rows}) == [0, 4, 8]
    assert len(rows) == 18
    t = {(r["config"], int(r["long_flow_nodes"])): float(r["aggregation_time_s"]) for r in rows}
    assert all(v > 0 for v in t.values())
    # Without long flows every in-network configuration beats the ring, which
    # moves 2(n-1)/n of the tensor through each host link instead of 1x.
    for c in configs[:-1]:
        assert t[(c, 0)] < t[("Ring-AllReduce", 0)]
    # With the long flows sprayed over the spines (the scenario's reading),
    # 4 trees are untouched by them and every single tree is slowed.
    for c in configs[1:5]:
        assert t[("PANAMA (4 trees)", 8)] < t[(c, 8)] < t[("Ring-AllReduce", 8)], (c, t)
    # Each run is what its label says (results.json of every cached run): the
    # sprayed sweep once per point, the ECMP sweep (panel e) twice (2 seeds).
    for sweep, forwarding, runs in (("panama-fig9-small", "spray", 3), ("panama-fig9-small-ecmp", "ecmp", 6)):
        seen = {}
        for res in (tmp_path / "sweeps" / sweep).rglob("results.json"):
            doc = json.loads(res.read_text())
            assert doc["scenario"]["switch"]["forwarding"] == forwarding, res
            w = doc["workload"]
            assert w["correct"] is True
            roots = tuple(w["panama"]["tree_roots"]) if w["protocol"] == "panama" else ("ring",)
            seen[roots] = seen.get(roots, 0) + 1
        assert seen == {("spine0", "spine1", "spine2", "spine3"): runs, ("spine0",): runs, ("spine1",): runs,
                        ("spine2",): runs, ("spine3",): runs, ("ring",): runs}, (sweep, seen)


def test_fairness_small(tmp_path):
    """Fig. 10 reduced: with an additive increase in every window the
    aggregation is within 10 % of the fair share; Fig. 5 as printed (the
    default, DCTCP's rule in ns-3 / Linux: no growth in a marked window) is
    weaker but not starved (10-30 % off, the measured gap the README reports),
    and with DCTCP's CWR added (one cut per flight) nearer its share;
    no congestion control takes most of the port (the paper's Fig. 10b)."""
    r = run_script(ANALYSIS / "fig_panama_fairness.py", tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "fig_panama_fairness.png").read_bytes()[:8] == PNG_MAGIC
    assert_committed_small_csv(tmp_path, "fig_panama_fairness")
    rows = {row["run"]: row for row in read_csv(tmp_path / "fig_panama_fairness_summary.csv")}
    dctcp_rule, fig5, fixed, cwr = ("PANAMA, increase in every window", "PANAMA, Fig. 5 as printed (default)",
                                    "no congestion control (fixed window)", "PANAMA, Fig. 5 with DCTCP's CWR")
    assert set(rows) == {dctcp_rule, fig5, fixed, cwr}
    agg = {k: float(v["aggregation_gbps"]) for k, v in rows.items()}
    tcp = {k: float(v["dctcp_gbps"]) for k, v in rows.items()}
    for k, row in rows.items():
        # A steady state of at least 20 ms was measured (10 ms for the fixed
        # pool, whose job takes the port and ends sooner), and the two
        # together fill the one 10 Gb/s port (frame bytes, ACKs not counted).
        assert float(row["to_s"]) - float(row["from_s"]) > (0.010 if k == fixed else 0.020), row
        assert 9.0 < agg[k] + tcp[k] < 10.0, row
    assert float(rows[dctcp_rule]["max_deviation_from_fair"]) <= 0.10, rows[dctcp_rule]
    assert float(rows[dctcp_rule]["jain_index"]) > 0.99
    # Fig. 5 grows only in windows without a mark: less than its fair share.
    assert agg[fig5] < agg[dctcp_rule]
    assert 0.10 < float(rows[fig5]["max_deviation_from_fair"]) < 0.30, rows[fig5]
    # DCTCP's CWR (no second cut for results already in flight) closes part of that gap.
    assert agg[fig5] < agg[cwr] < agg[dctcp_rule] * 1.05, (agg, tcp)
    # Without congestion control the fixed window takes most of the port.
    assert agg[fixed] > 2 * tcp[fixed]
    assert agg[fixed] > agg[dctcp_rule]


def test_shared_cluster_fig8_small(tmp_path):
    """Fig. 8 reduced: every configuration at both loads, every run exact, and
    the orderings the paper reports that this small cluster reproduces."""
    r = run_script(ANALYSIS / "fig_panama_fig8.py", tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "fig_panama_fig8.png").read_bytes()[:8] == PNG_MAGIC
    assert_paper_claims(tmp_path, "fig_panama_fig8")
    assert_committed_small_csv(tmp_path, "fig_panama_fig8")
    rows = read_csv(tmp_path / "fig_panama_fig8_points.csv")
    configs = ["Ideal", "Ring-AllReduce", "SwitchML*", "PANAMA", "PANAMA-0.88", "PANAMA-0.94"]
    assert sorted({row["config"] for row in rows}) == sorted(configs)
    assert sorted({float(row["load"]) for row in rows}) == [0.4, 0.8]
    m = {(row["config"], float(row["load"])): row for row in rows}
    for row in rows:
        assert float(row["short_p99_fct_s"]) > 0 and float(row["mean_jct_s"]) > 0
    # More jobs arrive at 80 % than at 40 % (the load sets the arrival rate).
    assert float(m[("PANAMA", 0.8)]["jobs"]) > float(m[("PANAMA", 0.4)]["jobs"])
    # Fig. 8a: without congestion control the aggregation takes the short
    # flows' share (SwitchML*'s p99 FCT well above PANAMA's); PANAMA is the
    # closest to Ideal (below the ring too); Ideal is the lowest.
    p99 = {c: float(m[(c, 0.8)]["short_p99_fct_s"]) for c in configs}
    assert p99["SwitchML*"] > 1.5 * p99["PANAMA"]
    assert p99["PANAMA"] < p99["Ring-AllReduce"]
    assert p99["Ideal"] == min(p99.values())
    # Fig. 8c: SwitchML* ignores congestion and finishes its jobs sooner than PANAMA.
    jct = {c: float(m[(c, 0.8)]["mean_jct_s"]) for c in configs}
    assert jct["SwitchML*"] < jct["PANAMA"]
    # Every run exact; ring runs are rings, quorum runs carry their quorum.
    kinds = {}
    for res in (tmp_path / "sweeps").rglob("results.json"):
        doc = json.loads(res.read_text())
        assert doc["correct"] is True
        w = doc["workload"].get("panama", {})
        if "cluster" in w:
            kinds.setdefault((w["cluster"]["allreduce"], w["cluster"]["quorum"]), 0)
            kinds[(w["cluster"]["allreduce"], w["cluster"]["quorum"])] += 1
            assert w["cluster"]["finished_jobs"] == len(w["cluster"]["jobs"])
    assert kinds[("ring", 1.0)] == 2
    assert kinds[("panama", 0.88)] == 2 and kinds[("panama", 0.94)] == 2
    assert kinds[("panama", 1.0)] == 6  # PANAMA, SwitchML*, the jobs alone (Ideal)


def test_fig8_two_scales_small(tmp_path):
    """Fig. 8's two-scale check reduced: the 80 % point at s = 0.0001 and
    0.0002, every run exact and on the rule (each run's echoed scenario
    scales exactly what it has: the jobs' sizes and arrival window, the
    flows' sizes and stop; the jobs-alone run has no flows, the flows-alone
    runs no jobs), and every claim's ratio at both scales."""
    r = run_script(ANALYSIS / "fig_panama_fig8_scales.py", tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / "fig_panama_fig8_scales.png").read_bytes()[:8] == PNG_MAGIC
    assert_committed_small_csv(tmp_path, "fig_panama_fig8_scales")
    ratios = read_csv(tmp_path / "fig_panama_fig8_scales_ratios.csv")
    assert len(ratios) == 9
    for row in ratios:
        a, b = float(row["s_0.0001"]), float(row["s_0.0002"])
        assert a > 0 and b > 0
        assert abs(float(row["change_pct"]) - 100 * (b / a - 1)) < 1e-9
    seen = {0.0001: 0, 0.0002: 0}
    for res in (tmp_path / "sweeps").rglob("results.json"):
        doc = json.loads(res.read_text())
        assert doc["correct"] is True
        sc = doc["scenario"]
        flows = (sc.get("background") or {}).get("flows")
        cluster = sc["workload"].get("panama", {}).get("cluster") if sc["workload"]["type"] != "none" else None
        assert flows or cluster
        s = flows["size_scale"] if flows else cluster["scale"]
        if flows:
            assert flows["stop_us"] == pytest.approx(1e7 * s)
        if cluster:
            assert cluster["scale"] == s and cluster["window_us"] == pytest.approx(1e7 * s)
            assert cluster["load"] == 0.8
        seen[s] += 1
    assert seen == {0.0001: 8, 0.0002: 8}


def paper(claim_id):
    from inasim import claims

    return claims.paper_value("panama", claim_id, SOURCE_DIR)


def test_fig1_speedup_formula_gives_the_papers_speedups_from_its_fractions():
    """Fig. 1b's speed-up (INA halves the communication time, no overlap)
    turns the paper's own extreme fractions of Fig. 1a into its extreme
    speed-ups, to the two decimals it prints: the lowest fraction is the
    A100's lowest speed-up, the highest the P100's highest."""
    fig1 = load_script(ANALYSIS / "fig_panama_fig1.py")
    assert round(fig1.speedup(paper("fig1a-comm-fraction-min")), 2) == paper("fig1b-speedup-a100-min")
    # 0.70 is itself rounded (0.693 gives 1.530): within one unit of the last digit.
    assert abs(fig1.speedup(paper("fig1a-comm-fraction-max")) - paper("fig1b-speedup-p100-max")) <= 0.01


def run_analytic_figure(tmp_path, stem):
    """Runs an analytic figure script: exit 0, a PNG, its claims and its committed reduced CSV."""
    r = run_script(ANALYSIS / f"{stem}.py", tmp_path)
    assert r.returncode == 0, r.stderr + r.stdout
    assert (tmp_path / f"{stem}.png").read_bytes()[:8] == PNG_MAGIC
    assert_paper_claims(tmp_path, stem)
    assert_committed_small_csv(tmp_path, stem)


def test_fig1_small(tmp_path):
    """Fig. 1 (analytic): every model on every GPU, the numbers read from
    data/models/dnn-models.csv and the GPU data file, the fraction falling as GPUs and links
    get faster for every model, and the speed-up consistent with it."""
    run_analytic_figure(tmp_path, "fig_panama_fig1")
    fig1 = load_script(ANALYSIS / "fig_panama_fig1.py")
    models = fig1.table_models()
    assert [m["name"] for m in models] == ["vgg16", "alexnet", "resnet152", "resnet50", "inceptionv3"]
    rows = read_csv(tmp_path / "fig_panama_fig1_table.csv")
    assert len(rows) == len(models) * len(fig1.GPUS)
    frac = {(r["model"], r["gpu"]): float(r["comm_fraction"]) for r in rows}
    for r in rows:
        f = float(r["comm_fraction"])
        assert 0 < f < 1 and abs(float(r["speedup"]) - fig1.speedup(f)) < 1e-12
        # The P100 rate is the models file's, the others the GPU data file's.
        src = {m["name"]: m["p100"] for m in models} if r["gpu"] == "P100" else \
            {m: v for (m, g), v in fig1.gpu_rates().items() if g == r["gpu"]}
        assert float(r["images_per_s"]) == src[r["model"]]
    for m in models:
        assert frac[(m["name"], "P100")] > frac[(m["name"], "V100")] > frac[(m["name"], "A100")]


def test_fig14_small(tmp_path):
    """Fig. 14 and Table 1 from the dataplane model (inasim-p4): latency
    rises with the packet size and by the same step (one adder level) per
    doubling of the ports; a wider bus and the ASIC are faster."""
    run_analytic_figure(tmp_path, "fig_panama_fig14")
    rows = read_csv(tmp_path / "fig_panama_fig14.csv")
    series = {}
    for row in rows:
        series.setdefault((row["panel"], row["series"]), []).append((float(row["x"]), float(row["y"])))
    for (panel, label), pts in series.items():
        ys = [y for _, y in sorted(pts)]
        if panel in "abce":
            assert ys == sorted(ys) and ys[0] < ys[-1], (panel, label, ys)
        if panel in "cd":  # powers of two: equal steps of La
            steps = [round(b - a, 6) for a, b in zip(ys, ys[1:])]
            assert len(set(steps)) == 1, (panel, label, steps)
    for panel in "abcd":
        widths = sorted((int(label.split()[2]), pts) for (p, label), pts in series.items() if p == panel)
        assert len(widths) == 4
        for (_, narrow), (_, wide) in zip(widths, widths[1:]):
            assert all(yw < yn for (_, yn), (_, yw) in zip(sorted(narrow), sorted(wide)))
    fpga, asic = (dict(series[(p, "W = 512 bits (102.4 Gb/s)" if p == "a" else "W = 512 bits (512 Gb/s)")])
                  for p in "ab")
    assert all(asic[x] < fpga[x] for x in fpga)
    agg, non = dict(series[("e", "aggregation")]), dict(series[("e", "non-aggregation")])
    assert all(agg[x] > non[x] for x in agg)


def test_fig10_window_decomposition_small(tmp_path):
    """analysis/panama_fig10_windows.py --small: the measured cause the README
    gives for Fig. 10a's default gap. Each sender's mean window is its
    sawtooth's G / (R f) (within 15 %), both see the same marked fraction
    (within 15 %), and with Fig. 5 as printed the aggregation's window is
    smaller because it cuts deeper: its alpha at a cut is above its mean
    (Fig. 5 updates alpha with the marked window, then cuts), DCTCP's below
    (it cuts at the first ECE with the alpha of earlier windows)."""
    import subprocess

    from helpers import PYTHON, child_env

    p = subprocess.run([PYTHON, str(ANALYSIS / "panama_fig10_windows.py"), "--small", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=child_env(), timeout=300)
    assert p.returncode == 0, p.stderr
    rows = {(r["configuration"], r["sender"]): {k: float(v) for k, v in r.items() if k not in ("configuration", "sender")}
            for r in read_csv(tmp_path / "windows.csv")}
    assert len(rows) == 6
    for key, m in rows.items():
        assert 0.85 < m["W_predicted"] / m["W"] < 1.15, (key, m)
    for conf in ("Fig. 5 (default)", "every window", "Fig. 5 + CWR"):
        tcp, agg = rows[(conf, "DCTCP flow")], rows[(conf, "aggregation")]
        assert abs(agg["marked"] / tcp["marked"] - 1) < 0.15, (conf, tcp, agg)
    tcp, agg = rows[("Fig. 5 (default)", "DCTCP flow")], rows[("Fig. 5 (default)", "aggregation")]
    assert agg["W"] < 0.85 * tcp["W"]
    assert agg["f"] > 1.1 * tcp["f"]
    assert agg["alpha_at_cut"] > agg["alpha_mean"] and tcp["alpha_at_cut"] < tcp["alpha_mean"]
    assert abs(agg["G_per_s"] / tcp["G_per_s"] - 1) < 0.10 and abs(agg["R_per_s"] / tcp["R_per_s"] - 1) < 0.15
