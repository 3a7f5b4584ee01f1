"""`inasim compare`: one scenario, every protocol, side by side, on the same
network, with the same background flows (same seed) and the same faults.

    inasim compare SCENARIO.json [--protocols all|ring,switchml,...] [--repetitions N] [--jobs N]
        [--network shared|native] [--variant NAME=PROTOCOL:PATH=VALUE[;...]]...
        [--set PATH=VALUE]... [--seed N] [--out DIR]
        [--format md|html] [--progress auto|on|off] [--resume] [--quiet] [--list-protocols]

    from inasim.compare import compare
    df = compare("scenarios/compare/clos-64-small.json", "all", repetitions=3)

Each protocol's entry of the build's registry (protocols/<name>/protocol.json)
edits a copy of the scenario so that its workload uses that protocol
(`_registry_edit`: keeps the keys every allreduce shares and the protocol's
own sections, moves dtype / data to ones it accepts). A protocol that needs a
network setting (protocol.json `network`: Canary adaptive routing, PANAMA PFC
and ECN) gets it in every protocol's run (`--network shared`, the default,
said in the report), or only in its own (`--network native`, flagged as
comparing different networks). Repetition r runs every protocol with seed
S + r (S: --seed or the scenario's), so the background flows of one
repetition are the same for every protocol.

Before anything runs, every protocol's scenario is validated and set up
(inasim.check), and the fairness checks of inasim.fairness run; after the
runs, its post-run checks. Each finding is printed on stderr and listed in the
report. With `--protocols all`, a protocol whose setup rejects the scenario
(e.g. P4SGD beyond 32 workers) is left out with a finding; named explicitly,
it is an error (exit 2).

Output (default OUT = out/compare/<scenario name>):

    OUT/report.md (or .html)  context, fairness findings, tables (mean ± 95 % CI
                              with repetitions), charts, the command that regenerates it
    OUT/compare.csv           one row per run (protocol, repetition, seed, metrics:
                              inasim.compare_report.METRICS)
    OUT/summary.csv           per protocol and metric: n, missing, mean, std, ci95_low, ci95_high
    OUT/compare.json          scenario, resolved network edits, seeds, version, findings, command
    OUT/runs.json             run directory -> scenario sha256, version, build (--resume reuses a match)
    OUT/*.png + .csv          charts (plot.bar_table, with CI error bars)
    OUT/<protocol>/           each run (results.json, CSVs); with repetitions OUT/<protocol>-rep<r>/

Exit status: 0 every run correct and finished; 1 a run not correct or not
finished (the report is still written); 2 bad input (nothing is written).
Warnings do not change the status: read them.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import inasim
from inasim import compare_report as report
from inasim import fairness
from inasim._outdir import make_out_dir, out_dir_problem, write_atomic
from inasim._parallel_runs import Task, run_parallel, run_task

__all__ = ["PROTOCOLS", "COLUMNS", "CompareError", "UnknownProtocolError", "register", "parse_protocols",
           "protocol_scenario", "protocol_meta", "row_from_results", "command_line", "compare", "main"]

#: Keys of an allreduce workload that do not depend on the protocol (docs/SCENARIO.md).
ALLREDUCE_COMMON_KEYS = ("type", "protocol", "hosts", "bytes", "dtype", "data", "iterations",
                         "compute_gap_us", "start_us")


def _use_allreduce(doc: dict, protocol: str, sections: Sequence[str] = ()) -> None:
    """Makes doc's workload an allreduce with `protocol`: keeps the
    `workload.<protocol>` section (and `sections`), drops every other
    protocol's section, and keeps the rest when the workload was an allreduce
    already (the experiment's keys: bytes, hosts, jobs, job_split, ...: a
    protocol that cannot run the scenario's jobs is then rejected by
    validation, never silently given one job instead of sixteen); from another
    workload type, only the keys every allreduce shares."""
    w = doc.get("workload")
    if not isinstance(w, dict):
        w = {}
    keep = {protocol, *sections}
    every_section = {s for m in registry() for s in [m.get("section"), *m.get("also_reads", [])] if s}
    if w.get("type", "allreduce") == "allreduce":
        kept = {k: v for k, v in w.items() if k in keep or k not in every_section}
    else:
        kept = {k: v for k, v in w.items() if k in ALLREDUCE_COMMON_KEYS or k in keep}
    kept["type"] = "allreduce"
    kept["protocol"] = protocol
    doc["workload"] = kept


@functools.lru_cache(maxsize=None)
def _registry_text() -> str:
    import _inasim

    return _inasim.protocols()


def registry() -> List[dict]:
    """The build's protocol registry: every protocols/<name>/protocol.json."""
    return json.loads(_registry_text())


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




#: Columns of compare.csv (the returned DataFrame), in order.
COLUMNS = ("protocol", "repetition", "seed", "collective", *(m[0] for m in report.METRICS), "switch_memory_what",
           "correct", "finished")
FORMATS = ("md", "html")
NETWORK_MODES = ("shared", "native")
#: OUT/runs.json: run directory -> what ran there (for --resume).
RUNS_INDEX = "runs.json"


class CompareError(ValueError):
    """Bad input to compare (the CLI prints it and exits 2; nothing is written)."""


class UnknownProtocolError(CompareError):
    """A protocol name that is not in PROTOCOLS; the message lists the known ones."""


def parse_variant(text: str) -> Tuple[str, str, List[str]]:
    """"NAME=PROTOCOL:PATH=VALUE[;PATH=VALUE...]" -> (NAME, PROTOCOL, ["PATH=VALUE", ...]):
    a protocol run with some of its settings changed, compared as one more
    protocol (e.g. PANAMA without its congestion control, the paper's SwitchML*)."""
    name, _, rest = text.partition("=")
    base, _, sets = rest.partition(":")
    name, base = name.strip(), base.strip()
    if not name or not base or not sets.strip():
        raise CompareError(f'--variant: expected NAME=PROTOCOL:PATH=VALUE[;PATH=VALUE...], got "{text}"')
    if base not in PROTOCOLS:
        raise UnknownProtocolError(f'--variant {name}: unknown protocol "{base}" (known: {", ".join(PROTOCOLS)})')
    if name in PROTOCOLS:
        raise CompareError(f'--variant: "{name}" is already a protocol name')
    return name, base, [a.strip() for a in sets.split(";") if a.strip()]


def _variant_edit(base: str, sets: Sequence[str]) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        PROTOCOLS[base](doc)
        for a in sets:
            inasim.apply_set(doc, a)

    edit.__doc__ = f"{base} with {'; '.join(sets)}"
    return edit


def parse_protocols(protocols: Union[str, Iterable[str]]) -> List[str]:
    """"all", "ring,switchml" or ["ring", "switchml"] -> checked, de-duplicated list."""
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
        if p == "all":
            names.extend(n for n in PROTOCOLS if n not in names)
            continue
        if p not in PROTOCOLS:
            raise UnknownProtocolError(
                f'unknown protocol "{p}" (known protocols: {", ".join(PROTOCOLS)}, or "all")')
        if p not in names:
            names.append(p)
    if not names:
        raise CompareError(f"no protocol given (known protocols: {', '.join(PROTOCOLS)}, or \"all\")")
    return names


def _is_all(protocols: Union[str, Iterable[str]]) -> bool:
    items = protocols.split(",") if isinstance(protocols, str) else [str(p) for p in protocols]
    return any(s.strip() == "all" for s in items)


def protocol_scenario(doc: Mapping, protocol: str) -> dict:
    """A deep copy of `doc` edited by PROTOCOLS[protocol]."""
    if protocol not in PROTOCOLS:
        parse_protocols([protocol])  # raises with the list of known ones
    d = copy.deepcopy(dict(doc))
    PROTOCOLS[protocol](d)
    return d


def protocol_meta(doc: Mapping) -> Dict[str, Any]:
    """The registry entry of the protocol a (protocol-edited) scenario runs."""
    name = (doc.get("workload") or {}).get("protocol")
    return next((m for m in registry() if m["name"] == name), {})


def row_from_results(protocol: str, results: Mapping, meta: Optional[Mapping] = None,
                     repetition: int = 0) -> Dict[str, Any]:
    """One compare.csv row from a results.json document (inasim.compare_report)."""
    return report.row_from_results(protocol, results, meta, repetition)


# ------------------------------------------------------------------ setup


class _Plan:
    """What compare will run: the protocols kept, their scenarios (network
    edits applied), resolved scenarios, registry entries, and the findings."""

    def __init__(self):
        self.names: List[str] = []
        self.docs: Dict[str, dict] = {}
        self.resolved: Dict[str, dict] = {}
        self.metas: Dict[str, dict] = {}
        self.edits: Dict[str, dict] = {}
        self.findings: List[fairness.Finding] = []


def _load(scenario, base_dir):
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        doc = inasim.load(path)
        return doc, os.fspath(scenario), (str(path.parent) if base_dir is None else base_dir)
    if isinstance(scenario, Mapping):
        return inasim.to_json_value(scenario), "(inline scenario)", base_dir  # a deep copy; NaN named
    raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")


def _plan(doc: dict, names: List[str], explicit: bool, network: str, seed, base_dir) -> _Plan:
    plan = _Plan()
    docs = {p: protocol_scenario(doc, p) for p in names}
    metas = {p: protocol_meta(docs[p]) for p in names}
    try:
        edits, plan.findings = fairness.network_edits(metas, doc, network)
    except ValueError as e:
        raise CompareError(f"--network shared: {e}") from None
    for p in names:
        for path, value in edits[p].items():
            inasim.apply_set(docs[p], f"{path}={json.dumps(value)}")
        try:
            resolved = inasim.check(docs[p], seed=seed, base_dir=base_dir)
        except inasim.ScenarioError as e:
            if explicit and len(names) == 1:
                raise
            if explicit:
                raise type(e)(f"protocol {p}: {e}") from None
            plan.findings.append(fairness.Finding("not_applicable", f"{p} left out: {e}", p))
            continue
        plan.names.append(p)
        plan.docs[p], plan.resolved[p], plan.metas[p], plan.edits[p] = docs[p], resolved, metas[p], edits[p]
    if not plan.names:
        raise CompareError("no protocol accepts this scenario: " + "; ".join(f.message for f in plan.findings))
    plan.findings += fairness.pre_run(plan.metas, plan.resolved, base_dir)
    return plan


def _check_out(out_dir: Path, dirs: Sequence[str], fmt: str) -> None:
    """CompareError unless out_dir can take the report, and creates it: the
    runs come first and take minutes, the report is written after them."""
    stems = [c[0] for c in report.CHARTS]
    files = ["compare.csv", "summary.csv", "compare.json", RUNS_INDEX, f"report.{fmt}"] + [
        f"{c}.{x}" for c in stems for x in ("png", "csv")]
    problem = out_dir_problem(out_dir, files=files, dirs=dirs) or make_out_dir(out_dir)
    if problem:
        raise CompareError(f"out {os.fspath(out_dir)}: {problem}")


def _run_dir(protocol: str, rep: int, repetitions: int) -> str:
    return protocol if repetitions == 1 else f"{protocol}-rep{rep}"


@contextlib.contextmanager
def _variants_registered(parsed):
    """PROTOCOLS with the variants, for as long as compare sets them up."""
    for name, base, sets in parsed:
        PROTOCOLS[name] = _variant_edit(base, sets)
    try:
        yield
    finally:
        for name, _, _ in parsed:
            PROTOCOLS.pop(name, None)


def command_line(label: str, names: Sequence[str], all_: bool, repetitions: int, network: str,
                 sets: Sequence[str], seed, out, fmt: str, variants: Sequence[str] = ()) -> str:
    """The `inasim compare` command that regenerates a report."""
    import shlex

    binary = "build/inasim" if Path("build/inasim").exists() else "inasim"
    argv = [binary, "compare", label, "--protocols", "all" if all_ else ",".join(names)]
    for v in variants:
        argv += ["--variant", v]
    if repetitions != 1:
        argv += ["--repetitions", str(repetitions)]
    if network != "shared":
        argv += ["--network", network]
    for s in sets:
        argv += ["--set", s]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if out is not None:
        argv += ["--out", os.fspath(out)]
    if fmt != "md":
        argv += ["--format", fmt]
    return shlex.join(argv)


# ------------------------------------------------------------------ compare


def compare(scenario: Union[str, os.PathLike, Mapping], protocols: Union[str, Iterable[str]] = "all",
            sets: Iterable[str] = (), out: Union[str, os.PathLike, None] = None, fmt: str = "md",
            seed: Optional[int] = None, base_dir: Union[str, os.PathLike, None] = None,
            repetitions: int = 1, network: str = "shared", progress=False,
            log: Optional[Callable[[str], None]] = None, warn: Optional[Callable[[str], None]] = None,
            resume: bool = False, variants: Iterable[str] = (), jobs: int = 1):
    """Runs `scenario` once per protocol and repetition and writes the report;
    returns compare.csv as a pandas DataFrame (one row per run, COLUMNS).

    protocols: "all", "ring,canary" or a list. sets: `--set` overrides,
    applied before each protocol's edit. seed: base seed (default the
    scenario's); repetition r uses seed + r. network: "shared" or "native"
    (module doc). progress: as inasim.run's. log: one line per run; warn:
    each fairness finding (the CLI prints both on stderr). resume: reuse a
    run of OUT whose scenario (seed included) and simulator (version and
    build) are this run's, as OUT/runs.json records them after every run.
    jobs: runs at once, each in a spawned process (1: one after the other,
    in this process). The results do not depend on it; with jobs > 1 a
    callable `progress` gets each run's ticks with "run" (its log tag) added,
    True draws one line for all running runs, "tqdm" a bar over the runs.

    Raises CompareError / UnknownProtocolError / inasim.ScenarioError for bad
    input, before anything runs. DataFrame.attrs: "out", "report", "summary"
    (summary.csv's DataFrame), "findings" (inasim.fairness.Finding list),
    "results" (run directory name -> results.json dict).
    """
    import pandas as pd

    variants = [variants] if isinstance(variants, str) else list(variants)
    parsed = [parse_variant(v) for v in variants]
    names = parse_protocols(protocols) + [name for name, _, _ in parsed]
    explicit = not _is_all(protocols)
    if fmt not in FORMATS:
        raise CompareError(f'format: must be one of {", ".join(FORMATS)}, got "{fmt}"')
    if network not in NETWORK_MODES:
        raise CompareError(f'network: must be one of {", ".join(NETWORK_MODES)}, got "{network}"')
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= 1000:
        raise CompareError(f"repetitions: must be an integer 1 .. 1000, got {repetitions!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= 1024:
        raise CompareError(f"jobs: must be an integer 1 .. 1024, got {jobs!r}")
    sets = [sets] if isinstance(sets, str) else list(sets)
    doc, label, base_dir = _load(scenario, base_dir)
    for s in sets:
        inasim.apply_set(doc, s)

    with _variants_registered(parsed):
        plan = _plan(doc, names, explicit, network, seed, base_dir)
    first = plan.resolved[plan.names[0]]
    out_dir = Path(out) if out is not None else Path("out") / "compare" / first["name"]
    run_dirs = [_run_dir(p, r, repetitions) for r in range(repetitions) for p in plan.names]
    _check_out(out_dir, run_dirs, fmt)
    for f in plan.findings:
        if warn:
            warn(f.line())

    base_seed = first["seed"] if seed is None else seed
    rows, results, runs = _run_all(plan, repetitions, base_seed, base_dir, out_dir, progress, log, resume, jobs)
    hosts = fairness.shared_links(first, base_dir)["hosts"]["workload"]
    post = fairness.post_run(runs, hosts)
    for f in post:
        if warn:
            warn(f.line())
    findings = plan.findings + post

    df = pd.DataFrame(rows, columns=list(COLUMNS))
    summary = report.summary_table(rows)
    write_atomic(out_dir / "compare.csv", df.to_csv(index=False))
    write_atomic(out_dir / "summary.csv", summary.to_csv(index=False))
    own = [n for n in plan.names if n not in {v[0] for v in parsed}]
    command = command_line(label, own, not explicit, repetitions, network, sets, seed, out, fmt, variants)
    _write_json(out_dir, label, first, plan, findings, base_seed, repetitions, network, command)
    name = first["name"]
    images = report.charts(summary, plan.names, out_dir, name)
    context = _context(first, results[_run_dir(plan.names[0], 0, repetitions)], label, sets, plan, base_seed,
                       repetitions, network)
    text = report.render(fmt, f"Protocol comparison: {name}", first.get("description", ""), context, findings,
                         fairness.CHECKS, summary, rows, plan.names, images, command, repetitions)
    report_path = out_dir / f"report.{fmt}"
    write_atomic(report_path, text)
    df.attrs.update({"out": str(out_dir), "report": str(report_path), "summary": summary, "findings": findings,
                     "results": results})
    return df


def _identity(resolved: Mapping, seed: int) -> Dict[str, str]:
    """What makes a finished run reusable: the scenario it ran (with its
    seed) and the simulator; the stamp a sweep's cache entry carries."""
    from inasim import sweep

    return dict(sweep.simulator_identity(), scenario_sha256=sweep.scenario_hash(dict(resolved, seed=seed)))


def _reusable(out_dir: Path, d: str, identity: Mapping, index: Mapping):
    """(results.json dict, links.csv text or None) of an earlier identical run, or None."""
    if index.get(d) != identity or not (out_dir / d / "results.json").is_file():
        return None
    links = out_dir / d / "links.csv"
    return (json.loads((out_dir / d / "results.json").read_text()),
            links.read_text() if links.is_file() else None)


class _Planned(NamedTuple):
    """One run of the comparison, in report order."""
    i: int
    protocol: str
    rep: int
    seed: int
    dir: str
    identity: Dict[str, str]


def _planned_runs(plan: _Plan, repetitions: int, base_seed: int) -> List[_Planned]:
    return [_Planned(rep * len(plan.names) + k + 1, p, rep, base_seed + rep, _run_dir(p, rep, repetitions),
                     _identity(plan.resolved[p], base_seed + rep))
            for rep in range(repetitions) for k, p in enumerate(plan.names)]


def _run_all(plan: _Plan, repetitions: int, base_seed: int, base_dir, out_dir: Path, progress, log,
             resume: bool = False, jobs: int = 1):
    """Runs (or, with resume, reuses) every planned run, `jobs` at a time;
    returns rows, results and runs in report order whatever the finishing order."""
    planned = _planned_runs(plan, repetitions, base_seed)
    total = len(planned)
    index_path = out_dir / RUNS_INDEX
    index = json.loads(index_path.read_text()) if resume and index_path.is_file() else {}
    outcome: Dict[str, Tuple[dict, Optional[str]]] = {}

    def tag(r: _Planned) -> str:
        return f"[{r.i}/{total}] {r.protocol}" + (f" (repetition {r.rep}, seed {r.seed})" if repetitions > 1 else "")

    def finished(r: _Planned, doc: dict, links: Optional[str], reused: bool) -> None:
        outcome[r.dir] = (doc, links)
        index[r.dir] = r.identity
        write_atomic(index_path, json.dumps(index, indent=2, sort_keys=True) + "\n")
        if log and not reused:
            row = report.row_from_results(r.protocol, doc, plan.metas[r.protocol], r.rep)
            log(f"{tag(r)}: time {report.cell_value('time_s', row['time_s'])} s, goodput "
                f"{report.cell_value('goodput_gbps', row['goodput_gbps'])} Gb/s, "
                f"{'correct' if row['correct'] else 'NOT CORRECT'}" + ("" if row["finished"] else ", NOT FINISHED"))

    todo = []
    for r in planned:
        done = _reusable(out_dir, r.dir, r.identity, index) if resume else None
        if done is not None:
            if log:
                log(f"{tag(r)}: reused from {out_dir / r.dir} (--resume)")
            finished(r, *done, reused=True)
        else:
            todo.append(r)
    tasks = {r.dir: Task(tag(r), plan.docs[r.protocol], r.seed, None if base_dir is None else str(base_dir),
                         str(out_dir / r.dir)) for r in todo}
    if jobs > 1 and len(todo) > 1:
        by_name = {tasks[r.dir].name: r for r in todo}
        if log:
            log(f"{len(todo)} runs, {min(jobs, len(todo))} at a time (--jobs {jobs})")
        run_parallel(list(tasks.values()), jobs, progress, str(out_dir),
                     lambda t, result: finished(by_name[t.name], *result, reused=False))
    else:
        for r in todo:
            if log:
                log(f"{tag(r)} ...")
            finished(r, *run_task(tasks[r.dir], progress), reused=False)

    rows, results, runs = [], {}, []
    for r in planned:
        doc, links = outcome[r.dir]
        results[r.dir] = doc
        rows.append(report.row_from_results(r.protocol, doc, plan.metas[r.protocol], r.rep))
        runs.append((r.protocol, r.rep, doc, links))
    return rows, results, runs


def _human_bytes(b: Any) -> str:
    b = int(b)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            v = b / size
            return f"{v:g} {unit}" if v == int(v) else f"{v:.2f} {unit}"
    return f"{b} B"


def _context(resolved: Mapping, results: Mapping, label: str, sets: Sequence[str], plan: _Plan, base_seed: int,
             repetitions: int, network: str) -> List[tuple]:
    """(key, value) lines describing what was compared."""
    topo = results.get("topology", {})
    links = resolved.get("links", {})
    w = results.get("workload", {})
    edits = {k: v for e in plan.edits.values() for k, v in e.items()}
    items = [
        ("scenario", label),
        ("overrides", " ".join(f"--set {s}" for s in sets) if sets else "none"),
        ("seeds", str(base_seed) if repetitions == 1 else f"{base_seed} .. {base_seed + repetitions - 1} "
                                                          f"({repetitions} repetitions, the same for every protocol)"),
        ("network", f"{topo.get('description')}: {topo.get('hosts')} hosts, {topo.get('switches')} switch(es), "
                    f"{links.get('host_rate_gbps'):g} Gb/s host links, {links.get('fabric_rate_gbps'):g} Gb/s fabric"),
        ("network settings compare applied",
         (", ".join(f"{k}={json.dumps(v)}" for k, v in edits.items()) + f" (--network {network})") if edits else
         "none"),
    ]
    if w.get("type") == "allreduce":
        items.append(("workload", f"allreduce of {_human_bytes(w.get('bytes'))} over {w.get('ranks')} ranks, "
                                  f"{w.get('collectives_requested')} {w.get('collective_unit')}(s) "
                                  f"(first protocol's; dtype per protocol)"))
    items.append(("background", _background_text(resolved.get("background"))))
    faults = resolved.get("faults") or {}
    items.append(("faults", f"loss rate {faults.get('loss_rate', 0):g}, {len(faults.get('links') or [])} link "
                            f"fault(s), {len(faults.get('hosts') or [])} slow host(s)"))
    items.append(("inasim", f"{inasim.version()} (build {inasim.build_id()})"))
    return items


def _background_text(bg: Optional[Mapping]) -> str:
    if not bg:
        return "none"
    parts = []
    f = bg.get("flows")
    if f:
        parts.append(f"TCP flows ({f.get('tcp', {}).get('variant')}), {f.get('size_distribution')} sizes at load "
                     f"{f.get('load'):g}, arrivals over [{f.get('start_us'):g}, {f.get('stop_us'):g}) us")
    c = bg.get("congestion")
    if c:
        parts.append(f"moving congestion, {_human_bytes(c.get('message_bytes'))} messages")
    return "; ".join(parts) or "none"


def _write_json(out_dir: Path, label: str, first: Mapping, plan: _Plan, findings, base_seed: int, repetitions: int,
                network: str, command: str) -> None:
    doc = {
        "schema": "inasim-compare/1",
        "scenario": label,
        "name": first["name"],
        "inasim_version": inasim.version(),
        "build": inasim.build_id(),
        "protocols": plan.names,
        "seeds": [base_seed + r for r in range(repetitions)],
        "network": network,
        "network_edits": plan.edits,
        "findings": [{"check": f.check, "protocol": f.protocol, "warning": f.warning, "message": f.message}
                     for f in findings],
        "command": command,
        "resolved": {p: plan.resolved[p] for p in plan.names},
    }
    write_atomic(out_dir / "compare.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="inasim compare",
        description="Run one scenario per protocol (same network, background flows, faults and seeds) and write "
                    "a comparison report with fairness checks.")
    ap.add_argument("scenario", help="scenario JSON file")
    ap.add_argument("--protocols", default="all",
                    help=f"\"all\" (default) or comma-separated protocols (known: {', '.join(PROTOCOLS)})")
    ap.add_argument("--repetitions", type=int, default=1, metavar="N",
                    help="runs per protocol, seeds S..S+N-1 (default 1); N >= 2 gives 95 %% confidence intervals")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                    help="runs at once, each in its own process (default: the machine's cores); "
                         "the results do not depend on it")
    ap.add_argument("--network", choices=NETWORK_MODES, default="shared",
                    help="shared (default): every protocol gets the network settings any compared protocol "
                         "requires; native: each protocol only its own (the report warns)")
    ap.add_argument("--variant", dest="variants", action="append", default=[], metavar="NAME=PROTOCOL:PATH=VALUE",
                    help="one more protocol: PROTOCOL with these settings (';' between several), e.g. "
                         "panama_fixed_window=panama:workload.panama.congestion_control=false (repeatable)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
                    help="override a scenario key, as inasim run --set (repeatable)")
    ap.add_argument("--seed", type=int, default=None, help="base seed (default: the scenario's)")
    ap.add_argument("--out", default=None, help="output directory (default out/compare/<scenario name>)")
    ap.add_argument("--format", dest="fmt", choices=FORMATS, default="md", help="report format (default md)")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                    help="the simulator's progress line on stderr (auto: when stderr is a terminal)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse runs of --out that ran the same scenario and seed on the same build (runs.json)")
    ap.add_argument("--quiet", action="store_true", help="print nothing but errors and fairness warnings")
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
        print(f"inasim compare: {msg}", file=sys.stderr, flush=True)

    progress = args.progress == "on" or (args.progress == "auto" and not args.quiet and sys.stderr.isatty())
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    try:
        df = compare(args.scenario, args.protocols, sets=args.sets, out=args.out, fmt=args.fmt, seed=args.seed,
                     repetitions=args.repetitions, network=args.network, progress=progress, log=log, warn=err,
                     resume=args.resume, variants=args.variants, jobs=args.jobs)
    except (CompareError, inasim.ScenarioError) as e:
        err(str(e))
        return 2
    if not args.quiet:
        print(report.console_table(df.attrs["summary"], list(dict.fromkeys(df["protocol"]))))
        print(f"wrote {df.attrs['report']}")
    bad = sorted(set(df.loc[~(df["correct"] & df["finished"]), "protocol"]))
    if bad:
        err(f"not correct or not finished: {', '.join(bad)} (see {df.attrs['out']}/<protocol>/summary.txt)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
