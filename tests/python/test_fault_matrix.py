"""The fault matrix (analysis/fault_matrix.py): every protocol under loss,
a link and a switch failing mid-collective, a delayed host. No cell may be a wrong aggregate,
a hang or a crash; the protocols with recovery must finish exact; and
docs/RELIABILITY.md must show exactly this matrix (regenerate it with
`analysis/fault_matrix.py --write-doc` when behaviour changes).
"""

import csv
import os
import subprocess

from helpers import PYTHON, SOURCE_DIR

SCRIPT = SOURCE_DIR / "analysis" / "fault_matrix.py"


def test_fault_matrix(tmp_path):
    env = dict(os.environ)
    r = subprocess.run([PYTHON, str(SCRIPT), "--out", str(tmp_path), "--jobs", "2"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    with open(tmp_path / "fault_matrix.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 * 8  # the eight allreduce protocols of protocols/ (fault_matrix.py reads the registry)
    cell = {(x["protocol"], x["fault"]): x for x in rows}
    assert all(x["outcome"] in ("exact", "failed") for x in rows), rows
    for x in rows:
        assert int(x["mismatches"] or 0) == 0
    faults = sorted({x["fault"] for x in rows})
    for p in ("ring", "canary"):
        assert all(cell[(p, f)]["outcome"] == "exact" for f in faults), p
    # Gloo (TCP) and NCCL (RoCE go-back-N) bring every byte through; at 5 % loss
    # their timeouts outlast the matrix's 20 ms.
    for p in ("gloo", "nccl"):
        assert all(cell[(p, f)]["outcome"] == "exact" for f in faults if f != "loss 5 %"), p
    for f in faults:
        if f == "none" or f.startswith("loss"):
            assert cell[("switchml", f)]["outcome"] == "exact", f
    assert all(cell[(p, "none")]["outcome"] == "exact" for p in ("static_tree", "panama"))
    # P4SGD recovers every loss and a straggler (retransmission, §3.3); with one switch
    # a cut worker link or the switch itself cannot be routed around: an honest failure.
    for f in faults:
        want = "failed" if f in ("link down", "switch down") else "exact"
        assert cell[("p4sgd", f)]["outcome"] == want, f
    doc = (SOURCE_DIR / "docs" / "RELIABILITY.md").read_text()
    assert (tmp_path / "fault_matrix.md").read_text() in doc, \
        "docs/RELIABILITY.md is stale: run analysis/fault_matrix.py --write-doc"
