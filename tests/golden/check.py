#!/usr/bin/python3
"""Golden regression runs: every scenario of golden.json, compared with expected.json.

    /usr/bin/python3 tests/golden/check.py [--jobs N] [--only NAME]... [--keep DIR]
    /usr/bin/python3 tests/golden/check.py --refresh        # rewrite expected.json and ref/
    /usr/bin/python3 tests/golden/check.py --determinism    # run each twice, compare the runs

Each golden runs `inasim run SCENARIO --set ...` (INASIM_BIN, else build/inasim)
into a temporary directory. Compared: the exit code, `sim.fingerprint`,
`sim.events`, `sim.end_time_ps`, `network.frames_tx`, a sha256 of results.json
without the keys in EXCLUDED, and a sha256 of every CSV. On any difference the
check fails and says which golden, which file and which keys, rows or columns
moved, diffing against the outputs kept in ref/<name>/. Exit status: 0 all
equal, 1 some differ, 2 a run crashed or the files are unusable.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("INASIM_SOURCE_DIR", HERE.parents[1]))
MANIFEST = HERE / "golden.json"
EXPECTED = HERE / "expected.json"
REF = HERE / "ref"
BIN = Path(os.environ.get("INASIM_BIN", ROOT / "build" / "inasim"))
# Top-level keys of results.json left out of its hash, and why:
EXCLUDED = {
    "perf": "wall-clock time, rates per wall second and peak RSS: differ on every run",
    "inasim_version": "the build's git describe (+ -dirty): changes with every commit, not with behaviour",
}
MAX_LINES = 20  # diff lines printed per golden
# A record's headline fields and where results.json holds them.
HEADLINE = {"exit_code": None, "fingerprint": "sim.fingerprint", "events": "sim.events", "frames": "network.frames_tx",
            "end_time_ps": "sim.end_time_ps", "stopped_by": "sim.stopped_by", "correct": "correct"}
WALL_LIMIT_S = 300


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stripped(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in EXCLUDED}


def canonical(results: dict) -> bytes:
    """results.json without EXCLUDED, one fixed text: sorted keys, indent 1
    (the form kept in ref/, so a refresh diffs line by line)."""
    return (json.dumps(stripped(results), sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def run_golden(g: dict, out: Path) -> dict:
    """Runs one golden into `out`; returns its record (what expected.json holds)."""
    argv = [str(BIN), "run", str(ROOT / g["scenario"]), "--out", str(out), "--quiet", "--progress", "off"]
    for s in g.get("set", []):
        argv += ["--set", s]
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=WALL_LIMIT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"no exit within {WALL_LIMIT_S} s"}
    wall = time.monotonic() - t0
    res = out / "results.json"
    if p.returncode not in (0, 1) or not res.exists():
        return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-500:]}", "wall_s": wall}
    r = json.loads(res.read_text())
    rec = {
        "exit_code": p.returncode,
        "fingerprint": r["sim"].get("fingerprint"),
        "events": r["sim"]["events"],
        "frames": r["network"]["frames_tx"],
        "end_time_ps": r["sim"]["end_time_ps"],
        "stopped_by": r["sim"]["stopped_by"],
        "correct": r["correct"],
        "results_sha256": sha256(canonical(r)),
        "csv_sha256": {f.name: sha256(f.read_bytes()) for f in sorted(out.glob("*.csv"))},
    }
    return {"record": rec, "wall_s": wall}


def run_all(goldens: list[dict], jobs: int, tmp: Path) -> dict[str, dict]:
    outs = {}
    with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(run_golden, g, tmp / g["name"]): g["name"] for g in goldens}
        for f in cf.as_completed(futs):
            outs[futs[f]] = f.result()
    return {g["name"]: outs[g["name"]] for g in goldens}


# ------------------------------------------------------------------ diffs


def leaves(x, path=""):
    """Leaf key paths of a JSON value: {"a": {"b": [1]}} -> {"a.b[0]": 1}."""
    if isinstance(x, dict):
        if not x:
            return {path: {}}
        out = {}
        for k, v in x.items():
            out.update(leaves(v, f"{path}.{k}" if path else k))
        return out
    if isinstance(x, list):
        if not x:
            return {path: []}
        out = {}
        for i, v in enumerate(x):
            out.update(leaves(v, f"{path}[{i}]"))
        return out
    return {path: x}


def diff_json(old: dict, new: dict, skip=()) -> list[str]:
    a, b = leaves(old), leaves(new)
    lines = []
    for k in sorted((a.keys() | b.keys()) - set(skip)):
        if k not in b:
            lines.append(f"{k}: {json.dumps(a[k])} -> (gone)")
        elif k not in a:
            lines.append(f"{k}: (new) -> {json.dumps(b[k])}")
        elif a[k] != b[k] or type(a[k]) is not type(b[k]):
            lines.append(f"{k}: {json.dumps(a[k])} -> {json.dumps(b[k])}")
    return lines


def diff_csv(name: str, old: str, new: str) -> list[str]:
    ra, rb = list(csv.reader(io.StringIO(old))), list(csv.reader(io.StringIO(new)))
    if not ra or not rb or ra[0] != rb[0]:
        return [f"{name}: header {ra[0] if ra else []} -> {rb[0] if rb else []}"]
    head = ra[0]
    lines, changed_cols, changed_rows = [], set(), 0
    for i, (x, y) in enumerate(zip(ra[1:], rb[1:]), start=1):
        cols = [head[j] if j < len(head) else str(j) for j in range(max(len(x), len(y)))
                if (x[j] if j < len(x) else None) != (y[j] if j < len(y) else None)]
        if not cols:
            continue
        changed_rows += 1
        changed_cols.update(cols)
        if changed_rows <= 3:
            cells = ", ".join(f"{c}: {x[head.index(c)]} -> {y[head.index(c)]}" for c in cols[:4] if c in head
                              and head.index(c) < min(len(x), len(y)))
            lines.append(f"{name} row {i} ({head[0]}={x[0]}): {cells}")
    summary = [f"{name}: {changed_rows} of {min(len(ra), len(rb)) - 1} rows differ"
               f" in columns {', '.join(c for c in head if c in changed_cols) or '-'}"]
    if len(ra) != len(rb):
        summary.append(f"{name}: {len(ra) - 1} -> {len(rb) - 1} rows")
    return summary + lines


def explain(name: str, old: dict, new: dict, out: Path) -> list[str]:
    """Lines saying what moved, against the outputs kept in ref/<name>/."""
    lines = []
    for k in HEADLINE:
        if old.get(k) != new.get(k):
            lines.append(f"{k}: {old.get(k)} -> {new.get(k)}")
    ref = REF / name
    if old.get("results_sha256") != new["results_sha256"]:
        ref_json = ref / "results.json"
        if ref_json.exists():
            a, b = json.loads(ref_json.read_text()), stripped(json.loads((out / "results.json").read_text()))
            moved = diff_json(a, b, skip=HEADLINE.values())  # those are on the lines above
            lines.append(f"results.json: {len(moved)} more of {len(leaves(b))} values moved" if moved else
                         "results.json: nothing else moved")
            lines += [f"results.json {m}" for m in moved]
        else:
            lines.append(f"results.json: sha256 differs (no {ref_json.relative_to(HERE)} to diff against)")
    old_csv, new_csv = old.get("csv_sha256", {}), new["csv_sha256"]
    for f in sorted(old_csv.keys() | new_csv.keys()):
        if old_csv.get(f) == new_csv.get(f):
            continue
        if f not in new_csv or f not in old_csv:
            lines.append(f"{f}: {'no longer written' if f not in new_csv else 'newly written'}")
        elif (ref / f).exists():
            lines += diff_csv(f, (ref / f).read_text(), (out / f).read_text())
        else:
            lines.append(f"{f}: sha256 differs (no ref copy to diff against)")
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"... and {len(lines) - MAX_LINES} more lines"]
    return lines


# ------------------------------------------------------------------ modes


def ref_mismatches(expected: dict) -> list[str]:
    """Files in ref/ that are not what expected.json hashes (a hand edit)."""
    bad = []
    for name, rec in expected.items():
        files = {"results.json": rec["results_sha256"], **rec["csv_sha256"]}
        for f, h in files.items():
            p = REF / name / f
            if not p.exists() or sha256(p.read_bytes()) != h:
                bad.append(f"ref/{name}/{f}")
    return bad


def check(goldens: list[dict], expected: dict, runs: dict[str, dict], tmp: Path) -> int:
    status = 0
    for g in goldens:
        name, got = g["name"], runs[g["name"]]
        if "error" in got:
            print(f"ERROR {name}: {got['error']}")
            status = 2
            continue
        old, new = expected.get(name), got["record"]
        if old is None:
            print(f"FAIL  {name}: no expectation in expected.json (new golden? run --refresh)")
            status = max(status, 1)
        elif old != new:
            print(f"FAIL  {name} ({g['scenario']}, {got['wall_s']:.1f} s):")
            for line in explain(name, old, new, tmp / name):
                print(f"        {line}")
            status = max(status, 1)
        else:
            print(f"ok    {name} ({got['wall_s']:.1f} s, fingerprint {new['fingerprint']})")
    stale = ref_mismatches({k: v for k, v in expected.items() if k in runs})
    if stale:
        print(f"FAIL  ref/ disagrees with expected.json: {', '.join(stale[:5])}; run --refresh")
        status = max(status, 1)
    return status


def refresh(goldens: list[dict], runs: dict[str, dict], tmp: Path) -> int:
    if any("error" in r for r in runs.values()):
        for n, r in runs.items():
            if "error" in r:
                print(f"ERROR {n}: {r['error']}")
        return 2
    doc = {"about": "Written by tests/golden/check.py --refresh; a commit that changes it says why.",
           "excluded_from_results_sha256": EXCLUDED,
           "goldens": {n: r["record"] for n, r in runs.items()}}
    EXPECTED.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    for g in goldens:
        d, out = REF / g["name"], tmp / g["name"]
        d.mkdir(parents=True, exist_ok=True)
        for old in d.iterdir():
            old.unlink()
        (d / "results.json").write_bytes(canonical(json.loads((out / "results.json").read_text())))
        for f in out.glob("*.csv"):
            (d / f.name).write_bytes(f.read_bytes())
        print(f"wrote {g['name']}: fingerprint {runs[g['name']]['record']['fingerprint']}")
    for d in REF.iterdir():
        if d.is_dir() and d.name not in runs:
            for f in d.iterdir():
                f.unlink()
            d.rmdir()
    return 0


def determinism(goldens: list[dict], jobs: int, tmp: Path) -> int:
    """Runs every golden twice; any difference outside EXCLUDED is a bug."""
    a, b = run_all(goldens, jobs, tmp / "a"), run_all(goldens, jobs, tmp / "b")
    status = 0
    for g in goldens:
        n = g["name"]
        if "error" in a[n] or "error" in b[n]:
            print(f"ERROR {n}: {a[n].get('error') or b[n].get('error')}")
            status = 2
            continue
        lines = []
        if a[n]["record"] != b[n]["record"]:
            ra, rb = (json.loads((t / n / "results.json").read_text()) for t in (tmp / "a", tmp / "b"))
            lines += diff_json(stripped(ra), stripped(rb))
            for f in sorted(a[n]["record"]["csv_sha256"]):
                if a[n]["record"]["csv_sha256"][f] != b[n]["record"]["csv_sha256"].get(f):
                    lines += diff_csv(f, (tmp / "a" / n / f).read_text(), (tmp / "b" / n / f).read_text())
        print(f"{'ok   ' if not lines and a[n]['record'] == b[n]['record'] else 'DIFF '} {n}")
        if a[n]["record"] != b[n]["record"]:
            status = max(status, 1)
            for line in (lines or ["records differ"])[:MAX_LINES]:
                print(f"        {line}")
    return status


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel (default 2)")
    ap.add_argument("--only", action="append", default=[], help="just this golden (repeatable)")
    ap.add_argument("--keep", type=Path, help="write the runs' outputs here instead of a temporary directory")
    ap.add_argument("--expected", type=Path, default=EXPECTED, help="compare with this file (default expected.json)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--refresh", action="store_true", help="rewrite expected.json and ref/ from this build")
    mode.add_argument("--determinism", action="store_true", help="run each golden twice and compare the runs")
    args = ap.parse_args(argv)
    goldens = json.loads(MANIFEST.read_text())["goldens"]
    unknown = set(args.only) - {g["name"] for g in goldens}
    if unknown:
        print(f"no golden named {', '.join(sorted(unknown))}")
        return 2
    if args.only:
        goldens = [g for g in goldens if g["name"] in args.only]
    if args.refresh and (args.only or args.expected != EXPECTED):
        print("--refresh rewrites every golden into expected.json: no --only, no --expected")
        return 2
    if not BIN.exists():
        print(f"no inasim binary at {BIN} (set INASIM_BIN)")
        return 2
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="golden-") as t:
        tmp = args.keep.resolve() if args.keep else Path(t)
        if args.determinism:
            status = determinism(goldens, args.jobs, tmp)
        else:
            runs = run_all(goldens, args.jobs, tmp)
            if args.refresh:
                status = refresh(goldens, runs, tmp)
            else:
                expected = json.loads(args.expected.read_text())["goldens"] if args.expected.exists() else {}
                status = check(goldens, expected, runs, tmp)
    verdict = ["all equal", "DIFFERENCES (see above; if intended, run --refresh and say why in the commit)", "ERRORS"]
    if args.refresh and status == 0:
        verdict[0] = "expected.json and ref/ rewritten"
    elif args.determinism:
        verdict[:2] = ["every run identical twice", "NOT DETERMINISTIC (see above)"]
    print(f"{len(goldens)} goldens, {time.monotonic() - t0:.1f} s wall, {args.jobs} jobs: {verdict[status]}")
    return status


if __name__ == "__main__":
    sys.exit(main())
