"""`inasim fidelity`: every paper claim (scenarios/*/paper-claims.json) next
to our number, with a verdict, and a tally per paper; and the READMEs'
results tables, generated from the same data.

    inasim fidelity [--small] [--protocol P] [--results DIR] [--out DIR]
                    [--run none|missing|all] [--jobs N] [--repetitions N]
                    [--record] [--readme] [--check]

Our numbers come from the committed figure results
(scenarios/<protocol>/results[/small], inasim.results_store) unless
`--results DIR` names a figure output directory (`--run` and `--record`
default it to out/figures, out/figures/small with --small). `--run
missing` runs the figure scripts whose CSV is not in RESULTS yet (`--run
all`: every one the claims need). `--record` copies RESULTS' figure CSVs
into the committed results with their provenance. `--readme` regenerates
the results tables between the `<!-- fidelity:begin STEM -->` markers of
each scenarios/<protocol>/README.md from the committed results
(inasim.readme_tables). `--check` writes nothing and exits 1 when a README
table differs from what the data gives, or a committed result was edited
or its figure's script or scenario changed since its run. With --small,
claims that do not survive the reduced runs are "not run" and say why.

Writes OUT (default RESULTS/fidelity, out/fidelity[/small] for the committed
results): fidelity.csv (one row per claim), fidelity.json (the rows, the
tallies, what was read) and fidelity.md (a table per paper). Exit status:
0; 1 a figure script failed, or --check found a problem; 2 bad input (a
claims file, a README's markers, an option).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from inasim import claims as cl
from inasim import readme_tables
from inasim import results_store as rs
from inasim._outdir import out_dir_problem, write_atomic

REPO = Path(__file__).resolve().parents[2]
COLUMNS = ("paper", "claim", "where", "kind", "scaled", "paper_value", "ours", "ratio", "verdict", "note")
TALLY_ORDER = ("within", "trend right", "holds", "off", "reversed", "seeds split", "violated", "not run", "out of scope")


def tally_key(verdict: str) -> str:
    """"within 15 %" and "within 10 %" count as "within"."""
    return "within" if verdict.startswith("within") else verdict


def dashboard(books: Sequence[cl.ClaimsBook], tables: cl.FigureTables, small: bool,
              figure: Optional[str] = None) -> List[Dict[str, Any]]:
    """One row per claim of every book (COLUMNS); with `figure`, only the
    claims whose number that figure gives."""
    rows = []
    for book in books:
        for c in (book.claims if figure is None else book.figure_claims(figure)):
            v = cl.evaluate(c, tables, small)
            scaled = any(book.figures[f].get("scaling") is not None for f in cl.figures_of(c))
            rows.append({
                "paper": book.paper.get("name") or book.paper["id"], "claim": c["id"],
                "where": c["source"]["where"], "kind": c.get("kind", ""), "scaled": scaled,
                "paper_value": v.paper, "ours": v.ours,
                "ratio": "" if v.ratio is None else f"{v.ratio:.3f}", "verdict": v.verdict, "note": v.note,
            })
    return rows


def tallies(rows: Sequence[Dict[str, Any]]) -> Dict[str, Dict[str, int]]:
    """paper -> verdict -> count (TALLY_ORDER, zeros left out), plus "claims"."""
    out: Dict[str, Dict[str, int]] = {}
    for r in rows:
        t = out.setdefault(r["paper"], {"claims": 0})
        t["claims"] += 1
        k = tally_key(r["verdict"])
        t[k] = t.get(k, 0) + 1
    return {p: {k: t[k] for k in ("claims",) + TALLY_ORDER if k in t} for p, t in out.items()}


def tally_line(paper: str, t: Dict[str, int]) -> str:
    return f"{paper}: {t['claims']} claims: " + ", ".join(f"{t[k]} {k}" for k in TALLY_ORDER if k in t)


def markdown(rows: Sequence[Dict[str, Any]], tally: Dict[str, Dict[str, int]]) -> str:
    buf = io.StringIO()
    buf.write("# Fidelity: the papers' claims next to ours\n\n")
    for paper, t in tally.items():
        buf.write(f"## {paper}\n\n{tally_line(paper, t)}\n\n")
        buf.write("| claim | where | paper | ours | ours / paper | verdict |\n|---|---|---|---|---|---|\n")
        for r in rows:
            if r["paper"] != paper:
                continue
            verdict = r["verdict"] + (" (scaled)" if r["scaled"] else "")
            note = f" ({r['note']})" if r["note"] else ""
            cells = (r["claim"], r["where"], r["paper_value"], r["ours"], r["ratio"], verdict + note)
            buf.write("| " + " | ".join(readme_tables.md_cell(c) for c in cells) + " |\n")
        buf.write("\n")
    return buf.getvalue()


def run_figures(books: Sequence[cl.ClaimsBook], everyone: Sequence[cl.ClaimsBook], results: Path, small: bool,
                mode: str, jobs: Optional[int], repetitions: Optional[int], log) -> List[str]:
    """Runs the figure scripts the claims need (mode missing / all); returns failures."""
    failed = []
    for stem in rs.stems(books):
        if mode == "missing" and (results / f"{stem}.csv").is_file():
            continue
        book = rs.home(everyone, stem)
        cmd = [sys.executable] + rs.command_of(book, stem, small, repetitions, REPO).split() + ["--out", str(results)]
        cmd[1] = str(REPO / cmd[1])
        cmd += ["--jobs", str(jobs)] if jobs else []
        log(f"fidelity: running {' '.join(cmd[1:])}")
        if subprocess.run(cmd).returncode != 0:
            failed.append(f"{book.figures[stem]['script']} failed (its CSV, if written, is read anyway)")
    return failed


def write(out: Path, rows, tally, meta) -> List[Path]:
    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({**r, "scaled": "true" if r["scaled"] else "false"})
    files = {"fidelity.csv": buf.getvalue(),
             "fidelity.json": json.dumps({**meta, "tally": tally, "claims": rows}, indent=1) + "\n",
             "fidelity.md": markdown(rows, tally)}
    paths = []
    for name, text in files.items():
        write_atomic(out / name, text)
        paths.append(out / name)
    return paths


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="inasim fidelity", description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the figure scripts' reduced runs")
    ap.add_argument("--protocol", default=None, help="one paper's claims (scenarios/P/paper-claims.json)")
    ap.add_argument("--results", type=Path, default=None,
                    help="where the figure CSVs are (default: the committed ones, scenarios/*/results[/small]; "
                    "with --run or --record, out/figures[/small])")
    ap.add_argument("--out", type=Path, default=None, help="where the dashboard goes (default RESULTS/fidelity, "
                    "out/fidelity[/small] for the committed results)")
    ap.add_argument("--run", choices=("none", "missing", "all"), default="none",
                    help="run the figure scripts: none (default), those without a CSV, all")
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulations per figure script")
    ap.add_argument("--repetitions", type=int, default=None,
                    help="with --run: runs per point of the multi-seed figures (default: each figure's own)")
    ap.add_argument("--record", action="store_true",
                    help="copy RESULTS' figure CSVs into scenarios/<protocol>/results[/small] with their provenance")
    ap.add_argument("--readme", action="store_true",
                    help="regenerate the results tables of scenarios/<protocol>/README.md from the committed results")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when a README table or a committed result is not what the data "
                    "and the inputs give")
    return ap


def _options(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The parsed options; CliError (exit 2) on a bad one."""
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:
        raise CliError(int(e.code or 0) if not isinstance(e.code, str) else 2) from None
    for name in ("jobs", "repetitions"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise CliError(2, f"--{name}: must be >= 1")
    if args.check and (args.record or args.readme or args.run != "none"):
        raise CliError(2, "--check writes nothing: not with --record, --readme or --run")
    return args


class CliError(Exception):
    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code, self.message = code, message


def _check(books, everyone) -> int:
    found = readme_tables.problems(books, everyone, REPO)
    for p in found:
        print(f"inasim fidelity --check: {p}", file=sys.stderr)
    if not found:
        print(f"inasim fidelity --check: the README tables and committed results of "
              f"{', '.join(b.protocol for b in books)} are what the data gives")
    return 1 if found else 0


def _readme(books, everyone) -> None:
    for path, (now, want) in readme_tables.regenerate(books, everyone).items():
        if now != want:
            write_atomic(path, want)
            print(f"wrote {path}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = _options(argv)
        everyone = cl.find_all(REPO)
        books = cl.find_all(REPO, args.protocol) if args.protocol else everyone
        if args.check:
            return _check(books, everyone)
        return _dashboard(args, books, everyone)
    except CliError as e:
        if e.message:
            print(f"inasim fidelity: {e.message}", file=sys.stderr)
        return e.code
    except (cl.ClaimsError, readme_tables.ReadmeError) as e:
        print(f"inasim fidelity: {e}", file=sys.stderr)
        return 2


def _dashboard(args, books, everyone) -> int:
    committed = args.results is None and args.run == "none" and not args.record
    results = args.results or REPO / "out" / "figures" / ("small" if args.small else "")
    out = args.out or (REPO / "out" / "fidelity" / ("small" if args.small else "") if committed
                       else results / "fidelity")
    problem = out_dir_problem(out, files=("fidelity.csv", "fidelity.json", "fidelity.md"))
    if problem:
        raise CliError(2, f"--out: {out} {problem}")
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    failed = [] if args.run == "none" else run_figures(books, everyone, results, args.small, args.run,
                                                       args.jobs, args.repetitions, log)
    if args.record:
        for p in rs.record(everyone, results, args.small, args.repetitions, REPO, only=rs.stems(books)):
            print(f"wrote {p}")
    tables = rs.committed_tables(books, args.small, everyone) if committed else cl.FigureTables(results)
    rows = dashboard(books, tables, args.small)
    tally = tallies(rows)
    meta = {"tool": "inasim fidelity", "small": args.small,
            "results": "committed (scenarios/*/results)" if committed else str(results),
            "claims_files": [str(b.path.relative_to(REPO)) for b in books]}
    for p in write(out, rows, tally, meta):
        print(f"wrote {p}")
    if args.readme:
        _readme(books, everyone)
    for paper, t in tally.items():
        print(tally_line(paper, t))
    for f in failed:
        print(f"inasim fidelity: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
