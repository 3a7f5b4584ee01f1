"""The scenario READMEs' results tables are generated from data
(python/inasim/readme_tables.py, results_store.py): the committed READMEs
are exactly what their claims and committed results give, and a table
edited by hand, a committed CSV edited, or a figure whose script or
scenario changed since its recorded run is reported."""

import json
import subprocess
import sys

import pytest

from helpers import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "python"))
from inasim import claims as cl  # noqa: E402
from inasim import readme_tables as rt  # noqa: E402
from inasim import results_store as rs  # noqa: E402
from test_claims import CSV, book_doc, tree, write_book  # noqa: E402,F401  (tree: the toy fixture)

README = """# Toy

Prose stays as written.

<!-- fidelity:begin figx -->
typed by hand
<!-- fidelity:end figx -->

## Tally

<!-- fidelity:begin tally -->
<!-- fidelity:end tally -->

## Cost

<!-- fidelity:begin cost -->
<!-- fidelity:end cost -->
"""


def test_committed_readmes_are_what_the_data_gives():
    """Every README results table regenerates to itself, every committed
    figure CSV is the one its provenance recorded, and no figure's script or
    scenario changed since its run (else: `inasim fidelity --readme`, or
    re-run the figure and `--record`)."""
    books = cl.find_all(SOURCE_DIR)
    assert rt.problems(books, books, SOURCE_DIR) == []
    marked = [b.protocol for b in books if rt.blocks(rt.readme_of(b).read_text(), "")]
    assert marked == ["canary", "p4sgd", "panama", "switchml"]


def test_every_recorded_figure_has_its_provenance():
    for b in cl.find_all(SOURCE_DIR):
        for small in (False, True):
            for csv_path in sorted(rs.store_dir(b, small).glob("*.csv")):
                prov = rs.read_provenance(csv_path)
                assert prov is not None, csv_path
                assert prov["schema"] == rs.SCHEMA and prov["figure"] == csv_path.stem and prov["small"] == small
                assert prov["command"].startswith(b.figures[csv_path.stem]["script"])
                if b.figures[csv_path.stem].get("analytic"):  # computes, simulates nothing
                    assert prov["runs"] == 0 and not prov["seeds"], csv_path
                else:
                    assert prov["runs"] > 0 and prov["seeds"], csv_path


def toy(tree):
    """The toy book with its figure recorded and its README generated."""
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    rs.record([book], tree / "out", small=False, repetitions=None, repo=tree)
    rt.readme_of(book).write_text(README)
    (now, want), = rt.regenerate([book], [book]).values()
    rt.readme_of(book).write_text(want)
    return book


def test_generated_blocks_hold_the_claims_and_the_figure_numbers(tree):
    book = toy(tree)
    text = rt.readme_of(book).read_text()
    assert "typed by hand" not in text and "Prose stays as written." in text
    # v-within: the paper's 21 g, our 20 (figx.csv, panel a, "A" at 8), 0.952, full size; the toy claims have no "small".
    assert "| v-within | Fig. 1 | 21 g | 20 | 0.952 | within 15 % |  | does not survive reduction |" in text
    # The panel's numbers, x down and series across.
    assert "| w | A | B | C |" in text and "| 8 | 20 | 30 | 25 |" in text and "| 16 | 40 |  |  |" in text
    assert "| full size | 21 | 6 | 3 | 1 | 3 | 3 | 0 | 2 | 2 | 1 |" in text  # 0: seeds split
    assert "| figx | no runs recorded |" in text and "| all | | | | 0 (0.0 h) | |" in text
    assert rt.problems([book], [book], tree) == []


def test_cost_block_sums_the_recorded_wall_time_per_figure_and_seed(tree):
    book = toy(tree)
    prov_path = rs.store_dir(book, False) / "figx.provenance.json"
    prov = json.loads(prov_path.read_text())
    prov.update(runs=6, seeds=[1, 2, 3], sim_wall_s=5400.0)
    prov_path.write_text(json.dumps(prov))
    (now, want), = rt.regenerate([book], [book]).values()
    cost = want[want.index("<!-- fidelity:begin cost -->"):]
    assert f"| figx | `{prov['command']}` | 6 | 3 | 5,400 | 1,800 |" in cost
    assert "| all | | | | 5,400 (1.5 h) | |" in cost
    # The committed README still says 0 runs: --check names the block.
    assert any("cost differ from the data" in p for p in rt.problems([book], [book], tree))


def test_hand_edit_is_reported_and_readme_regenerates_it(tree):
    book = toy(tree)
    path = rt.readme_of(book)
    good = path.read_text()
    path.write_text(good.replace("| 8 | 20 | 30 | 25 |", "| 8 | 21 | 30 | 25 |"))
    found = rt.problems([book], [book], tree)
    assert len(found) == 1 and "block(s) figx differ from the data" in found[0], found
    (now, want), = rt.regenerate([book], [book]).values()
    assert want == good


def test_changed_scenario_and_edited_csv_are_stale(tree):
    book = toy(tree)
    (tree / "scenarios" / "switchml" / "fig3-ate.json").write_text("{}")
    found = rt.problems([book], [book], tree)
    assert any("stale, scenarios/switchml/fig3-ate.json changed since its run" in p for p in found), found
    csv_path = rs.store_dir(book, False) / "figx.csv"
    csv_path.write_text(CSV.replace("a,A,sim,8,20.0", "a,A,sim,8,21.0"))
    found = rt.problems([book], [book], tree)
    assert any("figx.csv: edited since it was recorded" in p for p in found), found


@pytest.mark.parametrize("text,message", [
    ("<!-- fidelity:begin figx -->\nx\n", 'README.md:1: "<!-- fidelity:begin figx -->" has no '
                                          '"<!-- fidelity:end figx -->"'),
    ("a\n<!-- fidelity:end figx -->\n", 'README.md:2: "<!-- fidelity:end figx -->" without its begin marker'),
    ("<!-- fidelity:begin nosuch -->\n<!-- fidelity:end nosuch -->\n", "fidelity:begin nosuch: not a figure of"),
])
def test_bad_markers_name_the_line(tree, text, message):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    rt.readme_of(book).write_text(text)
    with pytest.raises(rt.ReadmeError) as e:
        rt.regenerate([book], [book])
    assert message in str(e.value)


def test_record_writes_provenance_with_input_hashes(tree):
    book = cl.load(write_book(tree, book_doc()), repo=tree)
    written = rs.record([book], tree / "out", small=False, repetitions=3, repo=tree)
    assert [p.name for p in written] == ["figx.csv", "figx.provenance.json"]
    prov = json.loads(written[1].read_text())
    assert prov["command"] == "analysis/fig_switchml_ate.py"   # no --repetitions: the script has none
    assert set(prov["inputs"]) == {"analysis/fig_switchml_ate.py", "scenarios/switchml/fig3-ate.json"}
    assert prov["csv_sha256"] == rs.sha256(tree / "out" / "figx.csv")


def test_cli_check_with_readme_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "inasim", "fidelity", "--check", "--readme"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--check writes nothing" in r.stderr


def test_cli_check_passes_on_the_tree():
    r = subprocess.run([sys.executable, "-m", "inasim", "fidelity", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
