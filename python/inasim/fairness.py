"""Is a side-by-side comparison fair? The checks `inasim compare` makes before
and after its runs; each finding goes to stderr and into the report.

Before the runs (from the scenarios, the protocols' registry entries and the
switches' routing tables):

- `network`: what compare changed in the network so that every protocol runs
  on the network the most demanding one needs (protocol.json `network`), or,
  with `network="native"`, that the protocols ran on different networks;
- `background_differs`: the protocols' scenarios differ outside the workload
  (topology, links, switches, hosts, background, faults, seed, time limit),
  so the background traffic is not the same traffic in every run;
- `loss_without_recovery`: a protocol that cannot recover a lost frame
  (protocol.json `loss_recovery`: false) on a fabric that loses frames
  (`faults.loss_rate`, a link's loss or a link going down);
- `no_shared_link`: background traffic present, but no directed link lies on
  both a workload route and a background route (`_inasim.traffic_links`:
  every equal-cost shortest path of the routing tables), so no protocol can
  change the background's FCT or be slowed by it;
- `not_applicable`: a protocol whose setup rejects the scenario (with
  `--protocols all` it is left out; named explicitly, it is an error).

After the runs (from each run's results.json and links.csv):

- `unfinished`: the workload did not finish (or background flows did not
  complete) before `stop.max_sim_time_ms`: its numbers cover a cut-off run;
- `idle_hosts`: selected workload hosts that sent nothing, or a protocol
  that ran on fewer ranks than the others;
- `different_work`: the protocols' collectives moved different amounts of
  data (`workload.bytes` in results.json), so their times measure different work;
- `background_unaffected`: every protocol's background flows completed
  exactly alike (identical FCT statistics): whatever the routes, the flows
  never met the workload (e.g. most of them ran after it), so the background
  columns cannot rank the protocols.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inasim.compare_report import get_path as _get

__all__ = ["Finding", "CHECKS", "network_edits", "pre_run", "post_run", "shared_links"]

#: Every check, in report order, with what it looks for (the report lists
#: the ones that found nothing, so a reader sees what was checked).
CHECKS = {
    "network": "every protocol ran on the same network (settings a protocol requires applied to all)",
    "background_differs": "the scenario outside the workload is the same for every protocol",
    "loss_without_recovery": "no protocol without loss recovery on a lossy fabric",
    "no_shared_link": "workload and background routes share at least one link",
    "not_applicable": "every protocol accepts the scenario",
    "unfinished": "every run finished before the time limit",
    "idle_hosts": "every selected workload host sent traffic, every protocol used the same ranks",
    "different_work": "every protocol's collective moved the same bytes",
    "background_unaffected": "the background flows' FCT differs between protocols (they met the workload)",
}

#: Top-level scenario keys the background and the network depend on.
NETWORK_KEYS = ("topology", "links", "switch", "host", "background", "faults", "seed", "stop")


@dataclasses.dataclass(frozen=True)
class Finding:
    check: str  #: a key of CHECKS
    message: str  #: one line, naming the protocol(s) and the setting
    protocol: Optional[str] = None
    warning: bool = True  #: False: information (e.g. a network setting compare applied as asked)

    def line(self) -> str:
        return f"{'warning' if self.warning else 'note'}: {self.message}"


def network_edits(metas: Mapping[str, Mapping[str, Any]], doc: Mapping[str, Any],
                  mode: str) -> Tuple[Dict[str, Dict[str, Any]], List[Finding]]:
    """Per protocol, the `--set` edits (path -> value) its run gets, and what
    to say about them. shared: the union of every compared protocol's
    `network` for every run (ValueError on two protocols wanting different
    values); native: each protocol its own."""
    wanted: Dict[str, Tuple[Any, str]] = {}
    for name, meta in metas.items():
        for path, value in (meta.get("network") or {}).items():
            if mode == "shared" and path in wanted and wanted[path][0] != value:
                other = wanted[path][1]
                raise ValueError(f"{other} needs {path}={json.dumps(wanted[path][0])} but {name} needs "
                                 f"{json.dumps(value)}: no one network suits both; use --network native")
            wanted.setdefault(path, (value, name))
    if mode == "native":
        edits = {n: dict((m.get("network") or {})) for n, m in metas.items()}
        findings = [Finding("network", f"{n} ran with {_settings(e, doc)} ({metas[n].get('network_why', '')}); "
                            f"the other protocols did not (--network native)", n)
                    for n, e in edits.items() if e and len(edits) > 1]
        return edits, findings
    edits = {n: {p: v for p, (v, _) in wanted.items()} for n in metas}
    findings = []
    for path, (value, who) in wanted.items():
        if _get(doc, path) == value:
            continue
        findings.append(Finding(
            "network", f"every protocol ran with {_settings({path: value}, doc)} because {who} requires it "
            f"({metas[who].get('network_why', '')}); --network native runs each protocol on its own network "
            f"instead", who, warning=False))
    return edits, findings


def _settings(edits: Mapping[str, Any], doc: Mapping[str, Any]) -> str:
    parts = []
    for path, value in edits.items():
        old = _get(doc, path)
        was = "default" if old is None else json.dumps(old)
        parts.append(f"{path}={json.dumps(value)} (scenario: {was})")
    return ", ".join(parts)


def _flat(doc: Any, prefix: str = "") -> Dict[str, Any]:
    if isinstance(doc, dict):
        out: Dict[str, Any] = {}
        for k, v in doc.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else k))
        return out
    return {prefix: doc}


def _background_differs(resolved: Mapping[str, Mapping[str, Any]], base_dir: Optional[str]) -> List[Finding]:
    """Settings outside the workload, and the background's selected hosts
    (`"others"` follows the workload's hosts), that differ between runs."""
    names = list(resolved)
    flat = {n: _flat({k: resolved[n].get(k) for k in NETWORK_KEYS}) for n in names}
    if any(resolved[n].get("background") for n in names):
        for n in names:
            hosts = shared_links(resolved[n], base_dir)["hosts"]
            flat[n]["(background flow hosts)"] = hosts["flows"]
            flat[n]["(background congestion hosts)"] = hosts["congestion"]
    first = names[0]
    findings = []
    for n in names[1:]:
        keys = sorted(k for k in set(flat[first]) | set(flat[n]) if flat[first].get(k) != flat[n].get(k))
        if keys:
            shown = ", ".join(f"{k}: {_short(flat[first].get(k))} vs {_short(flat[n].get(k))}"
                              for k in keys[:4]) + (f" (+{len(keys) - 4} more)" if len(keys) > 4 else "")
            findings.append(Finding("background_differs",
                                    f"{first} and {n} ran on different networks or background traffic ({shown}): "
                                    "their background FCT and network counters are not comparable", n))
    return findings


def _short(v: Any) -> str:
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _lossy(resolved: Mapping[str, Any]) -> List[str]:
    faults = resolved.get("faults") or {}
    why = []
    if (faults.get("loss_rate") or 0) > 0:
        why.append(f"faults.loss_rate={faults['loss_rate']:g}")
    for i, link in enumerate(faults.get("links") or []):
        if (link.get("loss_rate") or 0) > 0:
            why.append(f"faults.links[{i}].loss_rate={link['loss_rate']:g}")
        if link.get("down_at_us") is not None:
            why.append(f"faults.links[{i}] goes down at {link['down_at_us']:g} us")
    return why


def _loss_without_recovery(metas, resolved) -> List[Finding]:
    findings = []
    for name, meta in metas.items():
        why = _lossy(resolved[name])
        if why and meta.get("loss_recovery") is False:
            how = (meta.get("fault_matrix") or {}).get("recovery", "it has no loss recovery")
            findings.append(Finding("loss_without_recovery",
                                    f"{name} cannot recover lost frames ({how}) and this fabric loses them "
                                    f"({'; '.join(why)}): expect it to stall until stop.max_sim_time_ms", name))
    return findings


def _no_shared_link(resolved: Mapping[str, Any], base_dir: Optional[str]) -> List[Finding]:
    if not resolved.get("background"):
        return []
    info = shared_links(resolved, base_dir)
    links = info["links"]
    if links["shared"] > 0 or links["background"] == 0 or links["workload"] == 0:
        return []
    hosts = info["hosts"]
    bg_hosts = sorted(set(hosts["flows"]) | set(hosts["congestion"]))
    return [Finding("no_shared_link",
                    f"the workload ({len(hosts['workload'])} hosts, {links['workload']} directed links) and the "
                    f"background ({len(bg_hosts)} hosts, {links['background']} directed links) never share a "
                    f"link on any route of the routing tables: the background FCT cannot differ between "
                    f"protocols, and no protocol meets congestion")]


def shared_links(resolved: Mapping[str, Any], base_dir: Optional[str]) -> Dict[str, Any]:
    """_inasim.traffic_links of one resolved scenario, as a dict (computed
    once per scenario: the checks before and after the runs both read it)."""
    return json.loads(_traffic_links(json.dumps(resolved, sort_keys=True), base_dir or ""))


@functools.lru_cache(maxsize=64)
def _traffic_links(text: str, base_dir: str) -> str:
    import _inasim

    return _inasim.traffic_links(text, base_dir)


def pre_run(metas: Mapping[str, Mapping[str, Any]], resolved: Mapping[str, Mapping[str, Any]],
            base_dir: Optional[str]) -> List[Finding]:
    """The checks before any run (network edits are reported by network_edits)."""
    findings = _background_differs(resolved, base_dir) if len(resolved) > 1 else []
    findings += _loss_without_recovery(metas, resolved)
    first = next(iter(resolved.values()))
    findings += _no_shared_link(first, base_dir)
    return findings


# ------------------------------------------------------------ after the runs


def _unfinished(name: str, rep: int, results: Mapping[str, Any]) -> List[Finding]:
    w = results.get("workload") or {}
    sim = results.get("sim") or {}
    parts = []
    done, asked = w.get("collectives_completed"), w.get("collectives_requested")
    if asked is not None and done is not None and done < asked:
        parts.append(f"{done} of {asked} {w.get('collective_unit', 'collective')}s finished")
    incomplete = _get(results, "background.flows.incomplete")
    if incomplete:
        parts.append(f"{incomplete} background flows incomplete")
    if not parts and sim.get("stopped_by") == "max_sim_time":
        parts.append("stopped by the time limit")
    if not parts:
        return []
    return [Finding("unfinished", f"{name} (repetition {rep}) did not finish by stop.max_sim_time_ms "
                                  f"({sim.get('end_time_s', 0) * 1e3:.4g} ms): {', '.join(parts)}; its numbers "
                                  "cover a cut-off run", name)]


def _idle_hosts(name: str, workload_hosts: Sequence[int], results: Mapping[str, Any],
                links_csv: Optional[str]) -> List[Finding]:
    findings = []
    ranks = (results.get("workload") or {}).get("ranks")
    if ranks is not None and ranks != len(workload_hosts):
        findings.append(Finding("idle_hosts", f"{name} ran {ranks} ranks on the {len(workload_hosts)} selected "
                                              "hosts", name))
    if links_csv:
        sent = {}
        for row in csv.DictReader(io.StringIO(links_csv)):
            src = row["a"] if row["direction"] == "a->b" else row["b"]
            sent[src] = sent.get(src, 0) + int(row["tx_bytes"])
        idle = [h for h in workload_hosts if sent.get(f"h{h}", 1) == 0]
        if idle:
            shown = ", ".join(f"h{h}" for h in idle[:8]) + (f" (+{len(idle) - 8} more)" if len(idle) > 8 else "")
            findings.append(Finding("idle_hosts", f"{name}: {len(idle)} of the {len(workload_hosts)} selected "
                                                  f"workload hosts sent nothing ({shown})", name))
    return findings


def _different_work(results_by_protocol: Mapping[str, Mapping[str, Any]]) -> List[Finding]:
    sizes = {n: (r.get("workload") or {}).get("bytes") for n, r in results_by_protocol.items()}
    if len({v for v in sizes.values()}) <= 1:
        return []
    shown = ", ".join(f"{n} {v} B" for n, v in sizes.items())
    return [Finding("different_work", f"the protocols' collectives moved different amounts of data ({shown}): "
                                      "their times and goodputs measure different work")]


def _background_unaffected(results_by_protocol: Mapping[str, Mapping[str, Any]]) -> List[Finding]:
    fct = {n: _get(r, "background.flows.fct") for n, r in results_by_protocol.items()}
    if len(fct) < 2 or any(v is None for v in fct.values()):
        return []
    first = next(iter(fct.values()))
    if any(v != first for v in fct.values()):
        return []
    if not (first.get("all") or {}).get("count"):
        return [Finding("background_unaffected", "no background flow completed in any run (too few arrivals in "
                                                 "[start_us, stop_us)?): the background columns are empty")]
    return [Finding("background_unaffected", "every protocol's background flows completed exactly alike "
                                             f"({', '.join(fct)}: identical FCT statistics): they never met the "
                                             "workload, so the background columns cannot rank the protocols")]


def post_run(runs: Sequence[Tuple[str, int, Mapping[str, Any], Optional[str]]],
             workload_hosts: Sequence[int]) -> List[Finding]:
    """runs: (protocol, repetition, results.json, links.csv text or None)."""
    findings: List[Finding] = []
    first_rep = {}
    for name, rep, results, links_csv in runs:
        findings += _unfinished(name, rep, results)
        if name not in first_rep:
            first_rep[name] = results
            findings += _idle_hosts(name, workload_hosts, results, links_csv)
    findings += _different_work(first_rep)
    findings += _background_unaffected(first_rep)
    return findings
