#!/usr/bin/python3
"""Every protocol side by side on the 1,024-host Clos (scenarios/compare/):
runs `inasim compare --protocols all` on each scenario, records what the
README's tables are made of, and writes those tables.

    /usr/bin/python3 analysis/compare_clos.py [--small] [--repetitions N] [--out DIR] [--resume] [--record] [--readme]
    /usr/bin/python3 analysis/compare_clos.py --readme      # tables from the committed results only, no run
    /usr/bin/python3 analysis/compare_clos.py --check       # exit 1 if a README table is not what the results give

Full size: clos-1024-congestion.json and clos-1024-websearch.json (about an
hour per repetition on one core: PANAMA's run under congestion alone takes
10 minutes); --small: the 64-host clos-64-*-small.json
(seconds). --record copies each comparison's compare.csv, summary.csv and
compare.json (less the resolved scenarios) to
scenarios/compare/results/[small/]<scenario name>/; --readme rewrites the
blocks `<!-- compare:begin NAME -->` ... `<!-- compare:end NAME -->` of
scenarios/compare/README.md from those files. Exit status: 0; 1 a run was
not correct or did not finish (recorded all the same: the table says so);
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py: puts this checkout's inasim on the path
from figscript import ROOT  # noqa: E402

FOLDER = ROOT / "scenarios" / "compare"
SCENARIOS = {False: ["clos-1024-congestion", "clos-1024-websearch"],
             True: ["clos-64-congestion-small", "clos-64-websearch-small"]}
#: Compared next to the registry's protocols: PANAMA without its Fig. 5
#: congestion control (each worker keeps workload.panama.fixed_pool packets in
#: flight over its trees: the paper's SwitchML*, Fig. 10b), to tell what the
#: control costs.
VARIANTS = ["panama_fixed_window=panama:workload.panama.congestion_control=false"]
#: The README's columns: (summary metric, header).
COLUMNS = (("time_s", "time (µs)"), ("goodput_gbps", "goodput (Gb/s)"), ("bg_fct_p50_s", "bg FCT p50 (µs)"),
           ("bg_fct_p99_s", "bg FCT p99 (µs)"), ("util_switch", "switch-link util."), ("drops", "drops"),
           ("ecn_marks", "ECN marks"), ("pfc_pauses", "PFC pauses"), ("switch_memory_bytes", "switch memory (KiB)"))
SCALE = {"time_s": 1e6, "bg_fct_p50_s": 1e6, "bg_fct_p99_s": 1e6, "switch_memory_bytes": 1 / 1024}


def results_dir(name: str, small: bool) -> Path:
    return FOLDER / "results" / ("small" if small else "") / name


def run(name: str, small: bool, repetitions: int, out: Path, record: bool, resume: bool = False,
        jobs: int = 1) -> bool:
    """Runs one comparison; True when every run was correct and finished."""
    from inasim.compare import compare
    from inasim._outdir import write_atomic

    scenario = (FOLDER / f"{name}.json").relative_to(ROOT)
    df = compare(str(scenario), "all", repetitions=repetitions, out=out / name, progress=_every_minute(),
                 resume=resume, variants=VARIANTS, jobs=jobs,
                 log=lambda s: print(s, file=sys.stderr, flush=True),
                 warn=lambda s: print(f"{name}: {s}", file=sys.stderr, flush=True))
    if record:
        dest = results_dir(name, small)
        dest.mkdir(parents=True, exist_ok=True)
        for f in ("compare.csv", "summary.csv"):
            write_atomic(dest / f, (out / name / f).read_text())
        doc = json.loads((out / name / "compare.json").read_text())
        doc.pop("resolved")  # the scenario file and the command say it; the run directories hold it
        write_atomic(dest / "compare.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return bool((df["correct"] & df["finished"]).all())


def _every_minute():
    """A progress callback printing one line a minute (full-size runs take minutes each)."""
    import time

    last = [time.monotonic()]

    def tick(p: dict) -> None:
        if time.monotonic() - last[0] >= 60:
            last[0] = time.monotonic()
            print(f"  {p.get('run', '')} sim {p['sim_time_s'] * 1e3:.3f} ms, {100 * p['fraction']:.1f} %, "
                  f"{p['events'] / 1e6:.1f} M events, "
                  f"{p['elapsed_s']:.0f} s, ETA {p['eta_s']:.0f} s", file=sys.stderr, flush=True)

    return tick


def _cell(s: dict, metric: str) -> str:
    if s["n"] == 0:
        return "—"
    k = SCALE.get(metric, 1.0)
    mean = s["mean"] * k
    counts = metric in ("drops", "ecn_marks", "pfc_pauses", "switch_memory_bytes")
    fmt = (lambda x: f"{x:,.0f}") if counts or abs(mean) >= 1000 else (lambda x: f"{x:.4g}")
    text = fmt(mean)
    if s["n"] >= 2 and not math.isnan(s["ci95_high"]):
        text += " ± " + fmt((s["ci95_high"] - s["ci95_low"]) / 2 * k)
    return text


def table(name: str, small: bool) -> str:
    """The README block of one comparison, from its recorded files."""
    import pandas as pd

    d = results_dir(name, small)
    summary = pd.read_csv(d / "summary.csv")
    meta = json.loads((d / "compare.json").read_text())
    runs = pd.read_csv(d / "compare.csv")
    seeds = meta["seeds"]
    spread = (f"{len(seeds)} repetitions (seeds {seeds[0]}..{seeds[-1]}), mean ± half-width of the 95 % confidence "
              "interval" if len(seeds) > 1 else f"one run per protocol (seed {seeds[0]}): no confidence interval")
    command = re.sub(r" --out \S+", "", meta["command"])  # where it was written is not part of the result
    lines = [f"{spread}; time / {meta['protocols'][0]}'s: per repetition (same seed), then averaged; "
             f"inasim {meta['inasim_version']}. Regenerate: `{command}` "
             f"(or `analysis/compare_clos.py{' --small' if small else ''} --repetitions {len(seeds)} "
             "--record --readme`).",
             "", "| protocol | " + " | ".join([COLUMNS[0][1], f"time / {meta['protocols'][0]}'s"]
                                               + [h for _, h in COLUMNS[1:]]) + " | correct |",
             "|---|" + "---:|" * (len(COLUMNS) + 1) + ":---:|"]
    from inasim.compare_report import paired_ratios

    base = meta["protocols"][0]
    ratios = paired_ratios(runs.to_dict("records"), meta["protocols"], "time_s")
    for p in meta["protocols"]:
        mine = summary[summary["protocol"] == p].set_index("metric")
        cells = [_cell(mine.loc[m].to_dict(), m) for m, _ in COLUMNS]
        cells.insert(1, "1" if p == base else _cell(ratios[p], "ratio"))
        good = runs[runs["protocol"] == p]
        good = good["correct"] & good["finished"]
        verdict = "yes" if good.all() else f"{int(good.sum())} of {len(good)}"
        lines.append(f"| {p} | " + " | ".join(cells) + f" | {verdict} |")
    lines.append("")
    findings = meta["findings"]
    lines += ([f"- {'warning' if f['warning'] else 'note'}: {f['message']}" for f in findings]
              or ["- no fairness warnings"])
    return "\n".join(lines)


def readme_text(text: str) -> str:
    """The README with every `compare` block made from its recorded results
    (readme_tables' block markers; a block without results keeps its body)."""
    from inasim import readme_tables

    def make(name: str) -> str:
        small = name.endswith("-small")
        if not (results_dir(name, small) / "summary.csv").is_file():
            return _body(text, name)
        return table(name, small)

    return readme_tables.update(text, "scenarios/compare/README.md", make, kind="compare")


def _body(text: str, name: str) -> str:
    from inasim import readme_tables

    lines = text.split("\n")
    _, i, j = next(b for b in readme_tables.blocks(text, "README", "compare") if b[0] == name)
    return "\n".join(lines[i + 1:j])


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="analysis/compare_clos.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the 64-host scenarios (seconds)")
    ap.add_argument("--repetitions", type=int, default=3, help="runs per protocol (default 3)")
    ap.add_argument("--out", default="out/compare-clos", help="where the comparisons are written")
    ap.add_argument("--only", choices=SCENARIOS[False] + SCENARIOS[True], help="one scenario")
    ap.add_argument("--record", action="store_true", help="copy the results to scenarios/compare/results/")
    ap.add_argument("--resume", action="store_true", help="reuse identical finished runs in --out (compare --resume)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="runs at once (compare --jobs; default: the machine's cores)")
    ap.add_argument("--readme", action="store_true", help="rewrite the README tables (no run when alone)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the README tables are up to date")
    args = ap.parse_args(argv)
    if args.repetitions < 1:
        print("analysis/compare_clos.py: --repetitions: must be >= 1", file=sys.stderr)
        return 2
    readme = FOLDER / "README.md"
    if args.check:
        ok = readme_text(readme.read_text()) == readme.read_text()
        print("README tables up to date" if ok else "README tables are stale: run analysis/compare_clos.py --readme")
        return 0 if ok else 1
    status = 0
    if args.record or not args.readme:
        for name in [args.only] if args.only else SCENARIOS[args.small]:
            if not run(name, name.endswith("-small"), args.repetitions, Path(args.out), args.record, args.resume,
                       args.jobs):
                status = 1
    if args.readme:
        from inasim._outdir import write_atomic

        write_atomic(readme, readme_text(readme.read_text()))
        print(f"wrote {readme.relative_to(ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
