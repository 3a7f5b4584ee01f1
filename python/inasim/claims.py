"""A paper's claims as data (docs/PAPER-CLAIMS.md): loading and checking
`scenarios/<protocol>/paper-claims.json`, finding our number for a claim in a
figure script's CSV, and the verdict.

    from inasim import claims
    book = claims.load("scenarios/switchml/paper-claims.json")   # ClaimsError on bad input
    tables = claims.FigureTables(Path("out/figures"))              # the figure CSVs
    for c in book.claims:
        v = claims.evaluate(c, tables, small=False)                # Verdict
        print(c["id"], v.verdict, v.paper, v.ours, v.ratio)

The verdicts: "within 15 %" (the tolerance, 15 % unless a claim says other),
"trend right", "off", "reversed", "seeds split" (an ordering whose items
were run at several seeds, some of which give the paper's order and some
not), "holds", "violated", "not run", "out of scope". Only the claims file
holds a paper's numbers.

A figure point run at several seeds carries them in the CSV column
"<column>_seeds" ("y_seeds" for y): its values at each seed, in seed order,
separated by spaces, in the unit of the column; the column itself is their
mean.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["SCHEMA", "KINDS", "VERDICTS", "ClaimsError", "ClaimsBook", "FigureTables", "Verdict",
           "load", "find_all", "paper_value", "figures_of", "evaluate", "within_label", "reference_series"]

SCHEMA = "inasim-paper-claims/1"
KINDS = ("value", "ratio", "series", "ordering", "bound")
DEFAULT_TOLERANCE = 0.15
VERDICTS = ("within", "trend right", "off", "reversed", "seeds split", "holds", "violated", "not run", "out of scope")
_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_REPO = Path(__file__).resolve().parents[2]


class ClaimsError(ValueError):
    """A claims file that is not as docs/PAPER-CLAIMS.md says: the message
    names the file, the field and the problem."""


def within_label(tolerance: float) -> str:
    """The verdict's text for "within the tolerance": "within 15 %"."""
    return f"within {tolerance * 100:g} %"


# ----------------------------------------------------------------- loading

def _need(obj: Any, key: str, kind, where: str, optional: bool = False):
    if not isinstance(obj, dict):
        raise ClaimsError(f"{where}: must be an object")
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise ClaimsError(f"{where}.{key}: missing")
    v = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(v, bool) and bool not in kinds:
        raise ClaimsError(f"{where}.{key}: must be {_kind_name(kinds)}, got {json.dumps(v)}")
    if not isinstance(v, kinds):
        raise ClaimsError(f"{where}.{key}: must be {_kind_name(kinds)}, got {json.dumps(v)[:60]}")
    if isinstance(v, str) and not v.strip():
        raise ClaimsError(f"{where}.{key}: must not be empty")
    if isinstance(v, float) and not math.isfinite(v):
        raise ClaimsError(f"{where}.{key}: must be a finite number")
    return v


def _kind_name(kinds) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "true or false",
             list: "a list", dict: "an object"}
    return " or ".join(dict.fromkeys(names[k] for k in kinds))


_NUM = (int, float)


@dataclass
class ClaimsBook:
    """One paper's claims file, checked."""
    path: Path
    protocol: str
    paper: Dict[str, Any]
    figures: Dict[str, Dict[str, Any]]
    claims: List[Dict[str, Any]]

    def figure_claims(self, stem: str) -> List[Dict[str, Any]]:
        """The claims whose number our figure `stem` gives."""
        return [c for c in self.claims if stem in figures_of(c)]


def figures_of(claim: Dict[str, Any]) -> List[str]:
    """The figure stems a claim reads our number from (none unless it runs)."""
    if claim.get("scope") != "in" or claim.get("status") != "runs":
        return []
    return sorted({p["figure"] for p in _points(claim.get("ours"), claim.get("kind"))})


def _points(ours: Optional[Dict[str, Any]], kind: Optional[str]) -> List[Dict[str, Any]]:
    """Every figure point a claim's `ours` names."""
    if not ours:
        return []
    pts = list(ours["items"].values()) if kind == "ordering" else [ours]
    out: List[Dict[str, Any]] = []
    for p in pts:
        out.extend([p["numerator"], p["denominator"]] if "numerator" in p else [p])
    return out


def load(path, repo: Path = _REPO) -> ClaimsBook:
    """Reads and checks one claims file (ClaimsError names what is wrong)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ClaimsError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ClaimsError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    try:
        return _check_book(path, doc, repo)
    except ClaimsError as e:
        raise ClaimsError(f"{path}: {e}") from None


def find_all(repo: Path = _REPO, protocol: Optional[str] = None) -> List[ClaimsBook]:
    """Every scenarios/<protocol>/paper-claims.json, in folder order."""
    files = sorted((repo / "scenarios").glob("*/paper-claims.json"))
    if protocol is not None:
        files = [f for f in files if f.parent.name == protocol]
        if not files:
            raise ClaimsError(f"--protocol: no claims file for \"{protocol}\" "
                              f"(scenarios/{protocol}/paper-claims.json)")
    return [load(f, repo) for f in files]


def paper_value(protocol: str, claim_id: str, repo: Path = _REPO) -> float:
    """The paper's number of one claim (scenarios/<protocol>/paper-claims.json),
    for scripts that print it: the claims file is the only place it is typed."""
    for book in find_all(repo, protocol):
        for c in book.claims:
            if c["id"] == claim_id:
                v = c.get("paper", {}).get("value")
                if not isinstance(v, (int, float)):
                    raise ClaimsError(f"{book.path}: claims[\"{claim_id}\"].paper.value: not a number")
                return v
    raise ClaimsError(f"scenarios/{protocol}/paper-claims.json: no claim \"{claim_id}\"")


def _check_book(path: Path, doc: Any, repo: Path) -> ClaimsBook:
    if not isinstance(doc, dict):
        raise ClaimsError("the file must hold a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ClaimsError(f"schema: must be \"{SCHEMA}\", got {json.dumps(doc.get('schema'))}")
    paper = _need(doc, "paper", dict, "")
    for k in ("id", "name", "title", "venue", "text"):
        _need(paper, k, str, "paper", optional=k == "name")
    figures = _need(doc, "figures", dict, "")
    for stem, f in figures.items():
        _check_figure(stem, f, repo)
    claims = _need(doc, "claims", list, "")
    seen = set()
    for i, c in enumerate(claims):
        cid = _check_claim(c, f"claims[{i}]", figures)
        if cid in seen:
            raise ClaimsError(f"claims[{i}].id: \"{cid}\" is used twice")
        seen.add(cid)
    return ClaimsBook(path, path.parent.name, paper, figures, claims)


def _check_figure(stem: str, f: Any, repo: Path) -> None:
    where = f"figures.{stem}"
    for key, optional in (("script", False), ("scenario", False), ("small_scenario", True)):
        p = _need(f, key, str, where, optional)
        if p is not None and not (repo / p).is_file():
            raise ClaimsError(f"{where}.{key}: no such file \"{p}\"")
    _need(f, "analytic", bool, where, optional=True)  # true: the script simulates nothing (no runs, no seeds)
    # Data files the script reads besides its scenario (their hashes join the results' provenance).
    data = _need(f, "data", list, where, optional=True) or []
    for i, p in enumerate(data):
        if not isinstance(p, str) or not (repo / p).is_file():
            raise ClaimsError(f"{where}.data[{i}]: no such file {json.dumps(p)}")
    scaling = f.get("scaling")
    if scaling is not None and not (isinstance(scaling, str) and scaling.strip()) and not isinstance(scaling, dict):
        raise ClaimsError(f"{where}.scaling: must be null, a text or an object with \"rule\"")
    if isinstance(scaling, dict):
        _need(scaling, "rule", str, f"{where}.scaling")
        _need(scaling, "factor", _NUM, f"{where}.scaling", optional=True)


def _check_claim(c: Any, where: str, figures: Dict[str, Any]) -> str:
    cid = _need(c, "id", str, where)
    if not _ID.match(cid):
        raise ClaimsError(f"{where}.id: \"{cid}\" must be lower-case letters, digits, '-' and '.'")
    where = f"claims[\"{cid}\"]"
    src = _need(c, "source", dict, where)
    _need(src, "where", str, f"{where}.source")
    _need(src, "quote", str, f"{where}.source")
    _need(src, "page", (int, str), f"{where}.source", optional=True)
    _need(c, "setup", str, where)
    scope = _need(c, "scope", str, where)
    if scope not in ("in", "out"):
        raise ClaimsError(f"{where}.scope: must be \"in\" or \"out\", got \"{scope}\"")
    if scope == "out":
        _need(c, "why_out", str, where)
        return cid
    kind = _need(c, "kind", str, where)
    if kind not in KINDS:
        raise ClaimsError(f"{where}.kind: must be one of {', '.join(KINDS)}, got \"{kind}\"")
    _check_paper(kind, _need(c, "paper", dict, where), f"{where}.paper")
    status = _need(c, "status", str, where)
    if status != "runs" and not status.startswith("not reproduced: "):
        raise ClaimsError(f"{where}.status: must be \"runs\" or \"not reproduced: <what is missing>\"")
    tol = _need(c, "tolerance", _NUM, where, optional=True)
    if tol is not None and not 0 < tol < 1:
        raise ClaimsError(f"{where}.tolerance: must be in (0, 1), got {tol}")
    if status == "runs":
        _check_ours(kind, _need(c, "ours", dict, where), f"{where}.ours", figures, c["paper"])
    _check_small(c, where, figures)
    return cid


def _check_paper(kind: str, p: Dict[str, Any], where: str) -> None:
    if kind in ("value", "ratio", "bound"):
        # A number the paper states but its text lost (a figure label), or a bound
        # given as a formula: null, and "missing" or "formula" says which.
        if p.get("value") is None and "value" in p:
            if not isinstance(p.get("formula"), str):
                _need(p, "missing", str, where)
        else:
            _need(p, "value", _NUM, where)
    if kind in ("value", "bound", "series"):
        _need(p, "unit", str, where)
    if kind == "ratio":
        _need(p, "of", str, where)
    if kind == "bound":
        op = _need(p, "op", str, where)
        if op not in ("<=", ">="):
            raise ClaimsError(f"{where}.op: must be \"<=\" or \">=\", got \"{op}\"")
    if kind == "series":
        pts = _need(p, "points", list, where)
        if len(pts) < 2:
            raise ClaimsError(f"{where}.points: a series needs 2 or more [x, y] points")
        for j, pt in enumerate(pts):
            if not (isinstance(pt, list) and len(pt) == 2 and isinstance(pt[0], (int, float, str))
                    and isinstance(pt[1], _NUM) and not isinstance(pt[1], bool)):
                raise ClaimsError(f"{where}.points[{j}]: must be [x, y] with a number y")
    if kind == "ordering":
        order = _need(p, "order", list, where)
        if len(order) < 2 or not all(isinstance(o, str) and o for o in order) or len(set(order)) != len(order):
            raise ClaimsError(f"{where}.order: must list 2 or more distinct labels, best first")
        better = _need(p, "better", str, where)
        if better not in ("higher", "lower"):
            raise ClaimsError(f"{where}.better: must be \"higher\" or \"lower\", got \"{better}\"")
        _need(p, "metric", str, where)
    read = p.get("read")
    if read is not None and not (isinstance(read, str) and read.split(":")[0] in ("text", "plot", "table")):
        raise ClaimsError(f"{where}.read: must be \"text\", \"plot\" or \"table\" (a note may follow a ':'), "
                          f"got {json.dumps(read)}")


def _check_point(pt: Any, where: str, figures: Dict[str, Any], with_x: bool = True) -> None:
    if with_x and isinstance(pt, dict) and "numerator" in pt:  # a quotient of two points
        for k in ("numerator", "denominator"):
            _check_point(_need(pt, k, dict, where), f"{where}.{k}", figures)
        return
    _need(pt, "column", str, where, optional=True)
    fig = _need(pt, "figure", str, where)
    if fig not in figures:
        raise ClaimsError(f"{where}.figure: \"{fig}\" is not in this file's \"figures\"")
    _need(pt, "panel", str, where)
    _need(pt, "series", str, where)
    if with_x:
        _need(pt, "x", (int, float, str), where)
    scale = _need(pt, "scale", _NUM, where, optional=True)
    if scale is not None and scale == 0:
        raise ClaimsError(f"{where}.scale: must not be 0")


def _check_ours(kind: str, ours: Dict[str, Any], where: str, figures: Dict[str, Any], paper: Dict[str, Any],
                subset: bool = False) -> None:
    """subset: an ordering's reduced run may compare 2 or more of the paper's labels."""
    if kind == "ratio":
        for k in ("numerator", "denominator"):
            _check_point(_need(ours, k, dict, where), f"{where}.{k}", figures)
    elif kind == "ordering":
        items = _need(ours, "items", dict, where)
        if subset and (len(items) < 2 or not set(items) <= set(paper["order"])):
            raise ClaimsError(f"{where}.items: must name 2 or more of the labels of paper.order")
        if not subset and sorted(items) != sorted(paper["order"]):
            raise ClaimsError(f"{where}.items: must name exactly the labels of paper.order")
        for label, pt in items.items():
            _check_point(pt, f"{where}.items[\"{label}\"]", figures)
    else:
        _check_point(ours, where, figures, with_x=kind != "series")


def _check_small(c: Dict[str, Any], where: str, figures: Dict[str, Any]) -> None:
    small = c.get("small")
    if small is None:
        return
    w = f"{where}.small"
    survives = _need(small, "survives", bool, w)
    _need(small, "why", str, w)
    if survives:
        v = _need(small, "verdict", str, w)
        if v not in VERDICTS and not v.startswith("within"):
            raise ClaimsError(f"{w}.verdict: must be one of within, {', '.join(VERDICTS[1:7])}; got \"{v}\"")
    if small.get("ours") is not None:
        _check_ours(c["kind"], small["ours"], f"{w}.ours", figures, c["paper"], subset=True)


# ----------------------------------------------------------------- our numbers

def _same_x(a: Any, b: Any) -> bool:
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    return fa == fb or abs(fa - fb) <= 1e-9 * max(abs(fa), abs(fb))


class FigureTables:
    """The figure CSVs of one output directory (`OUT/<stem>.csv`), or of a
    map stem -> CSV path (the committed results, inasim.results_store), read
    on first use; only the simulated rows (kind "sim")."""

    def __init__(self, out_dir: Path, paths: Optional[Dict[str, Path]] = None):
        self.out_dir = Path(out_dir)
        self._paths = paths
        self._rows: Dict[str, Optional[List[Dict[str, str]]]] = {}

    def path(self, stem: str) -> Path:
        if self._paths is not None:
            return self._paths.get(stem, self.out_dir / f"{stem}.csv")
        return self.out_dir / f"{stem}.csv"

    def rows(self, stem: str) -> Optional[List[Dict[str, str]]]:
        if stem not in self._rows:
            path = self.path(stem)
            if not path.is_file():
                self._rows[stem] = None
            else:
                with open(path, newline="", encoding="utf-8") as f:
                    self._rows[stem] = [r for r in csv.DictReader(f) if r.get("kind") == "sim"]
        return self._rows[stem]

    def series(self, pt: Dict[str, Any]) -> Optional[List[Tuple[str, float]]]:
        """(x, y) of a point's series, or None when its figure did not run."""
        rows = self.rows(pt["figure"])
        if rows is None:
            return None
        scale, col = pt.get("scale", 1), pt.get("column", "y")
        return [(r["x"], float(r[col]) * scale) for r in rows
                if r["panel"] == pt["panel"] and r["series"] == pt["series"] and r.get(col) not in (None, "", "nan")]

    def value(self, pt: Dict[str, Any]) -> Optional[float]:
        """Our y (or `column`) at the point, or None when it is not in the
        CSV; a {"numerator", "denominator"} pair gives their quotient."""
        if "numerator" in pt:
            a, b = self.value(pt["numerator"]), self.value(pt["denominator"])
            return None if a is None or b is None or b == 0 else a / b
        got = self.series(pt)
        if not got:
            return None
        hits = [y for x, y in got if _same_x(x, pt["x"])]
        return hits[0] if len(hits) == 1 else None

    def seeds(self, pt: Dict[str, Any]) -> Optional[List[float]]:
        """Our value at the point at each seed it was run at (the column
        "<column>_seeds"), or None when it was run at one seed (or is a
        quotient of two points)."""
        rows = self.rows(pt["figure"]) if "numerator" not in pt else None
        if not rows:
            return None
        col, scale = pt.get("column", "y") + "_seeds", pt.get("scale", 1)
        hits = [r.get(col) or "" for r in rows
                if r["panel"] == pt["panel"] and r["series"] == pt["series"] and _same_x(r["x"], pt["x"])]
        if len(hits) != 1 or not hits[0].strip():
            return None
        return [float(v) * scale for v in hits[0].split()]


# ----------------------------------------------------------------- verdicts

@dataclass
class Verdict:
    verdict: str
    paper: str          # the paper's number(s) or claim, as text
    ours: str           # ours, as text ("" when not run)
    ratio: Optional[float]  # ours / paper (series: the point furthest from 1)
    note: str = ""


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return ""
    if v == 0:
        return "0"
    return f"{v:.4g}"


def _sign(a: float, b: float, tol: float) -> int:
    """The direction from a to b, 0 when they differ by less than tol (relative)."""
    scale = max(abs(a), abs(b))
    if scale == 0 or abs(b - a) <= tol * scale:
        return 0
    return 1 if b > a else -1


def evaluate(claim: Dict[str, Any], tables: FigureTables, small: bool = False) -> Verdict:
    """The verdict of one claim against the figure CSVs in `tables`."""
    paper = claim.get("paper", {})
    if claim["scope"] == "out":
        return Verdict("out of scope", "", "", None, claim["why_out"])
    text = _paper_text(claim["kind"], paper)
    if claim["status"] != "runs":
        return Verdict("not run", text, "", None, claim["status"])
    ours = claim["ours"]
    if small:
        s = claim.get("small") or {}
        if not s.get("survives", False):
            return Verdict("not run", text, "", None, "does not survive the reduced run: " + s.get("why", "not stated"))
        ours = s.get("ours") or ours
    tol = claim.get("tolerance", DEFAULT_TOLERANCE)
    if claim["kind"] in ("value", "ratio", "bound") and paper.get("value") is None:
        why = f"a formula ({paper['formula']})" if paper.get("formula") else "the paper's number: " + paper["missing"]
        return Verdict("not run", text, "", None, why)
    if claim["kind"] == "ordering" and ours is not claim["ours"]:  # the reduced run's own points: say their x
        return _eval_ordering(paper, ours, tables, tol, text, show_x=True)
    return _EVALUATE[claim["kind"]](paper, ours, tables, tol, text)


def _paper_text(kind: str, p: Dict[str, Any]) -> str:
    unit = f" {p['unit']}" if p.get("unit") else ""
    approx = "~" if p.get("read") == "plot" else ""
    if kind in ("value", "ratio", "bound") and p.get("value") is None:
        return f"{p.get('op', '')} {p['formula']}".strip() if p.get("formula") else "(lost from the text)"
    if kind == "value":
        return f"{approx}{_fmt(p['value'])}{unit}"
    if kind == "ratio":
        return f"{approx}{_fmt(p['value'])}x ({p['of']})"
    if kind == "bound":
        return f"{p['op']} {_fmt(p['value'])}{unit}"
    if kind == "series":
        return approx + ", ".join(f"{x}: {_fmt(y)}" for x, y in p["points"]) + unit
    return f"best first: {', '.join(p['order'])} ({p['metric']}, {p['better']} is better)"


def _missing(text: str, what: str) -> Verdict:
    return Verdict("not run", text, "", None, what)


def _eval_value(p, ours, tables, tol, text) -> Verdict:
    v = tables.value(ours)
    if v is None:
        return _missing(text, _where_missing(tables, ours))
    r = v / p["value"] if p["value"] else None
    ok = r is not None and abs(r - 1) <= tol
    return Verdict(within_label(tol) if ok else "off", text, _fmt(v), r)


def _eval_ratio(p, ours, tables, tol, text) -> Verdict:
    mine = tables.value(ours)
    if mine is None:
        return _missing(text, _where_missing(tables, ours))
    r = mine / p["value"]
    if abs(r - 1) <= tol:
        v = within_label(tol)
    elif p["value"] == 1:  # "A matches B": no side of 1 to get right or reverse
        v = "off"
    elif (mine > 1) == (p["value"] > 1) and mine != 1:
        v = "trend right"
    else:
        v = "reversed"
    return Verdict(v, text, f"{_fmt(mine)}x", r)


def _eval_series(p, ours, tables, tol, text) -> Verdict:
    got = tables.series(ours)
    if not got:
        return _missing(text, _where_missing(tables, ours))
    pairs = []
    for x, y in p["points"]:
        hits = [v for gx, v in got if _same_x(gx, x)]
        if len(hits) == 1:
            pairs.append((x, y, hits[0]))
    if not pairs:
        return _missing(text, f"no x of the paper's points in {ours['figure']}.csv's \"{ours['series']}\"")
    ratios = [m / y if y else math.inf for _, y, m in pairs]
    worst = max(ratios, key=lambda r: abs(r - 1))
    ours_text = ", ".join(f"{x}: {_fmt(m)}" for x, _, m in pairs)
    note = "" if len(pairs) == len(p["points"]) else f"{len(pairs)} of {len(p['points'])} points run"
    if all(abs(r - 1) <= tol for r in ratios):
        return Verdict(within_label(tol), text, ours_text, worst, note)
    signs = [(_sign(y0, y1, tol), _sign(m0, m1, tol)) for (_, y0, m0), (_, y1, m1) in zip(pairs, pairs[1:])]
    if any(sp * so < 0 for sp, so in signs):
        v = "reversed"
    elif signs and all(sp == so for sp, so in signs):
        v = "trend right"
    else:
        v = "off"
    return Verdict(v, text, ours_text, worst, note)


def _eval_ordering(p, ours, tables, tol, text, show_x: bool = False) -> Verdict:
    vals = {}
    order = [label for label in p["order"] if label in ours["items"]]  # a reduced run may compare fewer
    for label in order:
        v = tables.value(ours["items"][label])
        if v is None:
            return _missing(text, f"\"{label}\": " + _where_missing(tables, ours["items"][label]))
        vals[label] = v
    mine = _ranked(vals, p["better"])
    ours_text = ", ".join(f"{_item_label(k, ours['items'][k]) if show_x else k}: {_fmt(vals[k])}" for k in mine)
    per_seed = _seed_orders(order, ours["items"], tables, p["better"])
    if per_seed is None:
        return Verdict("trend right" if mine == order else "reversed", text, ours_text, None)
    agree = sum(o == order for o in per_seed)
    note = f"the paper's order at {agree} of {len(per_seed)} seeds"
    ours_text += f" (means of {len(per_seed)} seeds)"
    if agree == len(per_seed):
        return Verdict("trend right", text, ours_text, None, note)
    return Verdict("reversed" if agree == 0 else "seeds split", text, ours_text, None, note)


def _ranked(vals: Dict[str, float], better: str) -> List[str]:
    return sorted(vals, key=lambda k: vals[k], reverse=better == "higher")


def _seed_orders(order: List[str], items: Dict[str, Any], tables: "FigureTables",
                 better: str) -> Optional[List[List[str]]]:
    """Our order at each seed, when every item was run at the same number
    (>= 2) of seeds; else None (the means decide alone)."""
    seeds = [tables.seeds(items[label]) for label in order]
    if any(s is None for s in seeds) or len({len(s) for s in seeds}) != 1 or len(seeds[0]) < 2:
        return None
    return [_ranked({label: s[i] for label, s in zip(order, seeds)}, better) for i in range(len(seeds[0]))]


def _item_label(label: str, pt: Dict[str, Any]) -> str:
    """An ordering item's label, with the x it was read at when the label
    does not say it (a reduced run reads "pool 512" at pool 256)."""
    x = pt.get("x")
    if x is None or "numerator" in pt or str(_x_text(x)) in label:
        return label
    return f"{label} (x = {_x_text(x)})"


def _x_text(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _eval_bound(p, ours, tables, tol, text) -> Verdict:
    v = tables.value(ours)
    if v is None:
        return _missing(text, _where_missing(tables, ours))
    holds = v <= p["value"] if p["op"] == "<=" else v >= p["value"]
    return Verdict("holds" if holds else "violated", text, _fmt(v), v / p["value"] if p["value"] else None)


_EVALUATE = {"value": _eval_value, "ratio": _eval_ratio, "series": _eval_series,
             "ordering": _eval_ordering, "bound": _eval_bound}


def _where_missing(tables: FigureTables, pt: Dict[str, Any]) -> str:
    if "numerator" in pt:
        num, den = pt["numerator"], pt["denominator"]
        if tables.value(num) is None:
            return _where_missing(tables, num)
        return _where_missing(tables, den) if tables.value(den) is None else "our denominator is 0"
    if tables.rows(pt["figure"]) is None:
        return f"{tables.path(pt['figure'])} not there (run the figure)"
    x = f" at x = {pt['x']}" if "x" in pt else ""
    return f"no row of panel {pt['panel']}, series \"{pt['series']}\"{x} in {pt['figure']}.csv"


# ----------------------------------------------------------------- plot references

def reference_series(book: ClaimsBook, stem: str, panel: str) -> List[Tuple[str, List[Any], List[float], str]]:
    """The paper's numbers to draw on panel `panel` of figure `stem`:
    (our series label, xs, ys, source) for every value and series claim that
    points there, the ys in our plot's unit."""
    out: Dict[str, Tuple[List[Any], List[float], str]] = {}
    short = book.paper.get("name") or book.paper["id"].split("-")[0]
    for c in book.claims:
        if c.get("status") != "runs" or c.get("kind") not in ("value", "series") or not c.get("ours"):
            continue
        pt = c["ours"]
        if pt.get("figure") != stem or pt["panel"] != panel or pt.get("column", "y") != "y":  # only what is on the axes
            continue
        scale = pt.get("scale", 1)
        pts = c["paper"]["points"] if c["kind"] == "series" else [[pt["x"], c["paper"]["value"]]]
        xs, ys, _ = out.setdefault(pt["series"], ([], [], f"{short} {c['source']['where']}"))
        for x, y in pts:
            xs.append(x)  # a category (a bar chart's metric column) stays a string
            ys.append(y / scale)
    return [(label, xs, ys, src) for label, (xs, ys, src) in out.items()]
