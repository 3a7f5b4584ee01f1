"""tests/golden/check.py itself: its diffs name what moved, and a wrong
expectation fails the check (the golden runs are ctest's `golden`)."""

import json
import os
import subprocess
import sys

import pytest

from helpers import PYTHON, SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "tests" / "golden"))
import check  # noqa: E402


def test_leaves_name_every_value_by_path():
    assert check.leaves({"a": {"b": [1, {"c": 2}]}, "d": [], "e": None}) == {"a.b[0]": 1, "a.b[1].c": 2, "d": [],
                                                                           "e": None}


def test_diff_json_lists_moved_new_and_gone_keys():
    old = {"sim": {"events": 10, "end_time_ps": 5}, "x": [1, 2], "gone": 1}
    new = {"sim": {"events": 11, "end_time_ps": 5}, "x": [1, 2, 3], "added": True}
    assert check.diff_json(old, new) == ["added: (new) -> true", "gone: 1 -> (gone)", "sim.events: 10 -> 11",
                                         "x[2]: (new) -> 3"]
    assert check.diff_json({"a": 1}, {"a": 1.0}) == ["a: 1 -> 1.0"]  # an int turning float is a change
    assert check.diff_json(old, new, skip=["sim.events"])[-1] == "x[2]: (new) -> 3"


def test_diff_csv_names_columns_and_rows():
    old = "link,tx_frames,utilization\n0,5,0.5\n1,6,0.6\n"
    new = "link,tx_frames,utilization\n0,5,0.5\n1,7,0.7\n2,1,0.1\n"
    lines = check.diff_csv("links.csv", old, new)
    assert lines[0] == "links.csv: 1 of 2 rows differ in columns tx_frames, utilization"
    assert lines[1] == "links.csv: 2 -> 3 rows"
    assert lines[2] == "links.csv row 2 (link=1): tx_frames: 6 -> 7, utilization: 0.6 -> 0.7"
    assert check.diff_csv("a.csv", "x,y\n1,2\n", "x,z\n1,2\n") == ["a.csv: header ['x', 'y'] -> ['x', 'z']"]


def test_canonical_results_leave_out_perf_and_version_only():
    r = {"perf": {"wall_s": 1.0}, "inasim_version": "0.1.0+abc", "sim": {"events": 3}, "correct": True}
    same = dict(r, perf={"wall_s": 2.0}, inasim_version="0.1.0+def-dirty")
    assert check.canonical(r) == check.canonical(same)
    assert check.canonical(r) != check.canonical(dict(r, sim={"events": 4}))


@pytest.mark.skipif(not os.environ.get("INASIM_BIN"), reason="needs the built inasim (INASIM_BIN)")
def test_a_wrong_expectation_fails_and_names_the_key(tmp_path):
    doc = json.loads((SOURCE_DIR / "tests" / "golden" / "expected.json").read_text())
    doc["goldens"]["ring-rack"]["fingerprint"] = "0000000000000000"
    doc["goldens"]["ring-rack"]["events"] = -1
    wrong = tmp_path / "expected.json"
    wrong.write_text(json.dumps(doc))
    p = subprocess.run([PYTHON, str(SOURCE_DIR / "tests" / "golden" / "check.py"), "--only", "ring-rack",
                        "--expected", str(wrong)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL  ring-rack" in p.stdout
    assert "fingerprint: 0000000000000000 -> " in p.stdout
    assert "events: -1 -> " in p.stdout
