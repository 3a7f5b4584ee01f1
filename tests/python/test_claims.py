"""Paper claims as data (python/inasim/claims.py, docs/PAPER-CLAIMS.md): every
verdict from a figure CSV whose numbers are known, every claims file in the
tree loads, and a bad claims file names its field."""

import copy
import json
import subprocess
import sys

import pytest

from helpers import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "python"))
from inasim import claims as cl  # noqa: E402
from inasim import fidelity  # noqa: E402

FIG = {"script": "analysis/fig_switchml_ate.py", "scenario": "scenarios/switchml/fig3-ate.json", "scaling": None}
#: A figure CSV (plot.py's columns): panel a holds "A" rising, "B" flat, "C" falling.
CSV = """panel,series,kind,x,y,x_label,y_label,source,util
a,A,sim,4,10.0,w,g,,
a,A,sim,8,20.0,w,g,,0.5
a,A,sim,16,40.0,w,g,,
a,B,sim,4,30.0,w,g,,
a,B,sim,8,30.0,w,g,,
a,C,sim,4,50.0,w,g,,
a,C,sim,8,25.0,w,g,,
a,A,reference,4,999,w,g,paper,
"""


def claim(cid, kind, paper, ours, **kw):
    c = {"id": cid, "source": {"where": "Fig. 1", "page": 1, "quote": "read off the plot"}, "setup": "s",
         "scope": "in", "kind": kind, "paper": paper, "ours": ours, "status": "runs"}
    c.update(kw)
    return c


def pt(series, x=None, **kw):
    p = {"figure": "figx", "panel": "a", "series": series}
    if x is not None:
        p["x"] = x
    p.update(kw)
    return p


CLAIMS = [
    claim("v-within", "value", {"value": 21.0, "unit": "g"}, pt("A", 8)),          # 20 / 21: within
    claim("v-off", "value", {"value": 10.0, "unit": "g"}, pt("A", 8)),             # 2.0: off
    claim("v-scaled", "value", {"value": 0.02, "unit": "kg"}, pt("A", 8, scale=1e-3)),  # 20 g = 0.02 kg
    claim("r-within", "ratio", {"value": 2.0, "of": "A/A"}, {"numerator": pt("A", 16), "denominator": pt("A", 8)}),
    claim("r-trend", "ratio", {"value": 4.0, "of": "A/A"}, {"numerator": pt("A", 16), "denominator": pt("A", 8)}),
    claim("r-reversed", "ratio", {"value": 0.5, "of": "A/A"}, {"numerator": pt("A", 16), "denominator": pt("A", 8)}),
    claim("s-within", "series", {"unit": "g", "points": [[4, 11], [8, 19], [16, 42]]}, pt("A")),
    claim("s-trend", "series", {"unit": "g", "points": [[4, 5], [8, 50], [16, 60]]}, pt("A")),
    claim("s-reversed", "series", {"unit": "g", "points": [[4, 25], [8, 50]]}, pt("C")),
    claim("s-off", "series", {"unit": "g", "points": [[4, 10], [8, 60]]}, pt("B")),  # paper rises, ours flat
    claim("s-partial", "series", {"unit": "g", "points": [[4, 10], [8, 20], [32, 80]]}, pt("A")),
    claim("o-right", "ordering", {"order": ["C", "B", "A"], "better": "higher", "metric": "g"},
          {"items": {"A": pt("A", 4), "B": pt("B", 4), "C": pt("C", 4)}}),
    claim("o-reversed", "ordering", {"order": ["A", "C"], "better": "higher", "metric": "g"},
          {"items": {"A": pt("A", 4), "C": pt("C", 4)}}),
    claim("b-holds", "bound", {"op": "<=", "value": 30, "unit": "g"}, pt("A", 8)),
    claim("b-violated", "bound", {"op": ">=", "value": 30, "unit": "g"}, pt("A", 8)),
    claim("missing-x", "value", {"value": 1.0, "unit": "g"}, pt("A", 64)),
    claim("not-repro", "value", {"value": 1.0, "unit": "g"}, None, status="not reproduced: no such scenario"),
    {"id": "out-1", "source": {"where": "Table 3", "quote": "q"}, "setup": "s", "scope": "out",
     "why_out": "FPGA resources"},
    claim("v-column", "value", {"value": 48, "unit": "%"}, pt("A", 8, column="util", scale=100)),
    claim("b-pair", "bound", {"op": "<=", "value": 0.6, "unit": "A/B"}, {"numerator": pt("A", 8), "denominator": pt("B", 8)}),
    claim("r-matches", "ratio", {"value": 1, "of": "A/A"}, {"numerator": pt("A", 16), "denominator": pt("A", 8)}),
]
EXPECTED = {
    "v-within": ("within 15 %", "20"), "v-off": ("off", "20"), "v-scaled": ("within 15 %", "0.02"),
    "r-within": ("within 15 %", "2x"), "r-trend": ("trend right", "2x"), "r-reversed": ("reversed", "2x"),
    "r-matches": ("off", "2x"), "v-column": ("within 15 %", "50"), "b-pair": ("violated", "0.6667"),
    "s-within": ("within 15 %", "4: 10, 8: 20, 16: 40"), "s-trend": ("trend right", "4: 10, 8: 20, 16: 40"),
    "s-reversed": ("reversed", "4: 50, 8: 25"), "s-off": ("off", "4: 30, 8: 30"),
    "s-partial": ("within 15 %", "4: 10, 8: 20"),
    "o-right": ("trend right", "C: 50, B: 30, A: 10"), "o-reversed": ("reversed", "C: 50, A: 10"),
    "b-holds": ("holds", "20"), "b-violated": ("violated", "20"),
    "missing-x": ("not run", ""), "not-repro": ("not run", ""), "out-1": ("out of scope", ""),
}


def book_doc(claims=None):
    return {"schema": cl.SCHEMA,
            "paper": {"id": "toy-paper", "name": "Toy", "title": "T", "venue": "V", "text": "t.txt"},
            "figures": {"figx": FIG}, "claims": copy.deepcopy(CLAIMS if claims is None else claims)}


@pytest.fixture()
def tree(tmp_path):
    """A claims file at scenarios/toy/ and a figure CSV under out/."""
    (tmp_path / "scenarios" / "toy").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "figx.csv").write_text(CSV)
    for f in (FIG["script"], FIG["scenario"]):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    return tmp_path


def write_book(tree, doc):
    p = tree / "scenarios" / "toy" / "paper-claims.json"
    p.write_text(json.dumps(doc))
    return p


def test_every_verdict_from_known_numbers(tree):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    tables = cl.FigureTables(tree / "out")
    got = {c["id"]: cl.evaluate(c, tables) for c in book.claims}
    assert {k: (v.verdict, v.ours) for k, v in got.items()} == EXPECTED
    assert got["v-off"].ratio == pytest.approx(2.0)
    assert got["s-trend"].ratio == pytest.approx(2.0)          # the point furthest from 1: 10 / 5
    assert got["s-partial"].note == "2 of 3 points run"
    assert got["missing-x"].note == 'no row of panel a, series "A" at x = 64 in figx.csv'
    assert got["not-repro"].note == "not reproduced: no such scenario"


def test_missing_figure_is_not_run_and_says_where(tree):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    v = cl.evaluate(book.claims[0], cl.FigureTables(tree / "elsewhere"))
    assert (v.verdict, v.note) == ("not run", f"{tree / 'elsewhere' / 'figx.csv'} not there (run the figure)")


def test_small_run_uses_its_override_or_says_why_not(tree):
    c1 = claim("a", "value", {"value": 40.0, "unit": "g"}, pt("A", 8),
               small={"survives": True, "verdict": "within", "why": "same", "ours": pt("A", 16)})
    c2 = claim("b", "value", {"value": 40.0, "unit": "g"}, pt("A", 8),
               small={"survives": False, "why": "4 hosts at 128"})
    book = cl.load(write_book(tree, book_doc([c1, c2])), repo=tree)
    tables = cl.FigureTables(tree / "out")
    assert cl.evaluate(book.claims[0], tables, small=True).verdict == "within 15 %"
    assert cl.evaluate(book.claims[0], tables, small=False).verdict == "off"
    v = cl.evaluate(book.claims[1], tables, small=True)
    assert (v.verdict, v.note) == ("not run", "does not survive the reduced run: 4 hosts at 128")


def test_tolerance_is_per_claim(tree):
    c = claim("t", "value", {"value": 22.0, "unit": "g"}, pt("A", 8), tolerance=0.05)
    book = cl.load(write_book(tree, book_doc([c])), repo=tree)
    assert cl.evaluate(book.claims[0], cl.FigureTables(tree / "out")).verdict == "off"   # 20/22: 9 % > 5 %


def test_reference_series_in_the_plot_unit(tree):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    refs = {label: (xs, ys) for label, xs, ys, _ in cl.reference_series(book, "figx", "a")}
    assert refs["A"][0][:4] == [8, 8, 8, 4]            # v-within, v-off, v-scaled, then s-within
    assert refs["A"][1][2] == 0.02 / 1e-3 and refs["A"][1][:2] == [21.0, 10.0]
    assert cl.reference_series(book, "figx", "b") == []


BAD = [
    (lambda d: d.update(schema="x"), 'schema: must be "inasim-paper-claims/1", got "x"'),
    (lambda d: d["paper"].pop("title"), "paper.title: missing"),
    (lambda d: d["figures"]["figx"].update(script="nope.py"), 'figures.figx.script: no such file "nope.py"'),
    (lambda d: d["claims"][0].update(id="Bad Id"), "claims[0].id: \"Bad Id\" must be lower-case"),
    (lambda d: d["claims"][1].update(id="v-within"), 'claims[1].id: "v-within" is used twice'),
    (lambda d: d["claims"][0].update(kind="guess"), 'claims["v-within"].kind: must be one of value'),
    (lambda d: d["claims"][0]["paper"].update(value="21"), 'claims["v-within"].paper.value: must be a number, got "21"'),
    (lambda d: d["claims"][0]["ours"].update(figure="figy"),
     'claims["v-within"].ours.figure: "figy" is not in this file\'s "figures"'),
    (lambda d: d["claims"][0].update(status="maybe"), 'claims["v-within"].status: must be "runs" or'),
    (lambda d: d["claims"][0].update(scope="out"), 'claims["v-within"].why_out: missing'),
    (lambda d: d["claims"][6]["paper"].update(points=[[4, 1]]), "points: a series needs 2 or more"),
    (lambda d: d["claims"][11]["ours"]["items"].pop("A"), "ours.items: must name exactly the labels"),
    (lambda d: d["claims"][13]["paper"].update(op="<"), 'paper.op: must be "<=" or ">=", got "<"'),
    (lambda d: d["claims"][0].update(tolerance=1.5), "tolerance: must be in (0, 1), got 1.5"),
]


@pytest.mark.parametrize("spoil,message", BAD)
def test_bad_claims_file_names_the_field(tree, spoil, message):
    doc = book_doc()
    spoil(doc)
    path = write_book(tree, doc)
    with pytest.raises(cl.ClaimsError) as e:
        cl.load(path, repo=tree)
    assert str(e.value).startswith(f"{path}: ") and message in str(e.value), str(e.value)


def test_every_paper_has_a_claims_file_that_loads():
    books = cl.find_all()      # ClaimsError on any file not as docs/PAPER-CLAIMS.md says
    assert [b.protocol for b in books] == ["canary", "p4sgd", "panama", "switchml"]
    for b in books:
        assert b.claims, b.path


def test_dashboard_rows_and_tally(tree):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    rows = fidelity.dashboard([book], cl.FigureTables(tree / "out"), small=False)
    t = fidelity.tallies(rows)["Toy"]
    assert t == {"claims": 21, "within": 6, "trend right": 3, "holds": 1, "off": 3, "reversed": 3,
                 "violated": 2, "not run": 2, "out of scope": 1}
    md = fidelity.markdown(rows, fidelity.tallies(rows))
    assert "Toy: 21 claims: 6 within, 3 trend right, 1 holds, 3 off, 3 reversed, 2 violated, 2 not run, " \
           "1 out of scope" in md
    assert "| v-off | Fig. 1 | ~10 g | 20 | 2.000 | off |" not in md      # "~" only for read: plot
    assert "| v-off | Fig. 1 | 10 g | 20 | 2.000 | off |" in md


def test_cli_bad_protocol_exit_2_writes_nothing(tmp_path):
    r = subprocess.run([sys.executable, "-m", "inasim", "fidelity", "--protocol", "nosuch", "--out",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 2
    assert 'no claims file for "nosuch"' in r.stderr
    assert not (tmp_path / "o").exists()


#: Points run at 3 seeds: "y" is their mean, "y_seeds" the values in seed order.
SEEDS_CSV = """panel,series,kind,x,y,x_label,y_label,source,y_seeds
a,D,sim,80,10.0,w,g,,9 10 11
a,E,sim,80,12.0,w,g,,8 13 15
a,F,sim,80,20.0,w,g,,19 20 21
a,G,sim,80,11.0,w,g,,
a,H,sim,80,30.0,w,g,,30 30
"""


@pytest.mark.parametrize("cid, order, verdict, ours, note", [
    # D beats E on the means and at seeds 2 and 3, not at seed 1 (8 < 9): split
    ("split", ["D", "E"], "seeds split", "D: 10, E: 12 (means of 3 seeds)", "the paper's order at 2 of 3 seeds"),
    ("all", ["D", "F"], "trend right", "D: 10, F: 20 (means of 3 seeds)", "the paper's order at 3 of 3 seeds"),
    ("none", ["F", "D"], "reversed", "D: 10, F: 20 (means of 3 seeds)", "the paper's order at 0 of 3 seeds"),
    # G has one seed, H two: the means decide, as without seeds
    ("one-seed", ["G", "D"], "reversed", "D: 10, G: 11", ""),
    ("unequal", ["D", "H"], "trend right", "D: 10, H: 30", ""),
])
def test_an_ordering_run_at_several_seeds_is_judged_seed_by_seed(tree, cid, order, verdict, ours, note):
    (tree / "out" / "figx.csv").write_text(SEEDS_CSV)
    c = claim(cid, "ordering", {"order": order, "better": "lower", "metric": "g"},
              {"items": {k: pt(k, 80) for k in order}})
    book = cl.load(write_book(tree, book_doc([c])), repo=tree)
    v = cl.evaluate(book.claims[0], cl.FigureTables(tree / "out"))
    assert (v.verdict, v.ours, v.note) == (verdict, ours, note)


def test_seeds_are_read_in_the_points_scale(tree):
    (tree / "out" / "figx.csv").write_text(SEEDS_CSV)
    tables = cl.FigureTables(tree / "out")
    assert tables.seeds(pt("E", 80, scale=1e-3)) == pytest.approx([8e-3, 13e-3, 15e-3])
    assert tables.seeds(pt("G", 80)) is None
    assert tables.seeds({"numerator": pt("D", 80), "denominator": pt("E", 80)}) is None
