"""The committed figure results: what the scenario READMEs' results tables
and the default `inasim fidelity` dashboard are generated from.

    scenarios/<protocol>/results/<stem>.csv               full size: the figure script's CSV
    scenarios/<protocol>/results/<stem>.provenance.json   how it was made
    scenarios/<protocol>/results/small/...                the same for --small

A figure's home is the protocol in its stem (fig_<protocol>_...), else the
first claims book that lists it. `record` copies a figure output directory
into the store with its provenance: the command, the version and commit
that ran it, the runs, their simulation wall time, and the sha256 of the
figure's script and scenario files. `stale_inputs` names the inputs that
changed since: the figure must run again (`inasim fidelity --run all
--record`). The reduced CSVs are also compared byte for byte with fresh
runs by the figure tests, so a change of behaviour cannot leave them stale.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from inasim import claims as cl
from inasim._outdir import write_atomic

SCHEMA = "inasim-figure-results/1"
PROVENANCE = ".provenance.json"


def home(books: Sequence[cl.ClaimsBook], stem: str) -> Optional[cl.ClaimsBook]:
    """The book whose results folder holds figure `stem`."""
    listing = [b for b in books if stem in b.figures]
    for b in listing:
        if stem.startswith(f"fig_{b.protocol}_"):
            return b
    return listing[0] if listing else None


def store_dir(book: cl.ClaimsBook, small: bool) -> Path:
    d = book.path.parent / "results"
    return d / "small" if small else d


def stems(books: Sequence[cl.ClaimsBook]) -> List[str]:
    """Every figure the books list, in book order, once."""
    out: List[str] = []
    for b in books:
        out.extend(s for s in b.figures if s not in out)
    return out


def committed_tables(books: Sequence[cl.ClaimsBook], small: bool, all_books=None) -> cl.FigureTables:
    """FigureTables over the committed CSVs of `books`' figures (a figure's
    home may be a book not in `books`: give every book as `all_books`)."""
    everyone = list(all_books or books)
    paths = {}
    for s in stems(books):
        h = home(everyone, s)
        if h is not None:
            paths[s] = store_dir(h, small) / f"{s}.csv"
    first = store_dir(books[0], small) if books else Path("scenarios")
    return cl.FigureTables(first, paths)


def read_provenance(csv_path: Path) -> Optional[Dict[str, Any]]:
    p = csv_path.with_name(csv_path.stem + PROVENANCE)
    if not p.is_file():
        return None
    return json.loads(p.read_text(encoding="utf-8"))


def inputs(book: cl.ClaimsBook, stem: str, small: bool, repo: Path) -> List[str]:
    """The files that define figure `stem` at this size (repository paths):
    its script, the analysis/ modules it imports other than the shared
    figscript.py (e.g. canaryfig.py), its scenario and its data files. The shared code
    (figscript.py, plot.py, the simulator) is left out: the figure tests'
    byte-for-byte check of the reduced CSVs covers it."""
    fig = book.figures[stem]
    out = [fig["script"]] + _helper_modules(repo, fig["script"])
    scen = fig.get("small_scenario" if small else "scenario")
    if scen and (repo / scen).is_file():
        out.append(scen)
    return out + list(fig.get("data", []))


_IMPORT = re.compile(r"^(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def _helper_modules(repo: Path, script: str) -> List[str]:
    folder = Path(script).parent
    names = dict.fromkeys(_IMPORT.findall((repo / script).read_text(encoding="utf-8")))
    return [str(folder / f"{n}.py") for n in names
            if n != "figscript" and (repo / folder / f"{n}.py").is_file()]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stale_inputs(prov: Dict[str, Any], repo: Path) -> List[str]:
    """The recorded inputs whose content changed (or vanished) since."""
    return [p for p, h in prov.get("inputs", {}).items()
            if not (repo / p).is_file() or sha256(repo / p) != h]


def _sweeps(src: Path, stem: str, small: bool) -> List[Dict[str, Any]]:
    """The sweep.json of every sweep the figure script ran into src/sweeps/."""
    want = f"analysis/{stem}.py" + (" --small" if small else "")
    out = []
    for f in sorted((src / "sweeps").glob("*/sweep.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        if d.get("sweep", {}).get("description") == want:
            out.append(d)
    return out


def _runs(src: Path, sweeps: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Runs, seeds, the simulator versions that made them and summed wall
    time of the sweeps' cached runs (each run's results.json: a --resume'd
    sweep.json names the version that resumed it, not the one that ran)."""
    runs, wall, seeds, versions = 0, 0.0, set(), set()
    for d in sweeps:
        for pt in d.get("points", []):
            runs += 1
            seeds.add(pt.get("seed"))
            res = src / "sweeps" / d["name"] / "cache" / str(pt.get("key")) / "results.json"
            if res.is_file():
                r = json.loads(res.read_text(encoding="utf-8"))
                wall += r.get("perf", {}).get("wall_s", 0.0)
                versions.add(r.get("inasim_version", ""))
    return {"runs": runs, "seeds": sorted(s for s in seeds if s is not None),
            "inasim_version": sorted(v for v in versions if v), "sim_wall_s": round(wall, 1)}


def _commit(repo: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        # The store being rewritten by this very record, and Markdown (the
        # READMEs' generated tables), cannot change a result: not "dirty".
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude,glob)scenarios/*/results/**", ":(exclude,glob)**/*.md"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(book: cl.ClaimsBook, stem: str, src: Path, small: bool, command: str,
               repo: Path) -> Dict[str, Any]:
    csv_path = src / f"{stem}.csv"
    return {
        "schema": SCHEMA, "figure": stem, "small": small, "command": command,
        **_runs(src, _sweeps(src, stem, small)),
        "recorded_at_commit": _commit(repo),
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "csv_sha256": sha256(csv_path),
        "inputs": {p: sha256(repo / p) for p in inputs(book, stem, small, repo)},
    }


def command_of(book: cl.ClaimsBook, stem: str, small: bool, repetitions: Optional[int], repo: Path) -> str:
    """The figure script's command line, as `inasim fidelity --run` gives it."""
    cmd = [book.figures[stem]["script"]] + (["--small"] if small else [])
    if repetitions is not None and takes_repetitions(repo, book.figures[stem]["script"]):
        cmd += ["--repetitions", str(repetitions)]
    return " ".join(cmd)


def takes_repetitions(repo: Path, script: str) -> bool:
    """Whether a figure script has --repetitions (the multi-seed ones)."""
    text = (repo / script).read_text(encoding="utf-8")
    return "repetitions=True" in text


def record(books: Sequence[cl.ClaimsBook], src: Path, small: bool, repetitions: Optional[int],
           repo: Path, only: Optional[Sequence[str]] = None) -> List[Path]:
    """Copies src/<stem>.csv of every figure the claims read (or `only`)
    into its home's store with its provenance; the paths written."""
    written = []
    for stem in (only or stems(books)):
        h = home(books, stem)
        if h is None or not (src / f"{stem}.csv").is_file():
            continue
        dest = store_dir(h, small)
        dest.mkdir(parents=True, exist_ok=True)
        prov = provenance(h, stem, src, small, command_of(h, stem, small, repetitions, repo), repo)
        write_atomic(dest / f"{stem}.csv", (src / f"{stem}.csv").read_bytes())
        write_atomic(dest / f"{stem}{PROVENANCE}", json.dumps(prov, indent=1, sort_keys=True) + "\n")
        written += [dest / f"{stem}.csv", dest / f"{stem}{PROVENANCE}"]
    return written

