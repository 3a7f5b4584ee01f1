"""`inasim schema`: the scenario's JSON Schema and docs/SCENARIO.md's key
tables, both made from the declaration of every key (spec::Section).

The schema must accept every shipped scenario (scenarios/**/*.json) and
reject what `inasim validate` rejects for being unknown or out of range;
the docs' generated regions must be exactly what the code declares
(scripts/update-scenario-docs.py rewrites them).

Run by ctest (test `python_scenario_schema`) with INASIM_BIN, or by hand:

    INASIM_BIN=build/inasim /usr/bin/python3 -m pytest tests/python/test_scenario_schema.py
"""

import copy
import importlib.util
import json
import os
import subprocess

import jsonschema
import pytest

from helpers import SOURCE_DIR

BIN = os.environ.get("INASIM_BIN")
if not BIN or not os.access(BIN, os.X_OK):
    pytest.skip("INASIM_BIN is not set to the inasim binary", allow_module_level=True)


def inasim(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def schema():
    r = inasim("schema")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.fixture(scope="module")
def validator(schema):
    return jsonschema.Draft202012Validator(schema)


def shipped_scenarios():
    # Sweep definitions and figure inputs that are not scenarios live next to them.
    for f in sorted((SOURCE_DIR / "scenarios").rglob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "topology" in doc:
            yield f


def test_schema_is_draft_2020_12_of_the_whole_scenario(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["required"] == ["topology"]
    top = set(schema["properties"])
    assert top == {"name", "description", "seed", "topology", "links", "switch", "host", "workload", "background",
                   "stop", "outputs", "faults"}
    # Every registered protocol's own section is in it (from the registry, not a list here).
    protocols = json.loads(inasim("protocols", "--json").stdout)
    text = json.dumps(schema)
    for p in protocols:
        if p["section"]:
            assert f'"{p["section"]}"' in text, p["name"]


def test_every_shipped_scenario_validates(validator):
    files = list(shipped_scenarios())
    assert len(files) > 20
    for f in files:
        doc = json.loads(f.read_text(encoding="utf-8"))
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, f"{f.relative_to(SOURCE_DIR)}: {errors}"
        assert inasim("validate", str(f)).returncode == 0, f  # and inasim agrees


DEFAULT = {"topology": {"type": "single_rack", "hosts": 4}}


@pytest.mark.parametrize("path, value", [
    (["workload", "windw"], 8),                                      # unknown key in the workload
    (["links", "mtu"], 1500),                                        # unknown key in a core section
    (["workload", "switchml", "pool_sise"], 64),                     # unknown key in a protocol's section
    (["workload", "ring", "window_packets"], 0),                     # below the minimum
    (["links", "mtu_bytes"], 9217),                                  # above the maximum
    (["workload", "switchml", "elements_per_packet"], 128),          # not one of 64, 256
    (["workload", "bytes"], 6),                                      # not a multiple of 4
    (["topology", "k"], 4),                                          # a fat_tree key in a single_rack
    (["switch", "forwarding"], "random"),                            # not an option
    (["background", "flows", "tcp", "variant"], "bbr"),
])
def test_schema_rejects_what_validate_rejects(validator, tmp_path, path, value):
    doc = copy.deepcopy(DEFAULT)
    if path[:2] == ["workload", "switchml"]:
        doc["workload"] = {"protocol": "switchml"}
    if path[0] == "background":
        doc["background"] = {"flows": {"stop_us": 100}}
    node = doc
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    assert not validator.is_valid(doc), doc
    f = tmp_path / "s.json"
    f.write_text(json.dumps(doc))
    r = inasim("validate", str(f))
    assert r.returncode == 2, r.stdout
    assert r.stderr.startswith("inasim: " + ".".join(path[:1]) ), r.stderr


def test_schema_follows_the_variants(validator):
    # Another protocol's section is refused, as `validate` refuses it ("only read with protocol ...").
    assert validator.is_valid({**DEFAULT, "workload": {"protocol": "switchml", "switchml": {"pool_size": 64}}})
    assert not validator.is_valid({**DEFAULT, "workload": {"protocol": "switchml", "canary": {}}})
    # The default protocol's section needs no "protocol"; keys of another workload type are refused.
    assert validator.is_valid({**DEFAULT, "workload": {"ring": {"window_packets": 8}}})
    assert validator.is_valid({**DEFAULT, "workload": {"type": "permutation", "flow_bytes": 1000}})
    assert not validator.is_valid({**DEFAULT, "workload": {"flow_bytes": 1000}})
    assert not validator.is_valid({**DEFAULT, "workload": {"type": "none", "hosts": "all"}})
    assert not validator.is_valid({"topology": {"type": "leaf_spine", "leaves": 2, "spines": 2}})  # hosts_per_leaf
    assert not validator.is_valid({"links": {}})  # topology is required


def load_docs_script():
    spec = importlib.util.spec_from_file_location("update_scenario_docs",
                                                  SOURCE_DIR / "scripts" / "update-scenario-docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_tables_are_the_declarations():
    docs = load_docs_script()
    text = (SOURCE_DIR / "docs" / "SCENARIO.md").read_text(encoding="utf-8")
    tables = docs.generated(BIN)
    assert len(tables) > 20
    assert docs.problems(text, tables) == [], \
        "docs/SCENARIO.md is out of date: /usr/bin/python3 scripts/update-scenario-docs.py --inasim " + BIN
    # The check can fail: a changed cell is found, and splice() puts it right.
    name = next(iter(tables))
    stale = text.replace(tables[name], tables[name].replace("|", "| x", 1), 1)
    assert docs.problems(stale, tables) == [f"{name}: differs from the declaration"]
    assert docs.splice(stale, tables) == text


def test_schema_help_and_usage_errors():
    r = inasim("schema", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: inasim schema [--markdown]")
    r = inasim("schema", "--yaml")
    assert r.returncode == 2 and r.stderr.startswith('inasim: schema: unknown option "--yaml"')
    assert "inasim schema [--markdown]" in inasim("--help").stdout
