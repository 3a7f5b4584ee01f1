"""The numbers and the report of `inasim compare`: one row of metrics per run
from its results.json (the same core keys for every protocol), the summary
over repetitions (inasim.stats), the Markdown / HTML report and its charts.

Metrics (compare.csv columns after protocol, repetition, seed):

- time_s: mean duration of one collective, first rank's start to last rank's
  end (`workload.mean_duration_s`); goodput_gbps (`workload.goodput_gbps`);
- step_s / exposed_comm_s: with `workload.schedule`, the mean training step
  and the mean communication the compute did not hide, over every rank's
  complete iterations (`workload.step`);
  wire_bytes_per_host (`network.host_link_wire_bytes` / `workload.ranks`);
- bg_fct_p50_s / bg_fct_p99_s: background flows' FCT median and p99, all
  flows, and bg_<bucket>_p50_s / _p99_s per size bucket (< 100 KB,
  100 KB - 10 MB, >= 10 MB; `background.flows.fct.<bucket>.fct_s`);
- util_all / util_switch: mean utilisation of every link direction / of the
  switch-to-switch ones (`network.utilization.*.mean`);
- drops (every `network.drops_*`), ecn_marks, pfc_pauses (`network.*`);
- switch_memory_bytes: the protocol's switch state at its busiest switch, from
  the results key its protocol.json names (`switch_memory`); 0 for host-only
  protocols;
- correct (`correct`), finished (the workload finished before the time limit).
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from inasim.stats import summarize

__all__ = ["BUCKETS", "METRICS", "row_from_results", "summary_table", "cell", "cell_value", "console_table",
           "render", "charts"]

#: Background flow size buckets: (results key, label).
BUCKETS = (("lt_100KB", "< 100 KB"), ("100KB_10MB", "100 KB - 10 MB"), ("ge_10MB", ">= 10 MB"))

#: (column, header, unit, format) of every numeric metric, in table order.
METRICS = (
    ("time_s", "time per collective", "s", "{:.4g}"),
    ("goodput_gbps", "goodput", "Gb/s", "{:.2f}"),
    ("wire_bytes_per_host", "bytes on the wire per host", "B", "{:,.0f}"),
    ("step_s", "training step", "s", "{:.6g}"),
    ("exposed_comm_s", "exposed communication", "s", "{:.4g}"),
    ("bg_fct_p50_s", "background FCT p50", "s", "{:.4g}"),
    ("bg_fct_p99_s", "background FCT p99", "s", "{:.4g}"),
    *[(f"bg_{b}_{q}_s", f"background FCT {q} {label}", "s", "{:.4g}") for b, label in BUCKETS
      for q in ("p50", "p99")],
    ("util_all", "mean utilisation, all links", "", "{:.3f}"),
    ("util_switch", "mean utilisation, switch links", "", "{:.3f}"),
    ("drops", "frames dropped", "", "{:,.0f}"),
    ("ecn_marks", "ECN marks", "", "{:,.0f}"),
    ("pfc_pauses", "PFC pause frames", "", "{:,.0f}"),
    ("switch_memory_bytes", "switch memory", "B", "{:,.0f}"),
)
_FORMAT = {m[0]: m[3] for m in METRICS}
_HEADER = {m[0]: m[1] + (f" ({m[2]})" if m[2] else "") for m in METRICS}

#: The report's tables: (title, columns, note).
TABLES = (
    ("Collective", ("time_s", "goodput_gbps", "wire_bytes_per_host"),
     "time: mean duration of one collective (`workload.mean_duration_s`); goodput: `workload.bytes` x 8 / time; "
     "bytes on the wire per host: `network.host_link_wire_bytes` / `workload.ranks` (framing and background "
     "on those links included)"),
    ("Training step", ("step_s", "exposed_comm_s"),
     "with `workload.schedule`: the mean step (the later of the compute's end and the last collective's end, "
     "minus the iteration's start) and its communication the compute did not hide, over every rank's complete "
     "iterations (`workload.step`, iterations.csv); — without a schedule"),
    ("Background flows", ("bg_fct_p50_s", "bg_fct_p99_s") + tuple(f"bg_{b}_{q}_s" for b, _ in BUCKETS
                                                                 for q in ("p50", "p99")),
     "flow completion time, median and 99th percentile, all flows and by size "
     "(`background.flows.fct.<bucket>.fct_s`); — without background flows or without flows of that size"),
    ("Network", ("util_all", "util_switch", "drops", "ecn_marks", "pfc_pauses"),
     "utilisation: mean over link directions, until the run ended (`network.utilization`); drops: every "
     "`network.drops_*`; ECN marks and PFC pause frames as counted by the switches"),
    ("Switch memory", ("switch_memory_bytes",),
     "aggregation state at the protocol's busiest switch; what it counts is in the last column"),
)
DASH = "—"


def get_path(d: Any, path: str) -> Any:
    """d["a"]["b"] for "a.b", or None where a key is missing."""
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


def switch_memory(meta: Mapping[str, Any], results: Mapping[str, Any]) -> Tuple[float, str]:
    """(bytes, what they count) from the protocol's `switch_memory` entry."""
    entry = meta.get("switch_memory") or {}
    if "bytes" in entry:
        return float(entry["bytes"]), entry.get("what", "")
    if "key" in entry:
        return _num(get_path(results, entry["key"])), f"{entry.get('what', '')} (`{entry['key']}`)"
    return math.nan, "not reported by this protocol"


def row_from_results(protocol: str, results: Mapping[str, Any], meta: Optional[Mapping[str, Any]] = None,
                     repetition: int = 0) -> Dict[str, Any]:
    """One compare.csv row from a run's results.json."""
    w = results.get("workload", {})
    measured = _num(w.get("collectives_completed")) > 0 and _num(w.get("mean_duration_s")) > 0
    ranks = _num(w.get("ranks"))
    fct = get_path(results, "background.flows.fct") or {}
    row: Dict[str, Any] = {
        "protocol": protocol, "repetition": repetition, "seed": results.get("seed"),
        "collective": w.get("collective_unit", ""),
        "time_s": _num(w.get("mean_duration_s")) if measured else math.nan,
        "goodput_gbps": _num(w.get("goodput_gbps")) if measured else math.nan,
        "wire_bytes_per_host": (_num(get_path(results, "network.host_link_wire_bytes")) / ranks if ranks > 0
                                else math.nan),
        "step_s": _num(get_path(w, "step.mean_s")),
        "exposed_comm_s": _num(get_path(w, "step.exposed_comm_mean_s")),
        "bg_fct_p50_s": _num(get_path(fct, "all.fct_s.median")),
        "bg_fct_p99_s": _num(get_path(fct, "all.fct_s.p99")),
    }
    for b, _ in BUCKETS:
        row[f"bg_{b}_p50_s"] = _num(get_path(fct, f"{b}.fct_s.median"))
        row[f"bg_{b}_p99_s"] = _num(get_path(fct, f"{b}.fct_s.p99"))
    net = results.get("network", {})
    row["util_all"] = _num(get_path(net, "utilization.all_links.mean"))
    row["util_switch"] = _num(get_path(net, "utilization.switch_links.mean"))
    row["drops"] = float(sum(v for k, v in net.items() if k.startswith("drops_") and isinstance(v, (int, float))))
    row["ecn_marks"] = _num(net.get("ecn_marks"))
    row["pfc_pauses"] = _num(net.get("pfc_pause_frames"))
    row["switch_memory_bytes"], row["switch_memory_what"] = switch_memory(meta or {}, results)
    row["correct"] = results.get("correct") is True
    row["finished"] = get_path(results, "sim.stopped_by") == "workload_done"
    return row


def summary_table(rows: Sequence[Mapping[str, Any]]):
    """Per protocol and metric: n, missing, mean, std, ci95_low, ci95_high."""
    import pandas as pd

    out = []
    protocols = list(dict.fromkeys(r["protocol"] for r in rows))
    for p in protocols:
        mine = [r for r in rows if r["protocol"] == p]
        for column, *_ in METRICS:
            out.append({"protocol": p, "metric": column, **summarize(r[column] for r in mine)})
        out.append({"protocol": p, "metric": "correct", **summarize(float(r["correct"]) for r in mine)})
    return pd.DataFrame(out)


# ------------------------------------------------------------------ cells


def cell_value(column: str, v: Any) -> str:
    """One number as the report writes it ("—" for NaN)."""
    x = _num(v)
    return DASH if math.isnan(x) else _FORMAT.get(column, "{:.4g}").format(x)


def console_table(summary, protocols: Sequence[str]) -> str:
    """The collective table, and the background p99 when there is one, as text for the terminal."""
    columns = ["time_s", "goodput_gbps", "bg_fct_p99_s", "switch_memory_bytes"]
    header = ["protocol"] + [_HEADER[c] for c in columns]
    body = [[p] + [cell(summary, p, c) for c in columns] for p in protocols]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header] + body]
    return "\n".join(lines)


def cell(summary, protocol: str, column: str) -> str:
    """"12.3" or "12.3 ± 0.4" (95 % CI half-width) or "—"."""
    s = summary[(summary["protocol"] == protocol) & (summary["metric"] == column)].iloc[0]
    if s["n"] == 0:
        return DASH
    fmt = _FORMAT.get(column, "{:.4g}")
    text = fmt.format(s["mean"])
    if s["n"] >= 2:
        text += " ± " + fmt.format((s["ci95_high"] - s["ci95_low"]) / 2)
    return text


def _tables(summary, protocols: Sequence[str], rows) -> List[Tuple[str, List[str], List[List[str]], str]]:
    """(title, header, body rows, note) of every report table."""
    reps = {p: sum(1 for r in rows if r["protocol"] == p) for p in protocols}
    what = {r["protocol"]: r["switch_memory_what"] for r in rows}
    out = []
    for title, columns, note in TABLES:
        header = ["protocol"] + [_HEADER[c] for c in columns]
        body = []
        for p in protocols:
            cells = [cell(summary, p, c) for c in columns]
            if title == "Collective":
                ok = summary[(summary["protocol"] == p) & (summary["metric"] == "correct")].iloc[0]["mean"]
                cells.append("yes" if ok == 1 else f"{ok * reps[p]:.0f} of {reps[p]}" if reps[p] > 1 else "no")
            if title == "Switch memory":
                cells.append(what[p])
            body.append([p] + cells)
        if title == "Collective":
            header.append("correct")
        if title == "Switch memory":
            header.append("what it counts")
        if title in ("Background flows", "Training step") and all(c == DASH for r in body for c in r[1:]):
            continue
        out.append((title, header, body, note))
    if len(protocols) > 1:
        out.insert(1, _paired_table(rows, protocols))
    return out


def paired_ratios(rows, protocols: Sequence[str], column: str) -> Dict[str, Dict[str, float]]:
    """protocol -> summarize() of its per-repetition ratio column / the first
    protocol's column, pairing the runs of one repetition (the same seed:
    the same hosts, flows and congestion), so the seeds' common variation
    cancels and the interval is the one a speed-up claim needs."""
    base = {r["repetition"]: r[column] for r in rows if r["protocol"] == protocols[0]}
    out = {}
    for p in protocols[1:]:
        ratios = [_num(r[column]) / _num(base.get(r["repetition"])) for r in rows if r["protocol"] == p]
        out[p] = summarize(ratios)
    return out


def _paired_table(rows, protocols: Sequence[str]):
    first = protocols[0]
    time_ratio = paired_ratios(rows, protocols, "time_s")
    bg_ratio = paired_ratios(rows, protocols, "bg_fct_p99_s")

    def fmt(s: Dict[str, float]) -> str:
        if s["n"] == 0:
            return DASH
        text = f"{s['mean']:.3f}"
        return text + (f" ± {(s['ci95_high'] - s['ci95_low']) / 2:.3f}" if s["n"] >= 2 else "")

    header = ["protocol", f"time / {first}'s", f"background FCT p99 / {first}'s"]
    body = [[p, fmt(time_ratio[p]), fmt(bg_ratio[p])] for p in protocols[1:]]
    if any(not math.isnan(_num(r.get("step_s"))) for r in rows):  # a training step (workload.schedule)
        step_ratio = paired_ratios(rows, protocols, "step_s")
        exposed_ratio = paired_ratios(rows, protocols, "exposed_comm_s")
        header += [f"training step / {first}'s", f"exposed communication / {first}'s"]
        body = [b + [fmt(step_ratio[p]), fmt(exposed_ratio[p])] for b, p in zip(body, protocols[1:])]
    return (f"Relative to {first}", header, body,
            f"per repetition, this protocol's value over {first}'s in the same repetition (same seed), then the "
            "mean ± the 95 % interval of those ratios: below 1 is faster (shorter FCT)")


# ------------------------------------------------------------------ render


def render(fmt: str, title: str, description: str, context: Sequence[Tuple[str, str]], findings, checks,
           summary, rows, protocols: Sequence[str], images: Sequence[Tuple[str, str]], command: str,
           repetitions: int) -> str:
    """The report, Markdown ("md") or HTML ("html")."""
    tables = _tables(summary, protocols, rows)
    ci = ("Each cell: mean over the repetitions ± the half-width of its 95 % confidence interval "
          "(Student's t); summary.csv has n, mean, std and the interval." if repetitions > 1 else
          "One run per protocol: no confidence intervals (use --repetitions N).")
    fairness = [f.line() for f in findings]
    quiet = [f"{k}: {v}" for k, v in checks.items() if not any(f.check == k for f in findings)]
    run_dirs = [p if repetitions == 1 else f"{p}-rep{r}" for p in protocols for r in range(repetitions)]
    args = (title, description, context, fairness, quiet, tables, ci, images, command, run_dirs)
    return _markdown(*args) if fmt == "md" else _html(*args)


def _markdown(title, description, context, fairness, quiet, tables, ci, images, command, run_dirs) -> str:
    out = [f"# {title}", ""] + ([description, ""] if description else [])
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in context] + [""]
    out += ["## Fairness checks", ""]
    out += [f"- **{line}**" for line in fairness] or ["- no warnings"]
    out += [f"- passed: {q}" for q in quiet] + [""]
    for t, header, body, note in tables:
        out += [f"## {t}", "", "| " + " | ".join(header) + " |",
                "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in body] + ["", note, ""]
    out += [ci, ""]
    for alt, file in images:
        out += [f"![{alt}]({file})", ""]
    out += ["Data: [compare.csv](compare.csv) (one row per run), [summary.csv](summary.csv) (per protocol and "
            "metric). Each run: " + ", ".join(f"[{d}/]({d}/results.json)" for d in run_dirs) + ".", "",
            "Regenerate:", "", "```sh", command, "```", ""]
    return "\n".join(out)


def _html(title, description, context, fairness, quiet, tables, ci, images, command, run_dirs) -> str:
    e = html.escape

    def code(s: str) -> str:
        parts = s.split("`")
        return "".join(f"<code>{e(p)}</code>" if i % 2 else e(p) for i, p in enumerate(parts))

    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right}.w{color:#a00}</style>",
           "</head><body>", f"<h1>{e(title)}</h1>"]
    if description:
        out.append(f"<p>{e(description)}</p>")
    out.append("<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in context) + "</table>")
    out.append("<h2>Fairness checks</h2><ul>" + "".join(f'<li class="w"><b>{code(f)}</b></li>' for f in fairness)
               + ("" if fairness else "<li>no warnings</li>") + "".join(f"<li>passed: {e(q)}</li>" for q in quiet)
               + "</ul>")
    for t, header, body, note in tables:
        out.append(f"<h2>{e(t)}</h2><table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header)
                   + "</tr></thead><tbody>")
        for r in body:
            out.append("<tr>" + "".join(f'<td{" class=n" if i else ""}>{code(c)}</td>' for i, c in enumerate(r))
                       + "</tr>")
        out.append(f"</tbody></table><p>{code(note)}</p>")
    out.append(f"<p>{e(ci)}</p>")
    for alt, file in images:
        out.append(f'<p><img src="{e(file)}" alt="{e(alt)}"></p>')
    out.append('<p>Data: <a href="compare.csv">compare.csv</a>, <a href="summary.csv">summary.csv</a>. Each run: '
               + ", ".join(f'<a href="{e(d)}/results.json">{e(d)}/</a>' for d in run_dirs) + ".</p>")
    out.append(f"<p>Regenerate:</p><pre>{e(command)}</pre></body></html>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ charts

#: (file stem, [(column, name, unit)], title) of each chart; a chart whose
#: columns are all missing is not drawn.
CHARTS = (
    ("time", [("time_s", "time per collective", "s")], "time per collective"),
    ("goodput", [("goodput_gbps", "goodput", "Gb/s")], "goodput"),
    ("background", [("bg_fct_p50_s", "background FCT p50", "s"), ("bg_fct_p99_s", "background FCT p99", "s")],
     "background flow completion time"),
    ("network", [("util_switch", "utilisation, switch links", "fraction"), ("drops", "drops", "frames"),
                 ("pfc_pauses", "PFC pauses", "frames")], "network"),
)


def charts(summary, protocols: Sequence[str], out_dir: Path, name: str) -> List[Tuple[str, str]]:
    """Bar charts of the means with 95 % CI error bars; (alt text, file name) each."""
    from inasim import plot

    images = []
    for stem, metrics, what in CHARTS:
        table, errors = [], {}
        for p in protocols:
            rec = {"protocol": p}
            for column, *_ in metrics:
                s = summary[(summary["protocol"] == p) & (summary["metric"] == column)].iloc[0]
                rec[column] = s["mean"]
                rec[column + "_ci95"] = (s["ci95_high"] - s["ci95_low"]) / 2
            table.append(rec)
        if all(math.isnan(r[c]) for r in table for c, *_ in metrics):
            continue
        png, _ = plot.bar_table(table, metrics, out_dir / stem, title=f"{name}: {what} per protocol",
                                errors={c: c + "_ci95" for c, *_ in metrics})
        images.append((f"{what} per protocol", png.name))
    return images
