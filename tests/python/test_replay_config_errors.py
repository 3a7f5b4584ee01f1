"""`inasim-p4 replay PROGRAM --config`: every key of every program's config,
at every nesting level (list entries and nested objects included), is read
with its range checked and its JSON type checked, and an unknown key is an
error: a bad value exits 2 with a message naming the key, never silently
truncated, wrapped or replaced by the default (the issue: "The replay CLI
reads every config key with range checks (no silent truncation) and rejects
unknown keys").

Each case takes a valid config of its program (BASES, checked to replay by
test_base_configs_are_valid) and spoils exactly one value: one past the
C++ type's maximum (65536 for a uint16_t...), one past the key's declared or
validated range, -1, 1.5, a string, a boolean, null (refused inside list
entries; a top-level null is the key left out, as in scenario files), a
malformed address, an unknown key at that object's level. The keys and their types and ranges are
those of the config readers: protocols/<name>/dataplane/config.cc (and
keys.h), protocols/panama/dataplane/tree_switch.cc,
protocols/static_tree/dataplane/program.cc.
"""

import copy
import json
import subprocess

import pytest

from helpers import inasim_p4

P4 = inasim_p4()

# --- Valid configs, one or two per program: every key below is present in its base ---

BASES = {
    "switchml": ("switchml", {
        "switch_mac": "02:00:00:00:00:fe", "switch_ip": "10.0.0.254",
        "workers": [{"id": 0, "port": 1, "mac": "02:00:00:00:00:01", "ip": "10.0.0.1", "rkey": 7,
                     "qpns": [[1, 1]]}],
        "num_workers": 1, "elements_per_packet": 64, "pool_size": 128, "folded_pipe": False,
        "harvest3": "upstream", "multicast_group": 1, "udp_port": 48864, "udp_mask": 65520,
        "ingress_drop_probability": 0, "egress_drop_probability": 0, "drop_seed": 1, "transport": "udp",
        "partition_key": 65535, "message_size": 0, "pass_latency_ns": 520}),
    "p4sgd": ("p4sgd", {
        "mode": "paper", "num_workers": 1,
        "workers": [{"id": 0, "port": 0, "mac": "02:00:00:00:00:01", "ip": "10.0.0.1"}],
        "multicast_ports": [0], "slots": 65536, "pass_latency_ns": 520, "encap": "udp", "udp_port": 20050,
        "switch_mac": "02:00:00:00:00:fe", "switch_ip": "10.0.0.254"}),
    # public-p4 only keys (node_size, dev_ports, seq_sup are refused in paper mode).
    "p4sgd_public": ("p4sgd", {
        "mode": "public-p4", "num_workers": 1, "workers": [{"id": 0, "port": 0}], "node_size": 1,
        "dev_ports": [0, 4], "seq_sup": True, "claim_all_traffic": True}),
    "panama": ("panama", {
        "num_ports": 4, "claim_all_traffic": True, "accelerator_buffer_bytes": 67108864, "float_mode": "fpga",
        "latency": "equation", "slot_bytes": 1600,
        "latency_model": {"bus_bits": 64, "clock_mhz": 200, "adder_ns": 10, "fixed_ns": 25, "agg_fixed_ns": 10},
        "jobs": [{"jid": 1, "ports": [0, 1], "trees": 1, "quorum": 1, "port_workers": [1, 1, 1, 1],
                  "result": [0, 1]}]}),
    # A job with "tree_routes": the tree switch (tree_switch.cc) reads them, then the accelerator the rest.
    "panama_tree": ("panama", {
        "num_ports": 3,
        "jobs": [{"jid": 7, "ports": [0, 1], "tree_routes": [
            {"parent_port": 2, "children": [{"port": 0, "ip": "10.0.0.1", "mac": "02:00:0a:00:00:01"},
                                            {"port": 1}]}]}]}),
    "canary": ("canary", {
        "switch_address": 1, "switch_ip": "10.255.0.7", "switch_mac": "02:00:00:00:ff:07", "num_ports": 8,
        "udp_port": 45501, "elements_per_packet": 4, "table_size": 1024, "scan_entries_per_clock": 1,
        "index_hash": "crc32", "partitions": [{"application_id": 1, "base": 0, "size": 512}],
        "timeout_us": 1, "timeout_mode": "clock_scan", "clock_period_ns": 10, "multicast_shard_ports": 16,
        "multicast_groups_per_pass": 2, "pass_latency_ns": 520}),
    "static_tree": ("static_tree", {
        "switch_ip": "10.0.0.254", "switch_mac": "02:00:00:00:00:fe", "num_ports": 4, "udp_port": 45503,
        "elements_per_packet": 4, "slots_per_tree": 16, "pass_latency_ns": 520,
        "trees": [{"tree_id": 3, "child_ports": [0, 1], "parent_port": 3}]}),
}

# --- Every key: (base, path, kind, lo, hi) ---
# kind: u8/u16/u32/u64 (the C++ member), num (a double), time (a double in the
# key's unit, held in ps), bool, enum, mac, ip, list (an array), object,
# port_or_root (-1 or an unsigned port, held in an int32_t), pair ([qpn, psn]).
# lo/hi: the key's own range (declared or checked by Validate) where narrower
# than the type's; None: the type's.

U_MAX = {"u8": 2**8 - 1, "u16": 2**16 - 1, "u32": 2**32 - 1, "u64": 2**64 - 1}

W = ("workers", 0)
J = ("jobs", 0)
R = ("jobs", 0, "tree_routes", 0)
C = R + ("children", 0)
KEYS = [
    # switchml: protocols/switchml/dataplane/config.cc, keys.h
    ("switchml", ("switch_mac",), "mac", None, None),
    ("switchml", ("switch_ip",), "ip", None, None),
    ("switchml", ("workers",), "list", None, None),
    ("switchml", W, "object", None, None),
    ("switchml", W + ("id",), "u16", 0, 31),
    ("switchml", W + ("port",), "u16", None, None),
    ("switchml", W + ("mac",), "mac", None, None),
    ("switchml", W + ("ip",), "ip", None, None),
    ("switchml", W + ("rkey",), "u32", None, None),
    ("switchml", W + ("qpns",), "list", None, None),
    ("switchml", W + ("qpns", 0), "pair", None, None),
    ("switchml", W + ("qpns", 0, 0), "u32", 0, 0xFFFFFF),
    ("switchml", W + ("qpns", 0, 1), "u32", 0, 0xFFFFFF),
    ("switchml", ("num_workers",), "u8", 1, 32),
    ("switchml", ("elements_per_packet",), "u32", 1, 1 << 20),
    ("switchml", ("pool_size",), "u32", 1, 8192),
    ("switchml", ("folded_pipe",), "bool", None, None),
    ("switchml", ("harvest3",), "enum", None, None),
    ("switchml", ("multicast_group",), "u16", None, None),
    ("switchml", ("udp_port",), "u16", None, None),
    ("switchml", ("udp_mask",), "u16", None, None),
    ("switchml", ("ingress_drop_probability",), "num", 0, 1),
    ("switchml", ("egress_drop_probability",), "num", 0, 1),
    ("switchml", ("drop_seed",), "u64", None, None),
    ("switchml", ("transport",), "enum", None, None),
    ("switchml", ("partition_key",), "u16", None, None),
    ("switchml", ("message_size",), "u32", 0, 1 << 24),
    ("switchml", ("pass_latency_ns",), "time", 0, 1e6),
    # p4sgd: protocols/p4sgd/dataplane/config.cc, keys.h
    ("p4sgd", ("mode",), "enum", None, None),
    ("p4sgd", ("num_workers",), "u32", None, 32),  # 0: as many as `workers` lists
    ("p4sgd", ("workers",), "list", None, None),
    ("p4sgd", W, "object", None, None),
    ("p4sgd", W + ("id",), "u16", 0, 31),
    ("p4sgd", W + ("port",), "u16", None, None),
    ("p4sgd", W + ("mac",), "mac", None, None),
    ("p4sgd", W + ("ip",), "ip", None, None),
    ("p4sgd", ("multicast_ports",), "list", None, None),
    ("p4sgd", ("multicast_ports", 0), "u16", None, None),
    ("p4sgd", ("slots",), "u32", 1, 65536),
    ("p4sgd", ("pass_latency_ns",), "time", 0, 1e6),
    ("p4sgd", ("encap",), "enum", None, None),
    ("p4sgd", ("udp_port",), "u16", 1, 65535),
    ("p4sgd", ("switch_mac",), "mac", None, None),
    ("p4sgd", ("switch_ip",), "ip", None, None),
    ("p4sgd_public", ("node_size",), "u32", 1, 1 << 20),
    ("p4sgd_public", ("dev_ports",), "list", None, None),
    ("p4sgd_public", ("dev_ports", 0), "u16", 0, 511),
    ("p4sgd_public", ("seq_sup",), "bool", None, None),
    ("p4sgd_public", ("claim_all_traffic",), "bool", None, None),
    # panama: protocols/panama/dataplane/config.cc, keys.h, tree_switch.cc
    ("panama", ("num_ports",), "u32", 1, 64),
    ("panama", ("claim_all_traffic",), "bool", None, None),
    ("panama", ("accelerator_buffer_bytes",), "u64", 1, 1 << 40),
    ("panama", ("float_mode",), "enum", None, None),
    ("panama", ("latency",), "enum", None, None),
    ("panama", ("slot_bytes",), "u32", 1, 1 << 20),
    ("panama", ("latency_model",), "object", None, None),
    ("panama", ("latency_model", "bus_bits"), "u32", 8, None),
    ("panama", ("latency_model", "clock_mhz"), "num", 1e-6, 1e6),
    ("panama", ("latency_model", "adder_ns"), "num", 0, 1e9),
    ("panama", ("latency_model", "fixed_ns"), "num", 0, 1e9),
    ("panama", ("latency_model", "agg_fixed_ns"), "num", 0, 1e9),
    ("panama", ("jobs",), "list", None, None),
    ("panama", J, "object", None, None),
    ("panama", J + ("jid",), "u16", None, None),
    ("panama", J + ("ports",), "list", None, None),
    ("panama", J + ("ports", 0), "u32", 0, 63),
    ("panama", J + ("trees",), "u32", 1, 256),
    ("panama", J + ("quorum",), "num", 1e-9, 1),
    ("panama", J + ("port_workers",), "list", None, None),
    ("panama", J + ("port_workers", 0), "u32", None, None),
    ("panama", J + ("result",), "enum", None, None),
    ("panama", J + ("result", 0), "u16", None, None),
    ("panama_tree", J + ("tree_routes",), "list", None, None),
    ("panama_tree", R, "object", None, None),
    ("panama_tree", R + ("parent_port",), "port_or_root", 0, 63),
    ("panama_tree", R + ("children",), "list", None, None),
    ("panama_tree", C, "object", None, None),
    ("panama_tree", C + ("port",), "u16", 0, 63),
    ("panama_tree", C + ("ip",), "ip", None, None),
    ("panama_tree", C + ("mac",), "mac", None, None),
    # canary: protocols/canary/dataplane/config.cc, keys.h
    ("canary", ("switch_address",), "u16", None, None),
    ("canary", ("switch_ip",), "ip", None, None),
    ("canary", ("switch_mac",), "mac", None, None),
    ("canary", ("num_ports",), "u32", 1, 64),
    ("canary", ("udp_port",), "u16", None, None),
    ("canary", ("elements_per_packet",), "u32", 1, (9216 - 47) // 4),
    ("canary", ("table_size",), "u32", 1, 1 << 24),
    ("canary", ("scan_entries_per_clock",), "u32", 1, 1024),  # at most table_size (1024 in the base)
    ("canary", ("index_hash",), "enum", None, None),
    ("canary", ("partitions",), "list", None, None),
    ("canary", ("partitions", 0), "object", None, None),
    ("canary", ("partitions", 0, "application_id"), "u8", None, None),
    ("canary", ("partitions", 0, "base"), "u32", None, None),
    ("canary", ("partitions", 0, "size"), "u32", 1, None),
    ("canary", ("timeout_us",), "time", 0.001, 1e6),
    ("canary", ("timeout_mode",), "enum", None, None),
    ("canary", ("clock_period_ns",), "time", 0.001, 1e9),
    ("canary", ("multicast_shard_ports",), "u32", 1, 31),
    ("canary", ("multicast_groups_per_pass",), "u32", 1, 1 << 20),
    ("canary", ("pass_latency_ns",), "time", 0, 1e6),
    # static_tree: protocols/static_tree/dataplane/program.cc, keys.h
    ("static_tree", ("switch_ip",), "ip", None, None),
    ("static_tree", ("switch_mac",), "mac", None, None),
    ("static_tree", ("num_ports",), "u32", 1, 64),
    ("static_tree", ("udp_port",), "u16", None, None),
    ("static_tree", ("elements_per_packet",), "u32", 1, (9216 - 47) // 4),
    ("static_tree", ("slots_per_tree",), "u32", 1, 1 << 20),
    ("static_tree", ("pass_latency_ns",), "time", 0, 1e6),
    ("static_tree", ("trees",), "list", None, None),
    ("static_tree", ("trees", 0), "object", None, None),
    ("static_tree", ("trees", 0, "tree_id"), "u32", None, None),
    ("static_tree", ("trees", 0, "child_ports"), "list", None, None),
    ("static_tree", ("trees", 0, "child_ports", 0), "u16", 0, 63),
    ("static_tree", ("trees", 0, "parent_port"), "port_or_root", 0, 63),
]

# The objects of each base that must refuse a key they do not know.
OBJECT_LEVELS = [
    ("switchml", ()), ("switchml", W),
    ("p4sgd", ()), ("p4sgd", W), ("p4sgd_public", ()),
    ("panama", ()), ("panama", ("latency_model",)), ("panama", J),
    ("panama_tree", ()), ("panama_tree", J), ("panama_tree", R), ("panama_tree", C),
    ("canary", ()), ("canary", ("partitions", 0)),
    ("static_tree", ()), ("static_tree", ("trees", 0)),
]


def key_name(path):
    """What the message must name: the innermost key (a list entry: its list)."""
    return [p for p in path if isinstance(p, str)][-1]


def path_id(path):
    return "".join(f"[{p}]" if isinstance(p, int) else ("." if i else "") + p for i, p in enumerate(path))


def spoiled(base, path, value):
    cfg = copy.deepcopy(BASES[base][1])
    node = cfg
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return cfg


def bad_values(kind, lo, hi):
    """(label, value) pairs no reader may accept for a key of `kind`."""
    if kind in U_MAX:
        top = U_MAX[kind]
        out = [("type_max+1", top + 1)]
        if hi is not None and hi < top:
            out.append(("range_max+1", hi + 1))
        if lo:
            out.append(("range_min-1", lo - 1))
        return out + [("negative", -1), ("fraction", 1.5), ("string", "1"), ("bool", True), ("array", [1])]
    if kind == "port_or_root":
        return [("type_max+1", 2**31), ("range_max+1", hi + 1), ("minus_two", -2), ("fraction", 1.5),
                ("string", "1"), ("bool", True)]
    if kind in ("num", "time"):
        out = [("range_max*10", hi * 10), ("huge", 1e300), ("string", "1"), ("bool", True), ("array", [1])]
        if lo is not None:
            out.append(("below_range", 0 if lo > 0 else -1))
        return out
    if kind == "bool":
        return [("string", "true"), ("integer", 1)]
    if kind == "enum":
        return [("unknown_name", "bogus"), ("integer", 1)]
    if kind == "mac":
        return [("malformed", "zz"), ("integer", 1),
                ("signed_byte", "-1:00:00:00:00:01")]  # sscanf %2x takes the sign: silently ff:00:...
    if kind == "ip":
        return [("malformed", "zz"), ("integer", 1),
                ("octet_past_uint32", "4294967297.0.0.1")]  # sscanf %u wraps it: silently 1.0.0.1
    if kind == "list":
        return [("object", {}), ("integer", 1)]
    if kind == "object":
        return [("array", []), ("integer", 1)]
    if kind == "pair":
        return [("three_items", [1, 2, 3]), ("one_item", [1]), ("object", {})]
    raise AssertionError(kind)


def cases_bad_values():
    for base, path, kind, lo, hi in KEYS:
        for label, value in bad_values(kind, lo, hi):
            yield pytest.param(BASES[base][0], spoiled(base, path, value), key_name(path),
                               id=f"{base}:{path_id(path)}={label}")


def cases_unknown_keys():
    for base, path in OBJECT_LEVELS:
        cfg = copy.deepcopy(BASES[base][1])
        node = cfg
        for p in path:
            node = node[p]
        node["no_such_key"] = 1
        yield pytest.param(BASES[base][0], cfg, "no_such_key", id=f"{base}:{path_id(path) or '(top)'}")


def cases_nulls(top_level):
    for base, path, kind, lo, hi in KEYS:
        if isinstance(path[-1], int) or (len(path) == 1) != top_level:
            continue  # a list entry: null is simply a wrong type there, not an absent key
        yield pytest.param(BASES[base][0], spoiled(base, path, None), key_name(path),
                           id=f"{base}:{path_id(path)}=null")


def without(config, key):
    cfg = copy.deepcopy(config)
    del cfg[key]
    return cfg


def replay(tmp_path, program, config):
    """The CompletedProcess, its stderr with the config's path (which could
    itself spell a key name) replaced by CFG."""
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(config))
    p = subprocess.run([str(P4), "replay", program, "--config", str(cfg)], input="", capture_output=True,
                       text=True, timeout=30)
    p.stderr = p.stderr.replace(str(cfg), "CFG")
    return p


def assert_refused(p, key, unknown=False):
    """Exit 2, the tool's message (not an internal error), naming `key`."""
    assert p.returncode == 2, f"exit {p.returncode} (expected 2: refused), stderr: {p.stderr!r}"
    assert p.stderr.startswith("inasim-p4: CFG: ") and "internal error" not in p.stderr, p.stderr
    assert key in p.stderr, f"the message does not name {key!r}: {p.stderr!r}"
    if not unknown:
        assert "unknown key" not in p.stderr, f"a known key reported as unknown: {p.stderr!r}"


@pytest.mark.parametrize("base", sorted(BASES))
def test_base_configs_are_valid(tmp_path, base):
    program, config = BASES[base]
    p = replay(tmp_path, program, config)
    assert p.returncode == 0, p.stderr


def test_every_base_key_is_covered():
    """KEYS lists every key each base config sets (for some base of the same
    program), so that no key goes unprobed."""
    def paths(node, at=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield at + (k,)
                yield from paths(v, at + (k,))
        elif isinstance(node, list) and node:
            yield at + (0,)
            yield from paths(node[0], at + (0,))
    listed = {(BASES[base][0], path) for base, path, *_ in KEYS}
    for program, config in BASES.values():
        for path in paths(config):
            if isinstance(path[-1], int) and (program, path) not in listed:
                continue  # an entry of a list whose entries are probed through their keys
            assert (program, path) in listed, (program, path)


@pytest.mark.parametrize("program,config,key", list(cases_bad_values()))
def test_out_of_range_or_mistyped_value_is_refused_naming_the_key(tmp_path, program, config, key):
    assert_refused(replay(tmp_path, program, config), key)


@pytest.mark.parametrize("program,config,key", list(cases_unknown_keys()))
def test_unknown_key_is_refused_at_every_level(tmp_path, program, config, key):
    assert_refused(replay(tmp_path, program, config), key, unknown=True)


@pytest.mark.parametrize("program,config,key", list(cases_nulls(top_level=False)))
def test_null_inside_a_list_entry_or_nested_object_is_refused(tmp_path, program, config, key):
    """`"key": null` in a hand-read entry is a wrong JSON type (util::UnsignedField, json_text.h)."""
    assert_refused(replay(tmp_path, program, config), key)


@pytest.mark.parametrize("program,config,key", list(cases_nulls(top_level=True)))
def test_null_top_level_key_is_the_key_left_out(tmp_path, program, config, key):
    """A config's top-level keys are read as a scenario's are (config_reader.h,
    spec_reader.h Reader::Has): `null` is the key left out, the default, as
    docs/SCENARIO.md says of every key. The same dump either way; a key that
    is required is refused either way."""
    with_null = replay(tmp_path, program, config)
    left_out = replay(tmp_path, program, without(config, key))
    assert with_null.returncode == left_out.returncode
    assert with_null.stdout == left_out.stdout
