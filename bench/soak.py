#!/usr/bin/python3
"""Soak: a long SwitchML training stream, checking that memory stays flat and
the event rate constant over the run.

    /usr/bin/python3 bench/soak.py [--build DIR] [--iterations N] [--out DIR]

Runs bench/scenarios/soak-switchml.json (8 workers on one 100 Gb/s rack, a
256 KiB int32 tensor per iteration, back to back; default 1,000 iterations)
with --progress on, sampling the process's resident set (VmRSS in
/proc/<pid>/status) every 0.2 s and reading the simulated time from the
progress lines, and compares with the same scenario at a tenth of the
iterations run in the same invocation (the baseline: these machines are
noisy). Flat memory: the long run's RSS while simulating within 10 % of the
short run's, and its RSS in the last quarter within 5 % of the second
quarter's (the peak including the final report is reported, not checked).
Constant rate: events per CPU-second of the long run within 15 % of the short
run's (CPU, not wall: the other core's load does not count), and simulated
time per wall-second in its last quarter within 15 % of its second quarter's. Every iteration is checked against the exact sum.

Writes OUT/soak.json (both runs, samples, verdicts) and OUT/soak.csv (the
samples: wall_s, rss_mb, sim_s). OUT defaults to out/bench. Exit status 0
when every check holds, 1 otherwise.
"""
import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(HERE, "scenarios", "soak-switchml.json")


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def run(build, iterations, out_dir):
    """Runs the soak scenario; returns (results.json, samples [(wall, rss_mb, sim_s)])."""
    cmd = [os.path.join(build, "inasim"), "run", SCENARIO, "--out", out_dir, "--progress", "on", "--quiet",
           "--set", f"workload.iterations={iterations}"]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, bufsize=1)
    samples, sim_s = [], 0.0
    # Progress lines go to stderr ("[inasim] sim 1.234 ms ..."); read them without blocking the sampler.
    os.set_blocking(p.stderr.fileno(), False)
    buf = ""
    while p.poll() is None:
        time.sleep(0.2)
        try:
            chunk = p.stderr.read() or ""
        except (BlockingIOError, TypeError):
            chunk = ""
        buf += chunk
        for m in re.finditer(r"sim ([0-9.]+) ms", buf):  # src/ina/progress.h
            sim_s = float(m.group(1)) * 1e-3
        buf = buf[-400:]
        r = rss_mb(p.pid)
        if r is not None:
            samples.append((time.monotonic() - t0, r, sim_s))
    if p.returncode != 0:
        raise SystemExit(f"soak: {' '.join(cmd)} exited with {p.returncode}")
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(out_dir, "results.json")) as f:
        r = json.load(f)
    # CPU seconds, not wall seconds: a noisy 2-core machine shares the core.
    r["soak_cpu_s"] = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return r, samples


def quarter(samples, q):
    n = len(samples)
    return samples[n * q // 4:max(n * (q + 1) // 4, n * q // 4 + 1)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--out", default=os.path.join("out", "bench"))
    args = ap.parse_args(argv)
    if args.iterations < 40:
        ap.error("--iterations must be at least 40 (the baseline runs a tenth of it)")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        short, short_samples = run(args.build, args.iterations // 10, os.path.join(d, "short"))
        long_, samples = run(args.build, args.iterations, os.path.join(d, "long"))
    checks = {}
    for name, r in (("short", short), ("long", long_)):
        checks[f"{name}_correct"] = r["correct"] is True
    # Memory while simulating (sampled): the final report of 1,000 collectives
    # (results.json, collectives.csv) is built after the run and shows in the
    # processes' peak RSS only, which is reported, not checked.
    peak_s, peak_l = short["perf"]["peak_rss_mb"], long_["perf"]["peak_rss_mb"]
    run_s = max(x[1] for x in short_samples) if short_samples else peak_s
    run_l = max(x[1] for x in samples)
    checks["run_rss_within_10pct_of_short_run"] = run_l <= 1.10 * run_s
    q2, q4 = quarter(samples, 1), quarter(samples, 3)
    rss2 = max(s[1] for s in q2)
    rss4 = max(s[1] for s in q4)
    checks["rss_last_quarter_within_5pct_of_second"] = rss4 <= 1.05 * rss2

    def rate(qs):
        return (qs[-1][2] - qs[0][2]) / (qs[-1][0] - qs[0][0]) if len(qs) > 1 and qs[-1][0] > qs[0][0] else None

    r2, r4 = rate(q2), rate(q4)
    checks["sim_rate_last_quarter_within_15pct_of_second"] = (r2 is not None and r4 is not None
                                                              and abs(r4 - r2) <= 0.15 * r2)
    ev_s = short["sim"]["events"] / short["soak_cpu_s"]
    ev_l = long_["sim"]["events"] / long_["soak_cpu_s"]
    checks["events_per_cpu_s_within_15pct_of_short_run"] = abs(ev_l - ev_s) <= 0.15 * ev_s
    report = {
        "scenario": SCENARIO, "iterations": args.iterations, "inasim_version": long_.get("inasim_version"),
        "short": {"iterations": args.iterations // 10, "wall_s": short["perf"]["wall_s"], "peak_rss_mb": peak_s,
                  "run_rss_mb": run_s, "events_per_cpu_s": ev_s},
        "long": {"iterations": args.iterations, "wall_s": long_["perf"]["wall_s"], "peak_rss_mb": peak_l,
                 "run_rss_mb": run_l, "events_per_cpu_s": ev_l, "sim_s": long_["sim"]["end_time_s"],
                 "rss_mb_second_quarter": rss2, "rss_mb_last_quarter": rss4,
                 "sim_s_per_wall_s_second_quarter": r2, "sim_s_per_wall_s_last_quarter": r4},
        "checks": checks,
        "samples": [{"wall_s": w, "rss_mb": m, "sim_s": s} for w, m, s in samples],
    }
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "soak.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_s", "rss_mb", "sim_s"])
        w.writerows(samples)
    print(f"soak: {args.iterations // 10} iterations: {short['perf']['wall_s']:.1f} s, RSS {run_s:.1f} MB while "
          f"running (peak with the report {peak_s:.1f} MB), {ev_s / 1e6:.3f} M events per CPU-second")
    print(f"soak: {args.iterations} iterations: {long_['perf']['wall_s']:.1f} s, RSS {run_l:.1f} MB while running "
          f"(peak with the report {peak_l:.1f} MB), {ev_l / 1e6:.3f} M events per CPU-second; "
          f"RSS {rss2:.1f} -> {rss4:.1f} MB (2nd -> 4th quarter), "
          f"sim rate {r2 and r2 * 1e3:.3f} -> {r4 and r4 * 1e3:.3f} ms simulated per wall-second")
    for k, v in checks.items():
        print(f"soak: {'ok  ' if v else 'FAIL'} {k}")
    print(f"soak: wrote {os.path.join(args.out, 'soak.json')} and soak.csv")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
