"""The protocol seam (issue 25): a protocol is its folder, protocols/<name>/.

The shared code learns about protocols only from the registry the build
generates from protocols/*/protocol.json, so no protocol is named in it:
these tests read the shared C++ (src/, p4model/), the build files and the
scripts that used to keep protocol lists, and fail on any protocol name
outside comments and string literals' prose. They also check that every
protocol folder has the parts docs/ADDING-A-PROTOCOL.md lists.
"""

import json
import re

from helpers import SOURCE_DIR

PROTOCOLS = sorted(p.parent.name for p in (SOURCE_DIR / "protocols").glob("*/protocol.json"))
# The workload types the scenario core itself knows (allreduce / permutation / none) and
# background traffic's own "permutation" peers are not protocol references.
NAMES = [p for p in PROTOCOLS if p != "permutation"]


def strip_line_comment(line: str) -> str:
    """The line up to a // that is not inside a string literal."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and line.startswith("//", i):
            return line[:i]
    return line


def code_of(text: str, comment: str) -> str:
    """`text` without comments (C++ // and /* */, or # lines for CMake/shell)."""
    if comment == "//":
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        return "\n".join(strip_line_comment(line) for line in text.splitlines())
    return "\n".join(line.split("#")[0] for line in text.splitlines())




def shared_files():
    for folder in ("src", "p4model"):
        for f in sorted((SOURCE_DIR / folder).rglob("*")):
            if f.suffix in (".cc", ".h"):
                yield f, "//"
    for f in [SOURCE_DIR / "CMakeLists.txt", *sorted((SOURCE_DIR / "cmake").glob("*.cmake")),
              *sorted((SOURCE_DIR / f).joinpath("CMakeLists.txt") for f in ("src", "src/ina", "p4model", "tests")),
              *sorted((SOURCE_DIR / "scripts").glob("*.sh"))]:
        yield f, "#"


def test_no_protocol_is_named_in_shared_code():
    found = []
    word = re.compile(r"\b(" + "|".join(map(re.escape, NAMES)) + r")\b", re.I)
    for f, comment in shared_files():
        code = code_of(f.read_text(encoding="utf-8"), comment)
        for n, line in enumerate(code.splitlines(), 1):
            # Identifiers and strings alike: a list of protocols, a branch on one, a path into one.
            for m in word.finditer(line):
                found.append(f"{f.relative_to(SOURCE_DIR)}:{n}: {m.group(0)}: {line.strip()[:100]}")
    assert not found, "protocol names in shared code:\n" + "\n".join(found)


def test_every_protocol_folder_has_its_parts():
    for name in PROTOCOLS:
        d = SOURCE_DIR / "protocols" / name
        meta = json.loads((d / "protocol.json").read_text(encoding="utf-8"))
        assert meta["name"] == name
        assert (d / "README.md").is_file(), name
        assert (d / "host" / "workload.cc").is_file(), name  # MakeWorkload, kChecks
        assert (d / "host" / "spec.cc").is_file(), name      # ParseWorkload
        if meta["dataplane"]:
            assert meta["dataplane"] == name
            assert (d / "dataplane" / "program.cc").is_file(), name
            assert list((d / "tests").glob("dataplane_*.cc")), name
        if meta.get("model_check"):  # inasim-p4 check: p4model/common/model_check.h
            assert meta["dataplane"], name
            for part in ("describe.cc", "model_bindings.cc", "upstream-manifest.json"):
                assert (d / "dataplane" / part).is_file(), (name, part)
        for run in meta["smoke"]:
            assert (SOURCE_DIR / run[0]).is_file(), (name, run[0])
        if meta["workload_type"] == "allreduce":
            assert {"workload", "recovery"} <= set(meta["fault_matrix"]), name
