"""What the P4SGD figure scripts share: their start (options, scenario,
output directory, the inasim import) and running a list of points as one
cached sweep.

    from p4sgdfig import start, sweep_points
    ctx = start("fig_p4sgd_x.py", __doc__, "the reduced sweep", argv, CONFIGS)
    if isinstance(ctx, int): return ctx          # 2: bad input / no inasim
    rows = sweep_points(ctx, "name-suffix", points)  # list of dicts, or an int exit status
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "python", ROOT / "build" / "python"):
    if str(p) not in sys.path:
        sys.path.append(str(p))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from figscript import num, parse_figure_args  # noqa: E402

__all__ = ["start", "sweep_points", "finish", "num", "ROOT", "correct"]


def start(prog, doc, small_help, argv, configs):
    """Parses the options, imports inasim and validates the configuration's
    scenario. Returns a namespace (args, cfg, out, base, inasim, plot, stem)
    or an exit status (2) after printing why."""
    args = parse_figure_args(prog, doc, small_help, sys.argv[1:] if argv is None else argv)
    stem = prog[:-3] if prog.endswith(".py") else prog
    try:
        import inasim
        from inasim import plot
    except ImportError as e:
        print(f"{stem}: cannot import inasim ({e}); set PYTHONPATH=python:build/python", file=sys.stderr)
        return 2
    cfg = configs["small" if args.small else "full"]
    out = args.out if args.out is not None else (Path("out") / "figures" / ("small" if args.small else ""))
    try:
        base = inasim.validate(cfg["scenario"])
    except inasim.ScenarioError as e:
        print(f"{stem}: {cfg['scenario']}: {e}", file=sys.stderr)
        return 2
    return SimpleNamespace(args=args, cfg=cfg, out=Path(out), base=base, inasim=inasim, plot=plot, stem=stem)


def sweep_points(ctx, suffix, points, scenario=None):
    """Runs `points` (lists of overrides) of the configuration's scenario as
    one sweep cached under OUT/sweeps/<name>-<suffix>; returns its rows in
    point order (dicts, with "cache_dir" added) or an exit status."""
    from inasim.sweep import SweepError, SweepRunError, run_sweep

    name = f"{ctx.base['name']}-{suffix}" if suffix else ctx.base["name"]
    sweep = {"name": name, "description": f"analysis/{ctx.stem}.py{' --small' if ctx.args.small else ''}",
             "scenario": str(scenario or ctx.cfg["scenario"]), "points": points}
    out = ctx.out / "sweeps" / name
    try:
        df = run_sweep(sweep, out=out, jobs=ctx.args.jobs, resume=ctx.args.resume)
    except SweepError as e:
        print(f"{ctx.stem}: {e}", file=sys.stderr)
        return 2
    except SweepRunError as e:
        print(f"{ctx.stem}: {e}", file=sys.stderr)
        return 1
    rows = sorted(df.to_dict("records"), key=lambda r: int(r["point"]))
    for r in rows:
        r["cache_dir"] = out / "cache" / r["key"]
    return rows


def correct(row) -> bool:
    """The run finished and every aggregate (and trained model) was exact."""
    return row.get("correct") is True and row.get("workload.correct") is True


def finish(ctx, written, failures) -> int:
    """Reports the figure's files (the (png, csv) pair the plot call returned)
    and every failure; the exit status: 1 if anything failed, else 0."""
    png, csv_path = written
    print(f"wrote {png} and {csv_path}")
    for m in failures:
        print(f"{ctx.stem}: {m}", file=sys.stderr)
    return 1 if failures else 0
