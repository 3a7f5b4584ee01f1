"""`inasim compare`: the same scenario run once per protocol, side by side.

    python3 -m inasim.compare SCENARIO.json --protocols ring[,other...] [--set PATH=VALUE]...
        [--seed N] [--out DIR] [--format md|html] [--progress auto|on|off] [--quiet]
    python3 -m inasim compare ...            (the same)

    from inasim.compare import compare
    df = compare("scenarios/default.json", ["ring"], sets=["workload.bytes=262144"])

Every protocol runs on the same network, workload size, background traffic and
seed: the scenario is loaded, the `--set` overrides are applied, then each
protocol's entry in `PROTOCOLS` edits a copy so that the workload uses that
protocol. Everything is validated, and each protocol's network and workload
set up (inasim.check), before anything runs; so is the output directory. Output (default
OUT = out/compare/<scenario name>, relative to the working directory):

    OUT/report.md (or report.html)   title, scenario, inasim version, the table, the charts
    OUT/compare.csv                  the table (the DataFrame compare() returns)
    OUT/time.png, OUT/goodput.png    bar charts per protocol (plot.bar_table; + .csv each)
    OUT/<protocol>/                  each run's results.json, CSVs, summary.txt

Table columns (compare.csv / DataFrame): `protocol`; `collective` (what one
collective of the protocol is, `workload.collective_unit`: "iteration",
"tensor", "op"); `time_s` (mean collective duration, first rank's start to
last rank's end, `workload.mean_duration_s`); `goodput_gbps`
(`workload.goodput_gbps`: bytes x 8 / time / 1e9); `wire_bytes_per_host` (`network.host_link_wire_bytes` /
`workload.ranks`: what each participating host sent plus received on its link,
framing included, SwitchML's per-worker measure (INA 2|U|, ring
4|U|(n-1)/n); background traffic on those links is included); `bg_fct_p99_s` (`background.flows.fct.all.fct_s.p99`, NaN in the
CSV and "—" in the report without background flows); `correct` (results.json
`correct`; "yes"/"no" in the report).

Exit status of the command: 0 every run correct; 1 some run not correct (or
its workload did not finish) - the report is still written; 2 bad input
(unknown protocol, bad scenario or --set, a setup error, an --out that is a
file or cannot be created, bad option): nothing is written.

Registered: every allreduce protocol of the build's registry (one folder
each under protocols/, `inasim protocols`), the ring first (the baseline),
then in folder order. Each one's edit (`_registry_edit`) keeps the keys every
allreduce shares and the sections the protocol reads (its own
`workload.<name>`, and e.g. PANAMA's `workload.ring` for ring jobs), and
moves `dtype` / `data` to ones the protocol accepts when the scenario's are
not (PANAMA: dtype float32; Canary, static trees, P4SGD: int32), so one base
scenario can carry every protocol's tuning. A variant can be added by hand,
e.g. (how `switchml` could pin its pool size):

    @register("switchml-64")
    def _switchml_64(doc: dict) -> None:
        PROTOCOLS["switchml"](doc)
        doc["workload"].setdefault("switchml", {})["pool_size"] = 64

A protocol that also needs switch or topology settings may edit any other
part of the document. Every column comes from results.json's core keys, the
same for every protocol (docs/SCENARIO.md, "results.json"): no protocol is
read differently. What `time_s` measures is one collective of each protocol
(`collective`: P4SGD's is one 8 x int32 allreduce, whatever its task).
"""

from __future__ import annotations

import argparse
import copy
import html
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import inasim
from inasim._outdir import make_out_dir, out_dir_problem, write_atomic

__all__ = ["PROTOCOLS", "COLUMNS", "HEADERS", "CompareError", "UnknownProtocolError", "register",
           "parse_protocols", "protocol_scenario", "row_from_results", "compare", "main"]

#: Keys of an allreduce workload that do not depend on the protocol (docs/SCENARIO.md).
ALLREDUCE_COMMON_KEYS = ("type", "protocol", "hosts", "bytes", "dtype", "data", "iterations",
                         "compute_gap_us", "start_us")


def _use_allreduce(doc: dict, protocol: str, sections: Sequence[str] = ()) -> None:
    """Makes doc's workload an allreduce with `protocol`, keeping the common
    allreduce keys and the `workload.<protocol>` section (and `sections`),
    dropping the rest."""
    w = doc.get("workload")
    if not isinstance(w, dict):
        w = {}
    keep = {protocol, *sections}
    kept = {k: v for k, v in w.items() if k in ALLREDUCE_COMMON_KEYS or k in keep}
    kept["type"] = "allreduce"
    kept["protocol"] = protocol
    doc["workload"] = kept


def registry() -> List[dict]:
    """The build's protocol registry: every protocols/<name>/protocol.json."""
    import _inasim

    return json.loads(_inasim.protocols())


def _registry_edit(meta: Mapping[str, Any]) -> Callable[[dict], None]:
    """The scenario edit of one registered allreduce protocol (see the module doc)."""
    sections = [meta["section"], *meta.get("also_reads", [])]

    def edit(doc: dict) -> None:
        _use_allreduce(doc, meta["name"], [s for s in sections if s])
        w = doc["workload"]
        if meta["dtypes"] and w.get("dtype", "int32") not in meta["dtypes"]:
            w["dtype"] = meta["dtypes"][0]
        if meta["data"] and w.get("data", "hashed") not in meta["data"]:
            w["data"] = "hashed"

    edit.__name__ = f"_{meta['name']}"
    edit.__doc__ = meta["summary"]
    return edit


def _registered() -> Dict[str, Callable[[dict], None]]:
    allreduce = [m for m in registry() if m["workload_type"] == "allreduce"]
    allreduce.sort(key=lambda m: (not m["default"], m["name"]))  # the baseline (the default protocol) first
    return {m["name"]: _registry_edit(m) for m in allreduce}


#: protocol name -> function editing a scenario document in place so that the
#: workload uses that protocol. Insertion order is the default comparison order.
PROTOCOLS: Dict[str, Callable[[dict], None]] = _registered()


def register(name: str) -> Callable[[Callable[[dict], None]], Callable[[dict], None]]:
    """Decorator: ``@register("switchml-64") def _switchml_64(doc): ...``."""
    def deco(fn: Callable[[dict], None]) -> Callable[[dict], None]:
        PROTOCOLS[name] = fn
        return fn

    return deco


#: Columns of the table (compare.csv, the returned DataFrame), in order.
COLUMNS = ("protocol", "collective", "time_s", "goodput_gbps", "wire_bytes_per_host", "bg_fct_p99_s", "correct")
#: Their headers in the report.
HEADERS = {
    "protocol": "protocol",
    "collective": "collective",
    "time_s": "time (s)",
    "goodput_gbps": "goodput (Gb/s)",
    "wire_bytes_per_host": "bytes on the wire per host (bytes)",
    "bg_fct_p99_s": "background p99 FCT (s)",
    "correct": "correct",
}
FORMATS = ("md", "html")
DASH = "—"


class CompareError(ValueError):
    """Bad input to compare (the CLI prints it and exits 2; nothing is written)."""


class UnknownProtocolError(CompareError):
    """A protocol name that is not in PROTOCOLS; the message lists the known ones."""


def parse_protocols(protocols: Union[str, Iterable[str]]) -> List[str]:
    """"ring,switchml" or ["ring", "switchml"] -> checked, de-duplicated list."""
    if isinstance(protocols, str):
        items = protocols.split(",")
    else:
        items = []
        for p in protocols:
            items.extend(str(p).split(","))
    names: List[str] = []
    for p in (s.strip() for s in items):
        if not p:
            continue
        if p not in PROTOCOLS:
            raise UnknownProtocolError(
                f'unknown protocol "{p}" (known protocols: {", ".join(PROTOCOLS)})')
        if p not in names:
            names.append(p)
    if not names:
        raise CompareError(f"no protocol given (known protocols: {', '.join(PROTOCOLS)})")
    return names


def protocol_scenario(doc: Mapping, protocol: str) -> dict:
    """A deep copy of `doc` edited by PROTOCOLS[protocol]."""
    if protocol not in PROTOCOLS:
        parse_protocols([protocol])  # raises with the list of known ones
    d = copy.deepcopy(dict(doc))
    PROTOCOLS[protocol](d)
    return d


def _get(d: Any, path: str) -> Any:
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _num(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def row_from_results(protocol: str, results: Mapping) -> Dict[str, Any]:
    """One table row from a results.json document (its core keys only)."""
    w = results.get("workload", {})
    measured = _num(w.get("collectives_completed")) > 0 and _num(w.get("mean_duration_s")) > 0
    hosts = _num(w.get("ranks"))
    wire = _num(_get(results, "network.host_link_wire_bytes"))
    return {
        "protocol": protocol,
        "collective": w.get("collective_unit", ""),
        "time_s": _num(w.get("mean_duration_s")) if measured else math.nan,
        "goodput_gbps": _num(w.get("goodput_gbps")) if measured else math.nan,
        "wire_bytes_per_host": wire / hosts if hosts > 0 else math.nan,
        "bg_fct_p99_s": _num(_get(results, "background.flows.fct.all.fct_s.p99")),
        "correct": results.get("correct") is True,
    }


# ------------------------------------------------------------------ report


def _fmt(column: str, v: Any) -> str:
    if column in ("protocol", "collective"):
        return str(v)
    if column == "correct":
        return "yes" if v else "no"
    x = _num(v)
    if math.isnan(x):
        return DASH
    if column == "goodput_gbps":
        return f"{x:.2f}"
    if column == "wire_bytes_per_host":
        return f"{x:,.0f}"
    return f"{x:.4g}"


def _human_bytes(b: Any) -> str:
    b = int(b)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            v = b / size
            return f"{v:g} {unit}" if v == int(v) else f"{v:.2f} {unit}"
    return f"{b} B"


def _context(resolved: Mapping, results: Mapping, scenario_label: str, sets: Sequence[str]) -> List[tuple]:
    """(key, value) lines describing what was compared."""
    topo = results.get("topology", {})
    links = resolved.get("links", {})
    w = results.get("workload", {})
    items = [
        ("scenario", scenario_label),
        ("overrides", " ".join(f"--set {s}" for s in sets) if sets else "none"),
        ("seed", str(resolved.get("seed"))),
        ("network", f"{topo.get('description')}: {topo.get('hosts')} hosts, {topo.get('switches')} switch(es), "
                    f"{links.get('host_rate_gbps'):g} Gb/s host links, {links.get('fabric_rate_gbps'):g} Gb/s fabric"),
    ]
    if w.get("type") == "allreduce":
        items.append(("workload", f"allreduce of {_human_bytes(w.get('bytes'))} ({resolved['workload'].get('dtype')}) "
                                  f"over {w.get('ranks')} ranks, "
                                  f"{w.get('collectives_requested')} {w.get('collective_unit')}(s)"))
    bg = resolved.get("background")
    if bg:
        parts = []
        f = bg.get("flows")
        if f:
            parts.append(f"TCP flows ({f.get('tcp', {}).get('variant')}), {f.get('size_distribution')} sizes at load "
                         f"{f.get('load'):g}, arrivals over [{f.get('start_us'):g}, {f.get('stop_us'):g}) us")
        c = bg.get("congestion")
        if c:
            parts.append(f"moving congestion, {_human_bytes(c.get('message_bytes'))} messages")
        items.append(("background", "; ".join(parts) or "none"))
    else:
        items.append(("background", "none"))
    items.append(("inasim", inasim.version()))
    return items


NOTES = [
    "collective: what one collective of the protocol is (`workload.collective_unit`)",
    "time: mean duration of one collective, first rank's start to last rank's end (`workload.mean_duration_s`)",
    "goodput: `workload.bytes` x 8 / time (`workload.goodput_gbps`)",
    "bytes on the wire per host: `network.host_link_wire_bytes` (both directions of every host link, framing "
    "and background traffic included) / `workload.ranks`: what a participating host sends plus receives",
    f"background p99 FCT: `background.flows.fct.all.fct_s.p99` ({DASH} without background flows)",
    "correct: every aggregate exact and every iteration finished (results.json `correct`)",
]


def _markdown(title, description, context, rows, images, protocols) -> str:
    out = [f"# {title}", ""]
    if description:
        out += [description, ""]
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in context] + [""]
    out += ["## Results", ""]
    out.append("| " + " | ".join(HEADERS[c] for c in COLUMNS) + " |")
    out.append("|" + "|".join("---" if c in ("protocol", "collective") else ":---:" if c == "correct" else "---:"
                              for c in COLUMNS) + "|")
    for r in rows:
        out.append("| " + " | ".join(_fmt(c, r[c]) for c in COLUMNS) + " |")
    out += [""] + [f"- {n}" for n in NOTES] + [""]
    for alt, file in images:
        out += [f"![{alt}]({file})", ""]
    out.append("Table as CSV: [compare.csv](compare.csv). Each run: "
               + ", ".join(f"[{p}/results.json]({p}/results.json)" for p in protocols) + ".")
    return "\n".join(out) + "\n"


def _html(title, description, context, rows, images, protocols) -> str:
    e = html.escape

    def code(s: str) -> str:  # `x` -> <code>x</code>
        parts = s.split("`")
        return "".join(f"<code>{e(p)}</code>" if i % 2 else e(p) for i, p in enumerate(parts))

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
           "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em}"
           "td.n{text-align:right}</style>", "</head><body>", f"<h1>{e(title)}</h1>"]
    if description:
        out.append(f"<p>{e(description)}</p>")
    out.append("<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in context) + "</table>")
    out.append("<h2>Results</h2>")
    out.append("<table><thead><tr>" + "".join(f"<th>{e(HEADERS[c])}</th>" for c in COLUMNS) + "</tr></thead><tbody>")
    for r in rows:
        cells = "".join(f'<td{"" if c in ("protocol", "collective", "correct") else " class=n"}>{e(_fmt(c, r[c]))}</td>'
                        for c in COLUMNS)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    out.append("<ul>" + "".join(f"<li>{code(n)}</li>" for n in NOTES) + "</ul>")
    for alt, file in images:
        out.append(f'<p><img src="{e(file)}" alt="{e(alt)}"></p>')
    out.append('<p>Table as CSV: <a href="compare.csv">compare.csv</a>. Each run: '
               + ", ".join(f'<a href="{e(p)}/results.json">{e(p)}/results.json</a>' for p in protocols) + ".</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ compare


def _check_out(out_dir: Path, names: Sequence[str], fmt: str) -> None:
    """CompareError unless out_dir can take the report, and creates it: the
    runs come first and take minutes, the report is written after them."""
    files = ["compare.csv", f"report.{fmt}"] + [f"{c}.{x}" for c in ("time", "goodput") for x in ("png", "csv")]
    problem = out_dir_problem(out_dir, files=files, dirs=names) or make_out_dir(out_dir)
    if problem:
        raise CompareError(f"out {os.fspath(out_dir)}: {problem}")


def compare(scenario: Union[str, os.PathLike, Mapping], protocols: Union[str, Iterable[str]],
            sets: Iterable[str] = (), out: Union[str, os.PathLike, None] = None, fmt: str = "md",
            seed: Optional[int] = None, base_dir: Union[str, os.PathLike, None] = None,
            progress: bool = False, log: Optional[Callable[[str], None]] = None):
    """Runs `scenario` once per protocol and writes the report; returns the
    table as a pandas DataFrame (columns COLUMNS, one row per protocol).

    scenario: a scenario file or dict; sets: `--set` overrides applied before
    each protocol's edit; seed: overrides the scenario's seed (the same for
    every protocol). out: default out/compare/<scenario name>. fmt: "md" or
    "html". log: called with one progress line per run (the CLI prints them).

    Raises CompareError / UnknownProtocolError or inasim.ScenarioError for bad
    input, before anything runs. DataFrame.attrs: "out", "report", "results"
    (protocol -> results.json dict).
    """
    import pandas as pd

    from inasim import plot

    names = parse_protocols(protocols)
    if fmt not in FORMATS:
        raise CompareError(f'format: must be one of {", ".join(FORMATS)}, got "{fmt}"')
    if isinstance(sets, str):
        sets = [sets]
    sets = list(sets)

    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        doc = inasim.load(path)
        if base_dir is None:
            base_dir = str(path.parent)
        label = os.fspath(scenario)
    elif isinstance(scenario, Mapping):
        doc = inasim.to_json_value(scenario)  # a deep copy; NaN is a ScenarioError naming its key
        label = "(inline scenario)"
    else:
        raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")
    for s in sets:
        inasim.apply_set(doc, s)

    # Validate every protocol's scenario, and build its network and workload
    # (inasim.check: errors only the setup finds), before running any.
    docs, resolved = {}, {}
    for p in names:
        docs[p] = protocol_scenario(doc, p)
        try:
            resolved[p] = inasim.check(docs[p], seed=seed, base_dir=base_dir)
        except inasim.ScenarioError as e:
            if len(names) == 1:
                raise
            raise type(e)(f"protocol {p}: {e}") from None
    first = resolved[names[0]]
    out_dir = Path(out) if out is not None else Path("out") / "compare" / first["name"]
    _check_out(out_dir, names, fmt)

    results, rows = {}, []
    for i, p in enumerate(names):
        if log:
            log(f"[{i + 1}/{len(names)}] {p} ...")
        r = inasim.run(docs[p], seed=seed, base_dir=base_dir, progress=progress)
        r.write(out_dir / p)
        results[p] = r.json
        row = row_from_results(p, r.json)
        rows.append(row)
        if log:
            log(f"[{i + 1}/{len(names)}] {p}: time {_fmt('time_s', row['time_s'])} s, "
                f"goodput {_fmt('goodput_gbps', row['goodput_gbps'])} Gb/s, "
                f"{'correct' if row['correct'] else 'NOT CORRECT'}")

    df = pd.DataFrame(rows, columns=list(COLUMNS))
    write_atomic(out_dir / "compare.csv", df.to_csv(index=False))

    name = first["name"]
    charts = pd.DataFrame({"protocol": df["protocol"], "time_us": df["time_s"] * 1e6,
                           "goodput_gbps": df["goodput_gbps"]})
    time_png, _ = plot.bar_table(charts, [("time_us", "time per collective", "µs")], out_dir / "time",
                                 title=f"{name}: time per protocol")
    goodput_png, _ = plot.bar_table(charts, [("goodput_gbps", "goodput", "Gb/s")], out_dir / "goodput",
                                    title=f"{name}: goodput per protocol")
    images = [("time per collective per protocol", time_png.name), ("goodput per protocol", goodput_png.name)]

    title = f"Protocol comparison: {name}"
    context = _context(first, results[names[0]], label, sets)
    render = _markdown if fmt == "md" else _html
    report = out_dir / f"report.{fmt}"
    write_atomic(report, render(title, first.get("description", ""), context, rows, images, names))

    df.attrs.update({"out": str(out_dir), "report": str(report), "results": results})
    return df


# ---------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="inasim compare",
        description="Run one scenario once per protocol (same network, workload, background, seed) "
                    "and write a comparison report.")
    ap.add_argument("scenario", help="scenario JSON file")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS),
                    help=f"comma-separated protocols (known: {', '.join(PROTOCOLS)}; default: all of them)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
                    help="override a scenario key, as inasim run --set (repeatable)")
    ap.add_argument("--seed", type=int, default=None, help="seed for every run (default: the scenario's)")
    ap.add_argument("--out", default=None, help="output directory (default out/compare/<scenario name>)")
    ap.add_argument("--format", dest="fmt", choices=FORMATS, default="md", help="report format (default md)")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                    help="the simulator's progress line on stderr (auto: when stderr is a terminal)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but errors")
    ap.add_argument("--list-protocols", action="store_true", help="print the known protocols and exit")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`inasim compare` / `python3 -m inasim.compare`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--list-protocols" in argv:
        for p, fn in PROTOCOLS.items():
            doc = (fn.__doc__ or "").strip().splitlines()
            print(f"{p}\t{doc[0] if doc else ''}")
        return 0
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse: usage errors are 2, --help is 0
        return int(e.code or 0) if not isinstance(e.code, str) else 2

    def err(msg: str) -> None:
        print(f"inasim compare: {msg}", file=sys.stderr)

    quiet = args.quiet
    progress = args.progress == "on" or (args.progress == "auto" and not quiet and sys.stderr.isatty())
    log = None if quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    try:
        df = compare(args.scenario, args.protocols, sets=args.sets, out=args.out, fmt=args.fmt,
                     seed=args.seed, progress=progress, log=log)
    except CompareError as e:
        err(str(e))
        return 2
    except inasim.ScenarioError as e:
        err(str(e))
        return 2
    if not quiet:
        shown = df.copy()
        for c in COLUMNS:
            shown[c] = [_fmt(c, v) for v in df[c]]
        print(shown.rename(columns=HEADERS).to_string(index=False))
        print(f"wrote {df.attrs['report']}")
    if not df["correct"].all():
        bad = ", ".join(df.loc[~df["correct"], "protocol"])
        err(f"not correct: {bad} (see {df.attrs['out']}/<protocol>/summary.txt)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
