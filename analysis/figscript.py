"""What every figure script in analysis/ shares: its start (options, the
inasim import, the configuration, the output directory, the validated base
scenario), running its sweep, checking each run, and its end (the files it
wrote, every failure, the exit status); plus reading sweep metrics and
SwitchML's packet framing.

    import figscript
    from figscript import FigureRun, num

    def draw(fig: FigureRun):
        rows = fig.sweep(grid={"topology.hosts": fig.cfg["hosts"]})   # or points=[{...}, ...]
        for row in rows:
            fig.check(row, f"hosts={row['topology.hosts']}")           # a failure unless correct
        ...
        return fig.plot.save_panels(fig.out / fig.stem, [panel_a, panel_b], title=...)

    main = figscript.entry(STEM, __doc__, "the reduced sweep (4 points, a few seconds)", CONFIGS, draw)

`main` prints "wrote <the paths draw returned>", then every failure on
stderr, and returns 0, 1 (a run failed or was not correct: the figure is
drawn, for diagnosis, but must not be used) or 2 (bad input; also when
inasim cannot be imported). A step that cannot go on raises FigureExit(code).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
# PYTHONPATH comes first; the source tree's package and default build are the fallback.
for _p in (ROOT / "python", ROOT / "build" / "python"):
    if str(_p) not in sys.path:
        sys.path.append(str(_p))

__all__ = ["ROOT", "FigureExit", "FigureRun", "main", "entry", "correct", "parse_figure_args", "scenario_configs",
           "num", "paper_value", "write_columns", "SWITCHML_FRAMING", "switchml_wire_bytes"]


def parse_figure_args(prog: str, doc: Optional[str], small_help: str,
                      argv: Optional[Sequence[str]], repetitions: bool = False) -> argparse.Namespace:
    """--small, --out DIR, --jobs N (>= 1), --resume, --reuse-build B: the figure scripts' options;
    with `repetitions`, also --repetitions N (>= 1; None when not given)."""
    ap = argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help=small_help)
    ap.add_argument("--out", type=Path, default=None, help="output directory (default out/figures, "
                    "out/figures/small with --small)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulation processes (default: CPU count)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse runs already cached under OUT/sweeps/ (default: run everything again)")
    ap.add_argument("--reuse-build", action="append", default=[], metavar="BUILD",
                    help="with --resume, also take cached runs of this simulator build (16 hex digits, the "
                    "'build' of a run's identity.json; repeatable), vouched to behave as this one (e.g. the "
                    "golden runs are identical); their rows keep their build")
    if repetitions:
        ap.add_argument("--repetitions", type=int, default=None,
                        help="runs per point, seeds seed .. seed + N - 1 (default: the figure's own, "
                        "5 placements at full size as the paper)")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if args.reuse_build and not args.resume:
        ap.error("--reuse-build needs --resume")
    if getattr(args, "repetitions", None) is not None and args.repetitions < 1:
        ap.error("--repetitions must be >= 1")
    return args


class FigureExit(Exception):
    """Ends a figure script with this exit status (what went wrong is already printed)."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def correct(row: Dict[str, Any]) -> bool:
    """The run finished and every aggregate it checked was exact."""
    return row.get("correct") is True and row.get("workload.correct") is True


class FigureRun:
    """One invocation of a figure script: its options (`args`), configuration
    (`cfg`: CONFIGS["small"] with --small, else CONFIGS["full"]), output
    directory (`out`), the validated base scenario (`base`, when the
    configuration has a "scenario"), the `inasim` package and its `plot`
    module, and the failures found so far."""

    def __init__(self, stem: str, args: argparse.Namespace, cfg: Dict[str, Any]):
        self.stem = stem
        self.args = args
        if getattr(args, "repetitions", None) is not None:  # more (or fewer) runs per point than the figure's own
            cfg = dict(cfg, repetitions=args.repetitions)
        self.cfg = cfg
        self.out = Path(args.out) if args.out is not None else (
            Path("out") / "figures" / "small" if args.small else Path("out") / "figures")
        self.failures: List[str] = []
        try:
            import inasim
            from inasim import plot
        except ImportError as e:
            print(f"{stem}: cannot import inasim ({e}); "
                  "set PYTHONPATH=python:build/python (and build the _inasim extension)", file=sys.stderr)
            raise FigureExit(2) from None
        self.inasim, self.plot = inasim, plot
        self.base = self.validate(cfg["scenario"]) if "scenario" in cfg else None

    def save(self, panels, title: str, tables: Optional[Dict[str, Dict[str, list]]] = None):
        """save_panels (OUT/<stem>.png and .csv with the paper's numbers, and
        the paper table), then each of `tables` (name -> columns) beside them
        as OUT/<stem>_<name>.csv (write_columns); what save_panels wrote."""
        written = self.save_panels(panels, title=title)
        for name, columns in (tables or {}).items():
            write_columns(self.out / f"{self.stem}_{name}.csv", columns)
        return written

    @property
    def small(self) -> bool:
        return bool(self.args.small)

    def validate(self, scenario: Path, sets: Sequence[str] = ()) -> Dict[str, Any]:
        """The resolved scenario (with `--set`s); exit 2 when it is invalid."""
        try:
            return self.inasim.validate(scenario, sets=sets)
        except self.inasim.ScenarioError as e:
            print(f"{self.stem}: {scenario}: {e}", file=sys.stderr)
            raise FigureExit(2) from None

    def sweep(self, name: Optional[str] = None, *, points: Optional[List[Dict[str, Any]]] = None,
              grid: Optional[Dict[str, list]] = None, scenario: Optional[Path] = None,
              sets: Optional[Sequence[str]] = None, repetitions: Optional[int] = None,
              seed: Optional[int] = None) -> List[Dict[str, Any]]:
        """Runs `points` (or a `grid`) of `scenario` (default: the
        configuration's) as one sweep cached under OUT/sweeps/<name> (default:
        the base scenario's name), `repetitions` times each at seeds `seed`
        (default the scenario's), seed + 1, ... Returns its rows in sweep order (points
        outer, then repetitions), each with "cache_dir" when it has a "key"
        (the run's directory: results.json, the CSVs). Exit 2 on bad input,
        1 when a run raised."""
        from inasim.sweep import SweepError, SweepRunError, run_sweep

        name = name or self.base["name"]
        sweep: Dict[str, Any] = {"name": name, "description": f"analysis/{self.stem}.py{' --small' if self.small else ''}",
                                 "scenario": str(scenario or self.cfg["scenario"])}
        for key, value in (("set", sets), ("grid", grid), ("points", points), ("repetitions", repetitions),
                           ("seed", seed)):
            if value is not None:
                sweep[key] = value
        sweep_out = self.sweep_dir(name)
        try:
            df = run_sweep(sweep, out=sweep_out, jobs=self.args.jobs, resume=self.args.resume,
                           reuse_builds=getattr(self.args, "reuse_build", []))
        except SweepError as e:
            print(f"{self.stem}: {e}", file=sys.stderr)
            raise FigureExit(2) from None
        except SweepRunError as e:
            print(f"{self.stem}: {e}", file=sys.stderr)
            raise FigureExit(1) from None
        rows = df.to_dict("records")
        for row in rows:
            if "key" in row:
                row["cache_dir"] = sweep_out / "cache" / row["key"]
        return rows

    def sweep_dir(self, name: str) -> Path:
        """Where the sweep `name` is cached: OUT/sweeps/<name>."""
        return self.out / "sweeps" / name

    def check(self, row: Dict[str, Any], where: str) -> bool:
        """Whether the run is correct; a failure naming `where` when not."""
        ok = correct(row)
        if not ok:
            self.fail(f"{where}: not correct (correct={row.get('correct')}, stopped_by={row.get('sim.stopped_by')})")
        return ok

    def fail(self, message: str) -> None:
        """Records a failure: printed at the end, and the script exits 1."""
        self.failures.append(message)

    def save_panels(self, panels: Sequence[Any], **kwargs: Any) -> Tuple[Path, ...]:
        """plot.save_panels at OUT/<stem> (keyword arguments passed on), with
        the paper's numbers of every claim that points at a panel drawn on
        it as reference markers (scenarios/*/paper-claims.json), then the
        paper/ours table of the figure's claims (paper_table). Returns the
        paths written."""
        from inasim import claims

        books = self._claims_books()
        for letter, panel in zip(self.plot.panel_letters(len(panels)), panels):
            letter = letter or "a"
            sim = {s.label: s.color for s in panel.series if s.kind == "sim"}
            for book in books:
                for label, xs, ys, source in claims.reference_series(book, self.stem, letter):
                    pts = [(x, y) for x, y in zip(xs, ys) if not isinstance(x, str)]
                    if pts:
                        panel.reference([x for x, _ in pts], [y for _, y in pts], label=label, source=source,
                                        color=sim.get(label))
        written = self.plot.save_panels(self.out / self.stem, panels, **kwargs)
        return tuple(written) + self.paper_table(books)

    def bar_table(self, table: Any, metrics: Sequence[Tuple[str, str, str]], title: str,
                  **kwargs: Any) -> Tuple[Path, ...]:
        """plot.bar_table at OUT/<stem>, the paper's values (claims whose x is
        a metric's column) marked on their bars, then paper_table."""
        from inasim import claims

        books = self._claims_books()
        refs = {}
        for letter, (column, _, _) in zip(self.plot.panel_letters(len(metrics)), metrics):
            letter = letter or "a"
            for book in books:
                for label, xs, ys, source in claims.reference_series(book, self.stem, letter):
                    refs.update({(letter, label): (y, source) for x, y in zip(xs, ys) if x == column})
        written = self.plot.bar_table(table, metrics, self.out / self.stem, title, references=refs, **kwargs)
        return tuple(written) + self.paper_table(books)

    def _claims_books(self) -> List[Any]:
        from inasim import claims

        return [b for b in claims.find_all(ROOT) if self.stem in b.figures]

    def paper_table(self, books: Sequence[Any]) -> Tuple[Path, ...]:
        """OUT/<stem>_paper.csv: the figure's claims (fidelity's columns) with
        their verdicts against this run; () when no claim reads the figure."""
        from inasim import claims, fidelity

        rows = fidelity.dashboard(books, claims.FigureTables(self.out), self.small, figure=self.stem)
        if not rows:
            return ()
        table = self.out / f"{self.stem}_paper.csv"
        write_columns(table, {c: [r[c] for r in rows] for c in fidelity.COLUMNS})
        return (table,)

    def finish(self, written: Sequence[Path]) -> int:
        """Says which files were written and what failed; the exit status."""
        names = [str(p) for p in written]
        print(f"wrote {', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else f"wrote {names[0]}")
        for message in self.failures:
            print(f"{self.stem}: {message}", file=sys.stderr)
        return 1 if self.failures else 0


def main(stem: str, doc: Optional[str], small_help: str, argv: Optional[Sequence[str]],
         configs: Dict[str, Dict[str, Any]], draw: Callable[[FigureRun], Sequence[Path]],
         repetitions: bool = False) -> int:
    """A figure script's main: its options (`repetitions`: also --repetitions,
    which overrides the configuration's "repetitions"), its FigureRun,
    draw(run) returning the paths it wrote, then finish; the exit status."""
    args = parse_figure_args(f"{stem}.py", doc, small_help, sys.argv[1:] if argv is None else argv,
                             repetitions=repetitions)
    try:
        run = FigureRun(stem, args, configs["small" if args.small else "full"])
        written = draw(run)
    except FigureExit as e:
        return e.code
    return run.finish(written)


def entry(stem: str, doc: Optional[str], small_help: str, configs: Dict[str, Dict[str, Any]],
          draw: Callable[[FigureRun], Sequence[Path]], repetitions: bool = False) -> Callable[..., int]:
    """A figure script's `main(argv=None) -> int` (main() above, bound to the
    script's stem, docstring, --small help, CONFIGS and draw):

        main = figscript.entry(STEM, __doc__, "<what --small runs>", CONFIGS, draw)
        if __name__ == "__main__":
            sys.exit(main())
    """
    def script_main(argv: Optional[Sequence[str]] = None) -> int:
        return main(stem, doc, small_help, argv, configs, draw, repetitions=repetitions)

    return script_main


def scenario_configs(scenario: str, full: Optional[Dict[str, Any]] = None,
                     small: Optional[Dict[str, Any]] = None) -> Dict[str, Dict[str, Any]]:
    """A figure script's CONFIGS for main(): scenarios/<scenario>.json with the
    settings `full`, and scenarios/<scenario>-small.json with `small` (--small)."""
    return {"full": {"scenario": ROOT / "scenarios" / f"{scenario}.json", **(full or {})},
            "small": {"scenario": ROOT / "scenarios" / f"{scenario}-small.json", **(small or {})}}


def paper_value(protocol: str, claim_id: str) -> float:
    """A paper's number from scenarios/<protocol>/paper-claims.json, for a
    script that prints it beside ours (the claims file is the only place a
    paper's number is typed). Reads the file with python/inasim/claims.py
    loaded on its own, so that it works before (and without) the inasim
    package importing."""
    import importlib.util

    global _claims_module
    if _claims_module is None:
        spec = importlib.util.spec_from_file_location("inasim_claims", ROOT / "python" / "inasim" / "claims.py")
        _claims_module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = _claims_module  # dataclasses look their module up there
        spec.loader.exec_module(_claims_module)
    return _claims_module.paper_value(protocol, claim_id, ROOT)


_claims_module = None


def num(v: Any) -> float:
    """A sweep metric as a float; NaN when it is missing or not a number."""
    try:
        return float("nan") if v is None else float(v)
    except (TypeError, ValueError):
        return float("nan")


#: Bytes around a SwitchML packet's 4k bytes of data on the wire (section 5).
SWITCHML_FRAMING = {"switchml": 10, "udp": 8, "ipv4": 20, "ethernet": 14, "preamble_fcs_ifg": 24}


def switchml_wire_bytes(k: int) -> int:
    """Wire bytes of a packet of k int32 elements: 4k + 76 (1100 for k = 256)."""
    return 4 * k + sum(SWITCHML_FRAMING.values())


def write_columns(path: Path, columns: Dict[str, list]) -> None:
    """Writes a tidy table beside a figure: a header of the keys, then one
    row per index of the (equally long) value lists."""
    import csv

    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns.keys())
        w.writerows(zip(*columns.values()))
