"""The small plotting library behind INA-Sim's figure scripts (analysis/).

Opinionated on purpose, so every figure looks and behaves the same:

* every axis label carries its unit: ``Figure("...", "message size", "time",
  xunit="MiB", yunit="us")`` labels the axes "message size (MiB)" and "time (us)";
* simulated series are solid lines with filled markers (`line`), analytic
  bounds dashed lines without markers (`bound`), the papers' numbers hollow
  markers with the source in the legend (`reference`: "SwitchML Fig. 3 (paper)");
* `save(stem)` writes ``stem.png`` (Agg, 150 dpi, tight layout, no timestamp
  or software metadata: the same data give the same bytes) **and** ``stem.csv``
  with one tidy row per plotted point, so every number in a figure can be
  checked without reading pixels.

    from inasim import plot
    f = plot.Figure("Ring allreduce", "message size", "time", "MiB", "us", logx=2, logy=True)
    c = f.line([0.25, 1, 4], [25, 90, 350], "n=8")
    f.bound([0.25, 1, 4], [22, 88, 352], "bound n=8", color=c)
    f.reference([1, 4], [95, 370], "ring", "SwitchML Fig. 3")
    png, csv = f.save("out/figures/example")

Several panels side by side: ``plot.save_panels(stem, [fig_a, fig_b], title=...)``
(panels are lettered (a), (b), ...; the CSV's ``panel`` column says which).
Grouped bars (one subplot per metric, one bar per protocol), for
`inasim compare`: ``plot.bar_table(rows, metrics, stem, title)``.

CSV columns: ``panel, series, kind, x, y, x_label, y_label, source``, then any
per-point columns a series was given (``columns={"hosts": [...]}``). ``kind``
is ``sim``, ``bound`` or ``reference``; ``x``/``y`` are the plotted values in
the axis units; ``x_label``/``y_label`` the axis labels with their units.

matplotlib is used through its object API with the Agg canvas only: importing
this module never touches pyplot or the global backend.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["Figure", "save_panels", "bar_table", "panel_letters", "KINDS", "CSV_COLUMNS", "DPI"]

DPI = 150
KINDS = ("sim", "reference", "bound")
#: Fixed leading columns of every figure CSV (per-series extra columns follow).
CSV_COLUMNS = ("panel", "series", "kind", "x", "y", "x_label", "y_label", "source")

# tab10, fixed here so colours do not depend on the user's matplotlibrc.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)
SIM_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "*")
REFERENCE_MARKERS = ("D", "s", "^", "v", "P", "X", "o", "<", ">", "*")

# Style applied inside every save (rc_context): independent of ~/.matplotlibrc.
_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "legend.frameon": False,
    "svg.hashsalt": "inasim",  # deterministic SVG ids, should anyone save SVG
    "path.simplify": False,
}

PathLike = Union[str, os.PathLike]


def _axis_label(name: str, unit: str, which: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{which}label: must be a non-empty string")
    if not isinstance(unit, str) or not unit.strip():
        raise ValueError(f"{which}unit: every axis needs a unit (e.g. 's', 'MiB', 'Gb/s', 'hosts'), got {unit!r}")
    return f"{name} ({unit})"


def _log_base(v: Union[bool, int, float]) -> Optional[float]:
    """logx/logy: False -> linear, True -> base 10, a number > 1 -> that base."""
    if v is False or v is None:
        return None
    if v is True:
        return 10.0
    if isinstance(v, (int, float)) and v > 1:
        return float(v)
    raise ValueError(f"log scale: expected False, True or a base > 1, got {v!r}")


def _draw_seed_ranges(ax, s: "_Series") -> None:
    """A vertical bar over each point run at several seeds: the seeds'
    range (the per-point column "y_seeds", inasim.claims)."""
    for x, cell in zip(s.x, s.columns.get("y_seeds", ())):
        vals = [float(v) for v in str(cell).split()]
        if len(vals) > 1:
            ax.plot([x, x], [min(vals), max(vals)], color=s.color, linewidth=1.0, zorder=3)


def _floats(values: Iterable[Any], what: str) -> List[float]:
    out = []
    for v in values:
        if v is None:
            out.append(math.nan)
            continue
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            raise ValueError(f"{what}: not a number: {v!r}") from None
    return out


def _cell(v: Any) -> Any:
    """A value as a CSV cell: ints as ints, floats in shortest round-trip form, NaN empty."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    try:
        import numpy as np

        if isinstance(v, np.generic):
            v = v.item()
    except ImportError:  # pragma: no cover - numpy comes with matplotlib
        pass
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)  # shortest round-trip form
    return v


class _Series:
    __slots__ = ("kind", "label", "x", "y", "color", "marker", "linestyle", "legend", "source", "columns")

    def __init__(self, kind, label, x, y, color, marker, linestyle, legend, source, columns):
        self.kind, self.label, self.x, self.y = kind, label, x, y
        self.color, self.marker, self.linestyle = color, marker, linestyle
        self.legend, self.source, self.columns = legend, source, columns


class Figure:
    """One panel: title, axes with units, and series.

    logx/logy: False (linear), True (log10) or a base, e.g. ``logx=2`` for
    message sizes. legend_cols: columns of the legend (matplotlib fills
    them column-wise, so sims then bounds side by side with 2).
    """

    def __init__(self, title: str, xlabel: str, ylabel: str, xunit: str, yunit: str,
                 logx: Union[bool, float] = False, logy: Union[bool, float] = False,
                 legend_cols: int = 1, legend_loc: str = "best"):
        self.title = title
        self.x_label = _axis_label(xlabel, xunit, "x")
        self.y_label = _axis_label(ylabel, yunit, "y")
        self.logx = _log_base(logx)
        self.logy = _log_base(logy)
        self.legend_cols = int(legend_cols)
        self.legend_loc = legend_loc
        self.series: List[_Series] = []
        self._xticks: Optional[Tuple[List[float], Optional[List[str]]]] = None
        self._ylim: Optional[Tuple[Optional[float], Optional[float]]] = None
        self._n_sim = 0
        self._n_ref = 0

    # ------------------------------------------------------------ series

    def _add(self, kind, x, y, label, color, marker, linestyle, legend, source, columns) -> str:
        if not isinstance(label, str) or not label:
            raise ValueError("label: must be a non-empty string (it names the series in the CSV)")
        if any(s.label == label and s.kind == kind for s in self.series):
            raise ValueError(f"series {label!r} ({kind}) is already in this figure")
        xs, ys = _floats(x, f"{label}: x"), _floats(y, f"{label}: y")
        if len(xs) != len(ys):
            raise ValueError(f"{label}: x has {len(xs)} values, y has {len(ys)}")
        cols = {}
        for name, vals in (columns or {}).items():
            if name in CSV_COLUMNS:
                raise ValueError(f"{label}: column {name!r} is reserved")
            vals = list(vals)
            if len(vals) != len(xs):
                raise ValueError(f"{label}: column {name!r} has {len(vals)} values for {len(xs)} points")
            cols[name] = vals
        self.series.append(_Series(kind, label, xs, ys, color, marker, linestyle, legend, source, cols))
        return color

    def line(self, x: Sequence[float], y: Sequence[float], label: str, marker: Optional[str] = None,
             color: Optional[str] = None, linestyle: str = "-", legend: Union[str, bool, None] = None,
             columns: Optional[Mapping[str, Sequence[Any]]] = None) -> str:
        """A simulated series: solid line, filled markers. Returns its colour
        (pass it to `bound`/`reference` to pair them). legend: text for the
        legend (default the label), or False to leave it out. columns: extra
        per-point CSV columns, e.g. {"hosts": [...], "bytes": [...]}."""
        i = self._n_sim
        self._n_sim += 1
        color = color or PALETTE[i % len(PALETTE)]
        marker = marker or SIM_MARKERS[i % len(SIM_MARKERS)]
        return self._add("sim", x, y, label, color, marker, linestyle, legend, "", columns)

    def bound(self, x: Sequence[float], y: Sequence[float], label: str, color: Optional[str] = None,
              legend: Union[str, bool, None] = None,
              columns: Optional[Mapping[str, Sequence[Any]]] = None) -> str:
        """An analytic bound: dashed line, no markers (kind "bound" in the CSV)."""
        color = color or "#444444"
        return self._add("bound", x, y, label, color, None, "--", legend, "", columns)

    def reference(self, x: Sequence[float], y: Sequence[float], label: str, source: str,
                  marker: Optional[str] = None, color: Optional[str] = None,
                  columns: Optional[Mapping[str, Sequence[Any]]] = None) -> str:
        """A paper's reference values: hollow markers, no line; the legend
        reads "<label>, <source> (paper)" (just "<source> (paper)" when the
        label equals the source). kind "reference" and `source` in the CSV."""
        if not isinstance(source, str) or not source:
            raise ValueError("source: say where the numbers come from, e.g. 'SwitchML Fig. 3'")
        i = self._n_ref
        self._n_ref += 1
        color = color or "#000000"
        marker = marker or REFERENCE_MARKERS[i % len(REFERENCE_MARKERS)]
        text = f"{source} (paper)" if label == source else f"{label}, {source} (paper)"
        return self._add("reference", x, y, label, color, marker, "none", text, source, columns)

    def xticks(self, values: Sequence[float], labels: Optional[Sequence[str]] = None) -> "Figure":
        """Ticks exactly at `values` (e.g. the swept sizes), optionally labelled."""
        self._xticks = (_floats(values, "xticks"), None if labels is None else [str(s) for s in labels])
        return self

    def ylim(self, bottom: Optional[float] = None, top: Optional[float] = None) -> "Figure":
        self._ylim = (bottom, top)
        return self

    # ------------------------------------------------------------ output

    def rows(self, panel: str = "a") -> List[dict]:
        """The tidy CSV rows of this panel (what `save` writes)."""
        out = []
        for s in self.series:
            for i, (x, y) in enumerate(zip(s.x, s.y)):
                row = {"panel": panel, "series": s.label, "kind": s.kind, "x": x, "y": y,
                       "x_label": self.x_label, "y_label": self.y_label, "source": s.source}
                for name, vals in s.columns.items():
                    row[name] = vals[i]
                out.append(row)
        return out

    def _draw(self, ax, letter: Optional[str]) -> None:
        for s in self.series:
            text = s.label if s.legend is None else s.legend
            label = "_nolegend_" if text is False or text == "" else str(text)
            if s.kind == "sim":
                ax.plot(s.x, s.y, color=s.color, marker=s.marker, linestyle=s.linestyle, label=label, zorder=3)
                _draw_seed_ranges(ax, s)
            elif s.kind == "bound":
                ax.plot(s.x, s.y, color=s.color, linestyle="--", linewidth=1.2, label=label, zorder=2)
            else:
                ax.plot(s.x, s.y, linestyle="none", marker=s.marker, markersize=8, markerfacecolor="none",
                        markeredgecolor=s.color, markeredgewidth=1.5, label=label, zorder=4)
        if self.logx:
            ax.set_xscale("log", base=self.logx)
        if self.logy:
            ax.set_yscale("log", base=self.logy)
        if self._xticks is not None:
            import matplotlib.ticker as mticker

            vals, labels = self._xticks
            ax.xaxis.set_major_locator(mticker.FixedLocator(vals))
            ax.xaxis.set_minor_locator(mticker.NullLocator())
            if labels is None:
                ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
            else:
                ax.xaxis.set_major_formatter(mticker.FixedFormatter(labels))
        elif self.logx:
            _plain_log_ticks(ax.xaxis, self.logx)
        if self.logy:
            _plain_log_ticks(ax.yaxis, self.logy)
        if self._ylim is not None:
            ax.set_ylim(*self._ylim)
        ax.set_xlabel(self.x_label)
        ax.set_ylabel(self.y_label)
        title = self.title if letter is None else f"({letter}) {self.title}"
        ax.set_title(title)
        # One legend entry per distinct text, in insertion order.
        handles, labels = ax.get_legend_handles_labels()
        seen, h2, l2 = set(), [], []
        for h, l in zip(handles, labels):
            if l not in seen:
                seen.add(l)
                h2.append(h)
                l2.append(l)
        if h2:
            ax.legend(h2, l2, ncol=self.legend_cols, loc=self.legend_loc)

    def save(self, path_stem: PathLike) -> Tuple[Path, Path]:
        """Writes ``stem.png`` and ``stem.csv``; returns (png path, csv path)."""
        return save_panels(path_stem, [self])


def _plain_log_ticks(axis, base: float) -> None:
    """Log-axis ticks as plain numbers (0.25, 1, 4; 20, 50, 100), not 10^x."""
    import matplotlib.ticker as mticker

    subs = (1.0, 2.0, 5.0) if base == 10 else (1.0,)
    axis.set_major_locator(mticker.LogLocator(base=base, subs=subs))
    axis.set_minor_locator(mticker.NullLocator())
    axis.set_major_formatter(mticker.FuncFormatter(lambda v, _pos: f"{v:g}"))


def _new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _stem(path_stem: PathLike) -> Path:
    stem = Path(path_stem)
    if stem.suffix.lower() in (".png", ".csv"):
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    return stem


def _write_png(fig, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.05,
                    metadata={"Software": None})
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _write_csv(rows: List[dict], path: Path) -> None:
    extra: List[str] = []
    for r in rows:
        for k in r:
            if k not in CSV_COLUMNS and k not in extra:
                extra.append(k)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = list(CSV_COLUMNS) + extra
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(r.get(k)) for k in header])
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def _finish(fig, rows, stem: Path, title=None):
    """Title, layout, then the PNG and the CSV of every plotted number."""
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    png = stem.with_name(stem.name + ".png")
    _write_png(fig, png)
    csv_path = stem.with_name(stem.name + ".csv")
    _write_csv(rows, csv_path)
    return png, csv_path


def panel_letters(n: int) -> List[Optional[str]]:
    """The letters of n panels in one image: (a), (b), ...; a single panel
    gets none (its CSV rows say panel "a")."""
    return [None] if n == 1 else [chr(ord("a") + i) for i in range(n)]


def save_panels(path_stem: PathLike, figures: Sequence[Figure], title: Optional[str] = None,
                ncols: Optional[int] = None, panel_size: Tuple[float, float] = (4.6, 3.5)) -> Tuple[Path, Path]:
    """Draws `figures` as panels (a), (b), ... of one image (a single figure
    gets no letter) and writes ``stem.png`` + ``stem.csv``; returns both paths."""
    import matplotlib

    figures = list(figures)
    if not figures:
        raise ValueError("save_panels: no figures")
    stem = _stem(path_stem)
    n = len(figures)
    ncols = ncols or n
    nrows = (n + ncols - 1) // ncols
    letters = panel_letters(n)
    rows: List[dict] = []
    with matplotlib.rc_context(_RC):
        fig = _new_figure(panel_size[0] * ncols, panel_size[1] * nrows + (0.3 if title else 0))
        for i, f in enumerate(figures):
            ax = fig.add_subplot(nrows, ncols, i + 1)
            f._draw(ax, letters[i])
            rows.extend(f.rows(letters[i] or "a"))
        return _finish(fig, rows, stem, title)


def _bar_references(ax, references, letter, groups, column, group, y_label) -> List[dict]:
    """The paper's values on one bar subplot: hollow black diamonds; their CSV rows."""
    rows = []
    for j, g in enumerate(groups):
        if (letter, g) not in references:
            continue
        v, source = references[(letter, g)]
        ax.plot([j], [v], linestyle="none", marker="D", markerfacecolor="none", markeredgecolor="#000000",
                zorder=4, label=f"{source} (paper)" if not rows else None)
        rows.append({"panel": letter, "series": g, "kind": "reference", "x": column, "y": v,
                     "x_label": group, "y_label": y_label, "source": source})
    if rows:
        ax.legend(loc="best")
    return rows


def _float(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def bar_table(table: Any, metrics: Sequence[Tuple[str, str, str]], path_stem: PathLike, title: str,
              group: str = "protocol", logy: bool = False,
              references: Optional[Mapping[Tuple[str, str], Tuple[float, str]]] = None,
              errors: Optional[Mapping[str, str]] = None) -> Tuple[Path, Path]:
    """Grouped bars: one subplot per metric, one bar per `group` value
    (protocol), the value written on each bar ("n/a" where it is missing).
    references: (panel letter, group value) -> (a paper's value, its source),
    drawn as a hollow marker on that bar (kind "reference" in the CSV).
    errors: metric column -> column of the half-width of its 95 % confidence
    interval, drawn as an error bar (kind "ci95_half" in the CSV; NaN: none).

    table: a pandas DataFrame or a list of dicts with a `group` column.
    metrics: (column, name, unit) per subplot, e.g. ("time_s", "time", "s").
    Writes ``stem.png`` and ``stem.csv`` (series = group value, kind "sim",
    x = the metric's column name, y = the value, panel = a, b, ...).
    """
    import matplotlib

    records = table.to_dict("records") if hasattr(table, "to_dict") else [dict(r) for r in table]
    if not records:
        raise ValueError("bar_table: no rows")
    if not metrics:
        raise ValueError("bar_table: no metrics")
    groups = [str(r[group]) for r in records]
    stem = _stem(path_stem)
    n = len(metrics)
    letters = panel_letters(n)
    rows: List[dict] = []
    with matplotlib.rc_context(_RC):
        fig = _new_figure(max(4.2, 0.9 * len(groups) + 1.6) * n, 3.3 + (0.3 if title else 0))
        for i, (column, name, unit) in enumerate(metrics):
            ax = fig.add_subplot(1, n, i + 1)
            y_label = _axis_label(name, unit, "y")
            vals = [_float(r.get(column)) for r in records]
            xs = list(range(len(groups)))
            heights = [0.0 if math.isnan(v) else v for v in vals]
            colors = [PALETTE[j % len(PALETTE)] for j in xs]
            ax.bar(xs, heights, color=colors, width=0.6, zorder=3)
            halves = [_float(r.get((errors or {}).get(column, ""))) for r in records]
            if any(not math.isnan(h) for h in halves):
                ax.errorbar(xs, heights, yerr=[0.0 if math.isnan(h) else h for h in halves], fmt="none",
                            ecolor="black", capsize=3, zorder=4)
                heights = [h + (0.0 if math.isnan(e) else e) for h, e in zip(heights, halves)]
            top = max([h for h in heights if h > 0], default=1.0)
            for x, v in zip(xs, vals):
                text = "n/a" if math.isnan(v) else f"{v:.4g}"
                ax.annotate(text, (x, 0 if math.isnan(v) else v), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7)
            if logy:
                ax.set_yscale("log")
            else:
                ax.set_ylim(0, top * 1.15)
            ax.set_xticks(xs)
            ax.set_xticklabels(groups)
            ax.set_xlabel(group)
            ax.set_ylabel(y_label)
            ax.grid(axis="x", visible=False)
            ax.set_title(name if letters[i] is None else f"({letters[i]}) {name}")
            for g, v, h in zip(groups, vals, halves):
                rows.append({"panel": letters[i] or "a", "series": g, "kind": "sim", "x": column, "y": v,
                             "x_label": group, "y_label": y_label, "source": ""})
                if not math.isnan(h):
                    rows.append({"panel": letters[i] or "a", "series": g, "kind": "ci95_half", "x": column, "y": h,
                                 "x_label": group, "y_label": y_label, "source": ""})
            rows.extend(_bar_references(ax, references or {}, letters[i] or "a", groups, column, group, y_label))
        return _finish(fig, rows, stem, title)
