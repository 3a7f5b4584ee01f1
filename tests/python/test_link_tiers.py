"""analysis/link_tiers.py: a run's links.csv grouped by fabric tier, with
exact sums and shares, and a clear exit 2 on a directory without links.csv.

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_link_tiers.py
"""

import subprocess

from helpers import PYTHON, SOURCE_DIR, load_script

SCRIPT = SOURCE_DIR / "analysis" / "link_tiers.py"
HEADER = ("link,a,b,direction,rate_gbps,tx_frames,tx_bytes,wire_bytes,utilization,drops_buffer,drops_loss,"
          "drops_link_down,ecn_marks,pause_sent,paused_s,max_queue_bytes\n")


def write_links(run, rows):
    """links.csv from (link, a, b, direction, utilization[, tx_frames, tx_bytes, paused_s]) tuples."""
    lines = []
    for link, a, b, d, util, *rest in rows:
        frames, nbytes, paused = rest or (1, 1, 0)
        lines.append(f"{link},{a},{b},{d},10,{frames},{nbytes},1,{util},0,0,0,0,0,{paused},0")
    (run / "links.csv").write_text(HEADER + "\n".join(lines) + "\n")


def test_tiers_sum_each_tier_and_share_the_marks(tmp_path):
    rows = ["0,h0,edge0,a->b,10,1,1,1,0.50,0,0,0,0,0,0,700000",
            "0,edge0,h0,b->a,10,1,1,1,0.25,0,0,0,30,1,0,100000",
            "1,h1,edge0,a->b,10,1,1,1,0.30,0,0,0,0,0,0,300000",
            "1,edge0,h1,b->a,10,1,1,1,0.35,0,0,0,50,0,0,200000",
            "2,edge0,agg1,a->b,10,1,1,1,0.10,0,0,0,20,2,0,50000"]
    (tmp_path / "links.csv").write_text(HEADER + "\n".join(rows) + "\n")
    t = load_script(SCRIPT).tiers(tmp_path).set_index("tier")
    assert sorted(t.index) == ["edge -> agg", "edge -> h", "h -> edge"]
    assert t.loc["edge -> h", "directions"] == 2
    assert t.loc["edge -> h", "ecn_marks"] == 80 and t.loc["edge -> h", "marks_share"] == 0.8
    assert t.loc["edge -> agg", "marks_share"] == 0.2 and t.loc["edge -> agg", "pauses"] == 2
    assert t.loc["h -> edge", "utilization"] == 0.4
    assert t.loc["h -> edge", "max_queue_kb"] == 700.0
    # Idle: under 10 % utilisation (0.10 is not).
    assert t.loc["edge -> agg", "idle"] == 0 and t.loc["h -> edge", "idle"] == 0
    assert list(t.columns[:5]) == ["directions", "utilization", "idle", "idle_share", "ecn_marks"]


def test_window_reads_the_utilisation_of_the_first_sample(tmp_path):
    # link, a, b, direction, utilisation (the other columns do not matter here)
    write_links(tmp_path, [(0, "h0", "edge0", "a->b", 0.50), (0, "edge0", "h0", "b->a", 0.25),
                           (1, "edge0", "agg1", "a->b", 0.30), (1, "agg1", "edge0", "b->a", 0.30)])
    samples = ["time_s,link,direction,queue_bytes,queue_packets,tx_bytes,utilization",
               "0.000000000,0,0,0,0,0,0", "0.000000000,0,1,0,0,0,0", "0.000000000,1,0,0,0,0,0",
               "0.000000000,1,1,0,0,0,0",
               "0.000002000,0,0,0,0,9,0.75", "0.000002000,0,1,0,0,9,0.05", "0.000002000,1,0,0,0,9,0.01",
               "0.000002000,1,1,0,0,9,0.5"]
    (tmp_path / "samples.csv").write_text("\n".join(samples) + "\n")
    script = load_script(SCRIPT)
    whole = script.tiers(tmp_path).set_index("tier")
    assert whole["idle"].sum() == 0
    t = script.tiers(tmp_path, window_us=2).set_index("tier")
    assert t.loc["h -> edge", "utilization"] == 0.75 and t.loc["edge -> h", "idle"] == 1
    assert t.loc["edge -> agg", "idle"] == 1 and t.loc["agg -> edge", "idle"] == 0
    assert t.loc["edge -> agg", "idle_share"] == 1.0
    r = subprocess.run([PYTHON, str(SCRIPT), str(tmp_path), "--window-us", "3"], capture_output=True, text=True)
    assert r.returncode == 2 and "no sample at 3 us" in r.stderr
    r = subprocess.run([PYTHON, str(SCRIPT), str(tmp_path), "--window-us", "2"], capture_output=True, text=True)
    assert r.returncode == 0 and "2 of 4 link directions idle (50.0 %) over [0, 2 us]" in r.stdout


def test_a_directory_without_links_csv_exits_2(tmp_path):
    r = subprocess.run([PYTHON, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "no links.csv" in r.stderr


def test_held_lists_the_directions_flow_control_held_longest(tmp_path):
    # link, a, b, direction, utilisation, tx_frames, tx_bytes, paused_s
    write_links(tmp_path, [(0, "h0", "edge0", "a->b", 0.2, 4, 4340, 0.8), (0, "edge0", "h0", "b->a", 0.1, 1, 1514, 0.0),
                           (1, "h1", "edge0", "a->b", 0.5, 2, 3028, 0.5), (1, "edge0", "h1", "b->a", 0.0, 0, 0, 0.0)])
    r = subprocess.run([PYTHON, str(SCRIPT), str(tmp_path), "--held", "2"], capture_output=True, text=True)
    assert r.returncode == 2 and "no results.json" in r.stderr
    (tmp_path / "results.json").write_text('{"sim": {"end_time_s": 2.0}}')
    h = load_script(SCRIPT).held(tmp_path, 2)
    assert list(h.a) == ["h0", "h1"] and list(h.held_share) == [0.4, 0.25]  # paused_s / the run's 2 s
    assert list(h.mean_frame_bytes) == [1085.0, 1514.0]
